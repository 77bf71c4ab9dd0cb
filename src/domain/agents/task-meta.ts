/**
 * The `_meta` key of an MCP `tools/call` that names the task a connector tool is called for: the MCP face
 * passes it to `invokeConnector` as `taskId`, so the repeated-call breaker counts the call (breakers.ts).
 */
export const TASK_META_KEY = 'boardroom/task_id';
