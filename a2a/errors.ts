import type { GraphQLParams } from 'graphql-yoga';
import { type CompiledOperation, compileOperation } from '../rest/compile.js';
import { schema } from '../src/schema/index.js';
import {
  A2aAgentRole,
  A2aCancelTask,
  A2aCreatePushConfig,
  A2aDeletePushConfig,
  A2aGetPushConfig,
  A2aGetTask,
  A2aListPushConfigs,
  A2aListTasks,
  A2aSendMessage,
  A2aTaskUpdates,
} from './operations.js';

/** JSON-RPC's codes and A2A's own (A2A 1.0, JSON-RPC binding). */
export const A2A_ERRORS = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  SERVER_ERROR: -32000,
  TASK_NOT_FOUND: -32001,
  TASK_NOT_CANCELABLE: -32002,
  PUSH_NOT_SUPPORTED: -32003,
  UNSUPPORTED_OPERATION: -32004,
  CONTENT_TYPE_NOT_SUPPORTED: -32005,
  EXTENDED_CARD_NOT_CONFIGURED: -32007,
  VERSION_NOT_SUPPORTED: -32009,
} as const;

/** An A2A method's refusal: a JSON-RPC error with its code, message and facts. */
export class A2aError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
    /** The HTTP status and headers of the answer, when not 200 (a refused stream: 429 with Retry-After). */
    readonly http?: { status: number; headers?: Record<string, string> },
  ) {
    super(message);
  }
}

/** A JSON-RPC error answer. */
export const jsonRpcError = (
  id: unknown,
  error: A2aError,
  status = error.http?.status ?? 200,
  headers: Record<string, string> = error.http?.headers ?? {},
) =>
  Response.json(
    {
      jsonrpc: '2.0',
      id: id ?? null,
      error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) },
    },
    { status, headers },
  );

type Run = Pick<GraphQLParams, 'query' | 'operationName'>;
const runOf = (operation: CompiledOperation): Run => ({
  query: operation.query,
  operationName: operation.operationName,
});

/** The operations the A2A methods run, compiled once. */
export function compileA2aOperations() {
  const compile = (document: unknown, name: string) => compileOperation(document, schema, `A2A ${name}`);
  const operations = {
    sendMessage: compile(A2aSendMessage, 'SendMessage'),
    getTask: compile(A2aGetTask, 'GetTask'),
    listTasks: compile(A2aListTasks, 'ListTasks'),
    cancelTask: compile(A2aCancelTask, 'CancelTask'),
    agentRole: compile(A2aAgentRole, 'agent card'),
    taskUpdates: compile(A2aTaskUpdates, 'task updates'),
    createPushConfig: compile(A2aCreatePushConfig, 'CreateTaskPushNotificationConfig'),
    getPushConfig: compile(A2aGetPushConfig, 'GetTaskPushNotificationConfig'),
    listPushConfigs: compile(A2aListPushConfigs, 'ListTaskPushNotificationConfigs'),
    deletePushConfig: compile(A2aDeletePushConfig, 'DeleteTaskPushNotificationConfig'),
  };
  return {
    operations: Object.values(operations),
    sendMessage: runOf(operations.sendMessage),
    getTask: runOf(operations.getTask),
    listTasks: runOf(operations.listTasks),
    cancelTask: runOf(operations.cancelTask),
    agentRole: runOf(operations.agentRole),
    taskUpdates: runOf(operations.taskUpdates),
    createPushConfig: runOf(operations.createPushConfig),
    getPushConfig: runOf(operations.getPushConfig),
    listPushConfigs: runOf(operations.listPushConfigs),
    deletePushConfig: runOf(operations.deletePushConfig),
  };
}

export type Compiled = ReturnType<typeof compileA2aOperations>;
