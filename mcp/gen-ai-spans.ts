import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ConnectorEndpoint } from './connector-tools.js';

// The OpenTelemetry API alone: without tracing configured, its tracer is a no-op and no span exists.
const tracer = trace.getTracer('boardroom');

/**
 * A connector tool call as the GenAI conventions' `execute_tool` span, child of the MCP request's span (and
 * so of the runtime's own `execute_tool` span, whose `traceparent` the request carries).
 */
export function executeToolSpan(
  tool: ConnectorEndpoint,
  call: () => Promise<CallToolResult>,
): Promise<CallToolResult> {
  return tracer.startActiveSpan(
    `execute_tool ${tool.name}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': tool.name,
        'gen_ai.tool.type': 'extension',
        'boardroom.connector_id': tool.connectorId,
        'boardroom.connector.endpoint': `${tool.method} ${tool.path}`,
      },
    },
    async (span) => {
      try {
        const result = await call();
        if (result.isError) {
          span.setAttribute('error.type', 'tool_error');
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
        return result;
      } catch (error) {
        span.setAttribute('error.type', error instanceof Error ? error.constructor.name : '_OTHER');
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * The task an agent tool's answer names (a claimed task, a completed one) on the MCP request's span:
 * `gen_ai.agent.name` (its role), `gen_ai.conversation.id` (its thread) and `boardroom.task_id`.
 */
export function tagTaskOfAnswer(data: Record<string, unknown> | null | undefined) {
  const span = trace.getActiveSpan();
  if (!span?.isRecording() || !data) return;
  const answer = Object.values(data)[0] as Record<string, unknown> | null | undefined;
  const task = (answer && typeof answer.task === 'object' ? answer.task : answer) as
    | Record<string, unknown>
    | null
    | undefined;
  if (!task || typeof task.id !== 'string') return;
  span.setAttribute('boardroom.task_id', task.id);
  if (typeof task.role === 'string') span.setAttribute('gen_ai.agent.name', task.role);
  if (typeof task.threadId === 'string') span.setAttribute('gen_ai.conversation.id', task.threadId);
}
