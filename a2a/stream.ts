import {
  SendMessageRequest,
  StreamResponse,
  type StreamResponse as StreamResponseType,
  SubscribeToTaskRequest,
  taskStateToJSON,
} from '@a2a-js/sdk';
import { type ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable } from 'graphql-yoga';
import { httpHeadersOf, httpStatusOf } from '../src/errors.js';
import type { A2aTaskFieldsFragment, TaskStatus } from '../src/generated/graphql/graphql.js';
import { A2A_ERRORS, A2aError } from './errors.js';
import {
  failureOf,
  type MethodContext,
  type Params,
  queueMessage,
  readTask,
  requireString,
  taskNotFound,
} from './methods.js';
import { restErrorOf } from './rest-errors.js';
import { a2aStateOf, a2aTaskOf, isTerminal, streamEventsOf } from './wire.js';

/** A comment this often keeps a quiet stream open through proxies that close idle connections. */
export const HEARTBEAT_MS = 15_000;

/** What a streaming method needs besides a method's context: the request's id and its end. */
export interface StreamRequest {
  id: unknown;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /**
   * How each event is written: JSON-RPC's (the default), a JSON-RPC response with the request's id; or
   * HTTP+JSON's, the StreamResponse alone, an error as the binding's error body.
   */
  binding?: 'JSONRPC' | 'HTTP+JSON';
}

interface TaskUpdate {
  taskUpdated: { eventId: string; status: TaskStatus; updatedAt: string; task: A2aTaskFieldsFragment | null };
}

const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache',
  'X-Accel-Buffering': 'no',
};

/**
 * Opens the task's updates (the `taskUpdated` subscription, for this task only): the subscription takes one of
 * the caller's stream slots and ends at the token's expiry, as every subscription does. Refused (no slot free)
 * it is an A2A error, 429 with Retry-After.
 */
async function openUpdates(
  context: MethodContext,
  taskId: string,
): Promise<AsyncIterableIterator<ExecutionResult>> {
  const opened = await context.execution.subscribe({
    ...context.compiled.taskUpdates,
    variables: { role: context.role, taskId },
  });
  if (isAsyncIterable(opened)) return opened as AsyncIterableIterator<ExecutionResult>;
  const error = opened.errors?.[0] ?? new GraphQLError('The task’s updates could not be opened');
  if (error.extensions?.code === 'RATE_LIMITED') {
    throw new A2aError(
      A2A_ERRORS.SERVER_ERROR,
      error.message,
      { code: 'RATE_LIMITED' },
      { status: httpStatusOf(error) ?? 429, headers: httpHeadersOf(error) },
    );
  }
  throw failureOf(error, taskNotFound(taskId));
}

/** Whether an update is already told by the snapshot the stream began with (it was read after it). */
function toldBy(snapshot: A2aTaskFieldsFragment, update: TaskUpdate['taskUpdated']): boolean {
  const at = Date.parse(update.updatedAt);
  const seen = Date.parse(snapshot.updatedAt);
  return at < seen || (at === seen && update.status === snapshot.status);
}

/**
 * The SSE answer of a streaming method: each event a JSON-RPC response (the request's id) whose result is a
 * StreamResponse, or on the HTTP+JSON binding the StreamResponse alone (an error: the binding's error body).
 * First the task as it is, then each change of it (TASK_UPDATED) as status updates, a completion's artifacts
 * before its status; the stream ends after a terminal state, or with an error event when the token expires.
 * Closing (the client gone, the end) gives back the subscription, its slot and its bus listener.
 */
function taskStream(
  request: StreamRequest,
  snapshot: A2aTaskFieldsFragment,
  updates: AsyncIterableIterator<ExecutionResult>,
  historyLength: number | undefined,
): Response {
  const encoder = new TextEncoder();
  const frame = (body: Record<string, unknown>, event?: string) =>
    encoder.encode(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(body)}\n\n`);
  const rest = request.binding === 'HTTP+JSON';
  const result = (response: StreamResponseType) =>
    rest
      ? frame(StreamResponse.toJSON(response) as Record<string, unknown>)
      : frame({ jsonrpc: '2.0', id: request.id, result: StreamResponse.toJSON(response) });
  const failure = (error: A2aError) => {
    if (!rest) {
      return frame(
        {
          jsonrpc: '2.0',
          id: request.id,
          error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) },
        },
        'error',
      );
    }
    const { status, body } = restErrorOf(error);
    return frame({ error: { code: status, message: error.message, ...body } }, 'error');
  };
  let heartbeat: NodeJS.Timeout | undefined;
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    request.signal.removeEventListener('abort', close);
    Promise.resolve(updates.return?.()).catch(() => undefined);
  };
  request.signal.addEventListener('abort', close, { once: true });
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(result({ payload: { $case: 'task', value: a2aTaskOf(snapshot, historyLength) } }));
      if (isTerminal(snapshot.status)) {
        close();
        controller.close();
        return;
      }
      heartbeat = setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(': keep-alive\n\n'));
      }, HEARTBEAT_MS);
      heartbeat.unref();
    },
    async pull(controller) {
      if (closed) return;
      for (;;) {
        const step = await updates.next().catch((error: unknown) => {
          close();
          throw error;
        });
        if (closed) return;
        if (step.done) {
          close();
          controller.close();
          return;
        }
        const error = step.value.errors?.[0];
        if (error) {
          // The token expired (or the stream could not go on): the client is told why, and the stream ends.
          const status = httpStatusOf(error);
          controller.enqueue(
            failure(
              new A2aError(A2A_ERRORS.SERVER_ERROR, error.message, {
                code: error.extensions?.code,
                ...(status ? { status } : {}),
              }),
            ),
          );
          close();
          controller.close();
          return;
        }
        const update = (step.value.data as TaskUpdate | undefined)?.taskUpdated;
        if (!update?.task || toldBy(snapshot, update)) continue;
        for (const event of streamEventsOf(update.status, update.updatedAt, update.task)) {
          controller.enqueue(result(event));
        }
        if (isTerminal(update.status)) {
          close();
          controller.close();
        }
        return;
      }
    },
    cancel() {
      close();
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** Subscribes to the task's updates, then reads it: a change made meanwhile is in one or the other. */
async function streamTask(
  context: MethodContext,
  request: StreamRequest,
  taskId: string,
  historyLength: number | undefined,
): Promise<Response> {
  const updates = await openUpdates(context, taskId);
  try {
    const snapshot = await readTask(context, taskId);
    return taskStream(request, snapshot, updates, historyLength);
  } catch (error) {
    await updates.return?.();
    throw error;
  }
}

/** SendStreamingMessage: SendMessage, then the task's stream. */
async function sendStreamingMessage(
  context: MethodContext,
  params: Params,
  request: StreamRequest,
): Promise<Response> {
  const message = SendMessageRequest.fromJSON(params);
  const task = await queueMessage(context, message);
  return streamTask(context, request, task.id, message.configuration?.historyLength);
}

/**
 * SubscribeToTask: the task's stream, for a task that has not ended; one that has is refused as the
 * protocol says (UnsupportedOperationError), its final state in the error's data.
 */
async function subscribeToTask(
  context: MethodContext,
  params: Params,
  request: StreamRequest,
): Promise<Response> {
  SubscribeToTaskRequest.fromJSON(params);
  const id = requireString(params, 'id');
  const task = await readTask(context, id);
  if (isTerminal(task.status)) {
    throw new A2aError(
      A2A_ERRORS.UNSUPPORTED_OPERATION,
      `Task ${id} has ended (${task.status}): there is nothing to subscribe to; read it with GetTask`,
      { taskId: id, state: taskStateToJSON(a2aStateOf(task.status)) },
    );
  }
  return streamTask(context, request, id, undefined);
}

/** The A2A methods answered as server-sent events (JSON-RPC binding, protocol 1.0). */
export const streamingMethods: Record<
  string,
  (context: MethodContext, params: Params, request: StreamRequest) => Promise<Response>
> = {
  SendStreamingMessage: sendStreamingMessage,
  SubscribeToTask: subscribeToTask,
};
