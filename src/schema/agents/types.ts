import { z } from 'zod';
import { builder } from '../../builder.js';
import { roleScope } from '../../domain/agents/role-binding.js';
import { forbidden } from '../../domain/errors.js';

export const TASK_STATUSES = [
  'pending',
  'running',
  'completed',
  'failed',
  'cancelled',
  'awaiting_approval',
] as const;

export const TaskStatusEnum = builder.enumType('TaskStatus', {
  description:
    'pending → running → completed | failed; pending → cancelled; running → awaiting_approval (the agent ' +
    'holding it asked for a decision: no lease, not running, not failed) → pending once decided.',
  values: TASK_STATUSES,
});

/** A role as callers write it: matched case-insensitively, answered in lower case; unknown roles are 404. */
export const roleArg = z
  .string()
  .max(64)
  .regex(/^[A-Za-z][A-Za-z0-9_-]*$/);

export const AgentRoleRef = builder.prismaObject('AgentRole', {
  description: 'An agent role of the tenant: the 8 built-in C-suite roles and any registered ones.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.exposeString('role'),
    displayName: t.exposeString('displayName', { nullable: true }),
    builtIn: t.exposeBoolean('builtIn'),
    paused: t.exposeBoolean('paused', {
      description: 'Tasks of a paused role are queued but cannot be claimed.',
    }),
    pausedAt: t.expose('pausedAt', { type: 'DateTime', nullable: true }),
    pausedBy: t.string({
      nullable: true,
      description: 'actor_user_id of the pause in force; null while not paused.',
      resolve: (role) => (role.paused ? role.pausedBy : null),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObject('Attachment', {
  description: 'A file sent with a chat message; its bytes are stored once per content under DATA_DIR.',
  fields: (t) => ({
    id: t.exposeID('id'),
    position: t.exposeInt('position'),
    sha256: t.exposeString('sha256'),
    mimeType: t.exposeString('mimeType'),
    filename: t.exposeString('filename', {
      nullable: true,
      description: 'As sent, with personal data redacted.',
    }),
    size: t.exposeInt('size', { description: 'Bytes.' }),
    data: t.string({
      nullable: true,
      description: 'The bytes, base64-encoded; readable only by the agent that holds the running task.',
      resolve: async (attachment, _args, context) => {
        const task = context.viewer
          ? await context.prisma.task.findFirst({
              where: { id: attachment.taskId, ...roleScope(context.viewer) },
              select: { status: true, claimedBy: true },
            })
          : null;
        if (task?.status !== 'running' || task.claimedBy !== context.viewer?.sub) {
          throw forbidden('Attachment bytes are readable only by the agent running the task');
        }
        const bytes = await context.services.blobs.get(attachment.sha256);
        return bytes ? bytes.toString('base64') : null;
      },
    }),
  }),
});

export const RecommendationRef = builder.prismaObject('Recommendation', {
  description: 'A recommendation an agent made while completing a task.',
  fields: (t) => ({
    id: t.exposeID('id'),
    taskId: t.exposeID('taskId'),
    role: t.exposeString('role'),
    summary: t.exposeString('summary'),
    predictedOutcome: t.exposeString('predictedOutcome', { nullable: true }),
    accepted: t.exposeBoolean('accepted', { nullable: true, description: 'Null until decided.' }),
    decidedAt: t.expose('decidedAt', { type: 'DateTime', nullable: true }),
    decidedBy: t.exposeString('decidedBy', { nullable: true }),
    outcomeMatched: t.exposeBoolean('outcomeMatched', {
      nullable: true,
      description: 'Null until the outcome is recorded.',
    }),
    outcomeRecordedAt: t.expose('outcomeRecordedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

interface TokenUsage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

const TokenUsageRef = builder.objectRef<TokenUsage>('TokenUsage').implement({
  description:
    'Tokens of a completed task by kind: inputTokens + outputTokens = tokensUsed; cachedInputTokens is part of inputTokens, reasoningTokens part of outputTokens.',
  fields: (t) => ({
    inputTokens: t.expose('inputTokens', { type: 'SafeInt' }),
    cachedInputTokens: t.expose('cachedInputTokens', { type: 'SafeInt' }),
    outputTokens: t.expose('outputTokens', { type: 'SafeInt' }),
    reasoningTokens: t.expose('reasoningTokens', { type: 'SafeInt' }),
  }),
});

export const TaskRef = builder.prismaObject('Task', {
  description: 'A unit of work for an agent role, queued by a chat message.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.exposeString('role'),
    status: t.expose('status', { type: TaskStatusEnum }),
    message: t.exposeString('message'),
    threadId: t.exposeID('threadId', { nullable: true }),
    createdBy: t.exposeString('createdBy'),
    attempts: t.exposeInt('attempts', { description: 'Claims so far; a task gets at most 3.' }),
    claimedBy: t.exposeString('claimedBy', { nullable: true }),
    leaseExpiresAt: t.expose('leaseExpiresAt', { type: 'DateTime', nullable: true }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    tokensUsed: t.field({
      type: 'SafeInt',
      nullable: true,
      // Stored as BIGINT; what completeTask accepts (at most 2^53 - 1) reads back exactly.
      resolve: (task) => (task.tokensUsed === null ? null : Number(task.tokensUsed)),
    }),
    costUsd: t.float({
      nullable: true,
      description: 'US dollars, kept exactly to the micro-dollar.',
      resolve: (task) => (task.costUsd === null ? null : task.costUsd.toNumber()),
    }),
    usage: t.field({
      type: TokenUsageRef,
      nullable: true,
      description: 'The breakdown of tokensUsed by kind; null when the agent reported none.',
      resolve: (task) =>
        task.inputTokens === null || task.outputTokens === null
          ? null
          : {
              inputTokens: Number(task.inputTokens),
              cachedInputTokens: Number(task.cachedInputTokens ?? 0),
              outputTokens: Number(task.outputTokens),
              reasoningTokens: Number(task.reasoningTokens ?? 0),
            },
    }),
    output: t.exposeString('output', { nullable: true }),
    error: t.exposeString('error', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    attachments: t.relation('attachments', { query: { orderBy: { position: 'asc' } } }),
    recommendations: t.relation('recommendations', {
      query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

builder.prismaObject('ThreadMessage', {
  fields: (t) => ({
    id: t.exposeID('id'),
    author: t.exposeString('author', { description: 'Token subject of the sender.' }),
    body: t.exposeString('body'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    attachments: t.relation('attachments', { query: { orderBy: { position: 'asc' } } }),
  }),
});

export const ThreadRef = builder.prismaObject('Thread', {
  description: 'A conversation with one agent role.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.exposeString('role'),
    createdBy: t.exposeString('createdBy'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    messages: t.relation('messages', { query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } }),
    tasks: t.relation('tasks', { query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } }),
  }),
});
