import {
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Role,
  SendMessageRequest,
  SendMessageResponse,
  Task as TaskCodec,
  TaskPushNotificationConfig,
  TaskState,
} from '@a2a-js/sdk';
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Execution } from '../mcp/execute.js';
import { httpStatusOf, isInputCoercionError } from '../src/errors.js';
import type { A2aPushConfigFieldsFragment, A2aTaskFieldsFragment } from '../src/generated/graphql/graphql.js';
import { agentCardOf, type CardAuth } from './card.js';
import { A2A_ERRORS, A2aError, type Compiled } from './errors.js';
import { a2aTaskOf, taskStatusOf } from './wire.js';

/** The most parts one message may carry (its text must still fit the chat's 4,096 characters). */
export const MAX_MESSAGE_PARTS = 8;
/** The largest ListTasks page. */
const MAX_PAGE_SIZE = 100;

/** What a method needs of its request: the path's tenant and role, the caller's runs of operations. */
export interface MethodContext {
  origin: string;
  tenantId: string;
  role: string;
  auth: CardAuth;
  /** Runs an operation for this request. */
  execution: Execution;
  /** Runs a side effect keyed for idempotency (the SendMessage's messageId). */
  keyedExecution(key: string): Execution;
  compiled: Compiled;
}

export type Params = Record<string, unknown>;

/** The first error of a result as the A2A error it is; `notFound` for NOT_FOUND (the method's own). */
export function failureOf(error: GraphQLError, notFound: () => A2aError): A2aError {
  const code = error.extensions?.code;
  if (code === 'BAD_USER_INPUT' || isInputCoercionError(error)) {
    return new A2aError(A2A_ERRORS.INVALID_PARAMS, error.message, {
      ...(error.extensions?.detail ? { detail: error.extensions.detail } : {}),
      ...(error.extensions?.reason ? { reason: error.extensions.reason } : {}),
    });
  }
  if (code === 'NOT_FOUND') return notFound();
  const { http: _http, ...facts } = error.extensions ?? {};
  return new A2aError(A2A_ERRORS.SERVER_ERROR, error.message, { ...facts, status: httpStatusOf(error) });
}

function dataOf<T>(result: ExecutionResult, notFound: () => A2aError): T {
  const error = result.errors?.[0];
  if (error) throw failureOf(error, notFound);
  return result.data as T;
}

export const taskNotFound = (id: string) => () =>
  new A2aError(A2A_ERRORS.TASK_NOT_FOUND, `Task not found: ${id}`, { taskId: id });

const sameRole = (task: A2aTaskFieldsFragment, role: string) =>
  task.role.toLowerCase() === role.toLowerCase();

export function requireString(params: Params, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || value === '') {
    throw new A2aError(A2A_ERRORS.INVALID_PARAMS, `${name} is required: a non-empty string`);
  }
  return value;
}

/** A task of this role by id, or TaskNotFound (another role's, another tenant's, none). */
export async function readTask(context: MethodContext, id: string): Promise<A2aTaskFieldsFragment> {
  const { compiled } = context;
  const data = dataOf<{ task: A2aTaskFieldsFragment | null }>(
    await context.execution.run({ ...compiled.getTask, variables: { id } }),
    taskNotFound(id),
  );
  if (!data.task || !sameRole(data.task, context.role)) throw taskNotFound(id)();
  return data.task;
}

/** A message as the chat's input. */
interface ChatInput {
  message: string;
  attachments?: { data: string; filename: string | undefined; mimeType: string }[];
  threadId?: string;
}

/** The chat input a message is: its text parts joined, its file parts (bytes) attachments. */
function chatInputOf(request: SendMessageRequest): ChatInput {
  const message = request.message;
  if (!message || message.parts.length === 0) {
    throw new A2aError(A2A_ERRORS.INVALID_PARAMS, 'message is required, with at least one part');
  }
  if (!message.messageId) throw new A2aError(A2A_ERRORS.INVALID_PARAMS, 'message.messageId is required');
  if (message.role !== Role.ROLE_USER) {
    throw new A2aError(A2A_ERRORS.INVALID_PARAMS, 'message.role must be ROLE_USER');
  }
  if (message.parts.length > MAX_MESSAGE_PARTS) {
    throw new A2aError(A2A_ERRORS.INVALID_PARAMS, `A message carries at most ${MAX_MESSAGE_PARTS} parts`);
  }
  if (message.taskId) {
    throw new A2aError(
      A2A_ERRORS.UNSUPPORTED_OPERATION,
      'A task takes no further messages: a decision it waits for is answered through the approvals API; send a new message (with its contextId) for new work',
    );
  }
  if (request.configuration?.taskPushNotificationConfig) {
    // Its answer is the task, with no place for the signing secret a config's deliveries are checked with.
    throw new A2aError(
      A2A_ERRORS.UNSUPPORTED_OPERATION,
      'Set push notifications with CreateTaskPushNotificationConfig once the task exists: its answer carries the signing secret',
    );
  }
  const texts: string[] = [];
  const attachments: NonNullable<ChatInput['attachments']> = [];
  for (const part of message.parts) {
    if (part.content?.$case === 'text') texts.push(part.content.value);
    else if (part.content?.$case === 'raw') {
      attachments.push({
        data: Buffer.from(part.content.value).toString('base64'),
        filename: part.filename || undefined,
        mimeType: part.mediaType || 'application/octet-stream',
      });
    } else {
      throw new A2aError(
        A2A_ERRORS.CONTENT_TYPE_NOT_SUPPORTED,
        'Only text parts and file parts with their bytes (raw) are accepted',
      );
    }
  }
  return {
    message: texts.join('\n\n'),
    ...(attachments.length > 0 ? { attachments } : {}),
    ...(message.contextId ? { threadId: message.contextId } : {}),
  };
}

/** What the chat receipt of a message tells of its task. */
interface Receipt {
  taskId: string;
  agentRole: string;
  status: A2aTaskFieldsFragment['status'];
  threadId: string | null;
  createdAt: string;
}

/**
 * Queues the message for the role (once per messageId) and answers its task as it was queued: pending, its
 * message the chat's, no output, decision or deliverable yet (read it with GetTask for what happened since).
 */
export async function queueMessage(
  context: MethodContext,
  request: SendMessageRequest,
): Promise<A2aTaskFieldsFragment> {
  const input = chatInputOf(request);
  const messageId = request.message?.messageId ?? '';
  const { compiled } = context;
  const result = await context
    .keyedExecution(`a2a:${messageId}`)
    .run({ ...compiled.sendMessage, variables: { role: context.role, input } });
  const { sendChatMessage: receipt } = dataOf<{ sendChatMessage: Receipt }>(
    result,
    () =>
      new A2aError(
        A2A_ERRORS.INVALID_PARAMS,
        result.errors?.[0]?.message ?? 'Not found',
        input.threadId ? { contextId: input.threadId } : undefined,
      ),
  );
  return {
    id: receipt.taskId,
    role: receipt.agentRole,
    status: receipt.status,
    threadId: receipt.threadId,
    message: input.message,
    output: null,
    error: null,
    createdAt: receipt.createdAt,
    startedAt: null,
    finishedAt: null,
    updatedAt: receipt.createdAt,
  };
}

async function sendMessage(context: MethodContext, params: Params): Promise<unknown> {
  const request = SendMessageRequest.fromJSON(params);
  const task = await queueMessage(context, request);
  const historyLength = request.configuration?.historyLength;
  return SendMessageResponse.toJSON({ payload: { $case: 'task', value: a2aTaskOf(task, historyLength) } });
}

async function getTask(context: MethodContext, params: Params): Promise<unknown> {
  const request = GetTaskRequest.fromJSON(params);
  const id = requireString(params, 'id');
  return TaskCodec.toJSON(a2aTaskOf(await readTask(context, id), request.historyLength));
}

async function listTasks(context: MethodContext, params: Params): Promise<unknown> {
  const request = ListTasksRequest.fromJSON(params);
  const pageSize = request.pageSize ?? 50;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new A2aError(A2A_ERRORS.INVALID_PARAMS, `pageSize must be 1 to ${MAX_PAGE_SIZE}`);
  }
  let status: string | undefined;
  if (request.status !== TaskState.TASK_STATE_UNSPECIFIED) {
    status = taskStatusOf(request.status);
    if (!status) throw new A2aError(A2A_ERRORS.INVALID_PARAMS, 'status: no task is ever in this state');
  }
  const { compiled } = context;
  const data = dataOf<{
    tasks: { nextCursor: string | null; totalCount: number; nodes: A2aTaskFieldsFragment[] };
  }>(
    await context.execution.run({
      ...compiled.listTasks,
      variables: {
        role: context.role,
        first: pageSize,
        ...(status ? { status } : {}),
        // A context is a thread (a2aTaskOf).
        ...(request.contextId ? { threadId: request.contextId } : {}),
        // The deliverables (a file's bytes) only when the artifacts are asked for.
        withArtifacts: request.includeArtifacts === true,
        ...(request.pageToken ? { after: request.pageToken } : {}),
      },
    }),
    () => new A2aError(A2A_ERRORS.SERVER_ERROR, 'Not found'),
  );
  const tasks = data.tasks.nodes.map((task) => {
    const a2aTask = a2aTaskOf(task, request.historyLength);
    return request.includeArtifacts ? a2aTask : { ...a2aTask, artifacts: [] };
  });
  return ListTasksResponse.toJSON({
    tasks,
    nextPageToken: data.tasks.nextCursor ?? '',
    pageSize,
    // Every task the filter matches, on every page.
    totalSize: data.tasks.totalCount,
  });
}

async function cancelTask(context: MethodContext, params: Params): Promise<unknown> {
  CancelTaskRequest.fromJSON(params);
  const id = requireString(params, 'id');
  const task = await readTask(context, id);
  if (['completed', 'failed', 'cancelled'].includes(task.status)) {
    throw new A2aError(A2A_ERRORS.TASK_NOT_CANCELABLE, `Task ${id} has ended (${task.status})`, {
      taskId: id,
    });
  }
  const { compiled } = context;
  const result = await context.execution.run({ ...compiled.cancelTask, variables: { id } });
  const error = result.errors?.[0];
  if (error?.extensions?.code === 'CONFLICT') {
    throw new A2aError(A2A_ERRORS.TASK_NOT_CANCELABLE, error.message, { taskId: id });
  }
  const data = dataOf<{ cancelTask: A2aTaskFieldsFragment }>(result, taskNotFound(id));
  return TaskCodec.toJSON(a2aTaskOf(data.cancelTask));
}

async function extendedAgentCard(context: MethodContext): Promise<unknown> {
  const { compiled } = context;
  const data = dataOf<{ agent: Parameters<typeof agentCardOf>[4] | null }>(
    await context.execution.run({ ...compiled.agentRole, variables: { role: context.role } }),
    () => new A2aError(A2A_ERRORS.SERVER_ERROR, 'Not found'),
  );
  if (!data.agent)
    throw new A2aError(A2A_ERRORS.EXTENDED_CARD_NOT_CONFIGURED, 'The tenant has no such agent role');
  return agentCardOf(context.origin, context.tenantId, context.role, context.auth, data.agent);
}

/** The scheme of the `authentication` a created config answers: its deliveries are signed as our webhooks. */
export const PUSH_AUTH_SCHEME = 'standard-webhooks';

/** A push notification config as A2A's: a task webhook; its secret only when just created. */
function pushConfigOf(
  context: MethodContext,
  webhook: A2aPushConfigFieldsFragment,
  secret?: string,
): TaskPushNotificationConfig {
  return {
    tenant: context.tenantId,
    id: webhook.id,
    taskId: webhook.taskId ?? '',
    url: webhook.url,
    token: webhook.notificationToken ?? '',
    authentication: secret ? { scheme: PUSH_AUTH_SCHEME, credentials: secret } : undefined,
  };
}

/** A config of this role's task, or TaskNotFound (as the SDK's own handler answers a missing config). */
const configNotFound = (taskId: string, id: string) => () =>
  new A2aError(A2A_ERRORS.TASK_NOT_FOUND, `Push notification config ${id} not found for task ${taskId}`, {
    taskId,
    id,
  });

/**
 * The config the params ask for, as a task webhook: the URL judged as every webhook's, the client's token
 * sent back with each delivery. A client's own `authentication` is refused: deliveries are signed with the
 * secret the answer carries, not with the client's credentials.
 */
async function createPushConfig(context: MethodContext, params: Params): Promise<unknown> {
  const config = TaskPushNotificationConfig.fromJSON(params);
  const taskId = requireString(params, 'taskId');
  const url = requireString(params, 'url');
  if (config.authentication && (config.authentication.credentials || config.authentication.scheme)) {
    throw new A2aError(
      A2A_ERRORS.INVALID_PARAMS,
      `authentication is not taken: deliveries are signed (${PUSH_AUTH_SCHEME}, docs/webhooks.md) with the secret answered in the created config's authentication`,
    );
  }
  const { compiled } = context;
  const data = dataOf<{ createTaskWebhook: { secret: string; webhook: A2aPushConfigFieldsFragment } }>(
    await context.execution.run({
      ...compiled.createPushConfig,
      variables: {
        input: { taskId, role: context.role, url, ...(config.token ? { token: config.token } : {}) },
      },
    }),
    taskNotFound(taskId),
  );
  const { webhook, secret } = data.createTaskWebhook;
  return TaskPushNotificationConfig.toJSON(pushConfigOf(context, webhook, secret));
}

async function getPushConfig(context: MethodContext, params: Params): Promise<unknown> {
  GetTaskPushNotificationConfigRequest.fromJSON(params);
  const taskId = requireString(params, 'taskId');
  const id = requireString(params, 'id');
  const { compiled } = context;
  const data = dataOf<{ taskWebhook: A2aPushConfigFieldsFragment }>(
    await context.execution.run({
      ...compiled.getPushConfig,
      variables: { taskId, id, role: context.role },
    }),
    configNotFound(taskId, id),
  );
  return TaskPushNotificationConfig.toJSON(pushConfigOf(context, data.taskWebhook));
}

/** A task's configs, all in one page (a task has at most a few); TaskNotFound for a task not the caller's. */
async function listPushConfigs(context: MethodContext, params: Params): Promise<unknown> {
  ListTaskPushNotificationConfigsRequest.fromJSON(params);
  const taskId = requireString(params, 'taskId');
  await readTask(context, taskId);
  const { compiled } = context;
  const data = dataOf<{ taskWebhooks: A2aPushConfigFieldsFragment[] }>(
    await context.execution.run({
      ...compiled.listPushConfigs,
      variables: { taskId, role: context.role },
    }),
    taskNotFound(taskId),
  );
  return ListTaskPushNotificationConfigsResponse.toJSON({
    configs: data.taskWebhooks.map((webhook) => pushConfigOf(context, webhook)),
    nextPageToken: '',
  });
}

async function deletePushConfig(context: MethodContext, params: Params): Promise<unknown> {
  DeleteTaskPushNotificationConfigRequest.fromJSON(params);
  const taskId = requireString(params, 'taskId');
  const id = requireString(params, 'id');
  const { compiled } = context;
  dataOf(
    await context.execution.run({
      ...compiled.deletePushConfig,
      variables: { taskId, id, role: context.role },
    }),
    configNotFound(taskId, id),
  );
  return {};
}

/** The A2A methods (JSON-RPC binding, protocol 1.0), each a GraphQL operation or two. */
export const methods: Record<string, (context: MethodContext, params: Params) => Promise<unknown>> = {
  SendMessage: sendMessage,
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancelTask,
  GetExtendedAgentCard: extendedAgentCard,
  CreateTaskPushNotificationConfig: createPushConfig,
  GetTaskPushNotificationConfig: getPushConfig,
  ListTaskPushNotificationConfigs: listPushConfigs,
  DeleteTaskPushNotificationConfig: deletePushConfig,
};
