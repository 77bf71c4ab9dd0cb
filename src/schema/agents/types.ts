import { z } from 'zod';
import { builder } from '../../builder.js';
import { MAX_DELEGATION_DEPTH, type ResumeOn } from '../../domain/agents/delegation.js';
import { delegationTargets, readOrgChart } from '../../domain/agents/org-chart.js';
import { roleScope } from '../../domain/agents/role-binding.js';
import { type TreeCost, threadCost, treeCost } from '../../domain/agents/task-tree.js';
import { forbidden } from '../../domain/errors.js';

export const TASK_STATUSES = [
  'pending',
  'running',
  'completed',
  'failed',
  'cancelled',
  'awaiting_approval',
  'waiting',
  'in_review',
] as const;

export const TaskStatusEnum = builder.enumType('TaskStatus', {
  description:
    'pending → running → completed | failed; pending → cancelled; running → awaiting_approval (the agent ' +
    'holding it asked for a decision: no lease, not running, not failed) → pending once decided; running → ' +
    'waiting (it delegated sub-tasks: no lease) → pending once they ended (or one failed, when it asked so); ' +
    'running → in_review (completed by its agent, charged, but its role’s policy wants a reviewer’s acceptance) ' +
    '→ completed once accepted, or pending (failed on its last attempt) once rejected. ' +
    'A task that has not ended can be cancelled, with everything delegated under it.',
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
    reportsTo: t.exposeString('reportsTo', {
      nullable: true,
      description: 'The role it reports to in the org chart; null for the CEO, who reports to the board.',
    }),
    delegatesAcross: t.exposeBoolean('delegatesAcross', {
      description:
        'Whether its tasks may delegate across, to roles with the same manager, besides down the chart.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.prismaObjectField('AgentRole', 'reports', (t) =>
  t.field({
    type: [AgentRoleRef],
    description: 'The roles that report to it directly, by name.',
    resolve: (role, _args, context) =>
      context.prisma.agentRole.findMany({
        where: { tenantId: role.tenantId, reportsTo: role.role },
        orderBy: { role: 'asc' },
      }),
  }),
);

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

export const ResumeOnEnum = builder.enumType('ResumeOn', {
  description: 'When a task waiting for its sub-tasks returns to its role’s queue.',
  values: {
    ALL_ENDED: { value: 'all_ended', description: 'Once every sub-task has ended.' },
    FIRST_FAILURE: {
      value: 'first_failure',
      description: 'Once every sub-task has ended, or as soon as one fails.',
    },
  } as const,
});

const TreeCostRef = builder.objectRef<TreeCost>('TreeCost').implement({
  description: 'Cost and tokens summed over tasks and everything delegated under them.',
  fields: (t) => ({
    costUsd: t.float({ resolve: (cost) => cost.costUsd.toNumber() }),
    tokensUsed: t.field({ type: 'SafeInt', resolve: (cost) => Number(cost.tokensUsed) }),
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
    parentTaskId: t.exposeID('parentTaskId', {
      nullable: true,
      description: 'The task that delegated it; null for a task queued by a chat message.',
    }),
    routineId: t.exposeID('routineId', {
      nullable: true,
      description: 'The routine whose occurrence queued it; null for any other task.',
    }),
    rootTaskId: t.field({
      type: 'ID',
      description: 'The root of its delegation tree (itself for a root).',
      resolve: (task) => task.rootTaskId ?? task.id,
    }),
    depth: t.exposeInt('depth', { description: 'Levels below its root task (a root: 0).' }),
    roleChain: t.exposeStringList('roleChain', {
      description: 'The roles of the tasks above it, root first: none of them can be delegated to again.',
    }),
    costCapUsd: t.float({
      nullable: true,
      description: 'The most its work may cost (USD), set by whoever delegated it; null: no cap of its own.',
      resolve: (task) => (task.costCapUsd === null ? null : task.costCapUsd.toNumber()),
    }),
    resumeOn: t.field({
      type: ResumeOnEnum,
      nullable: true,
      description: 'While it waits for its sub-tasks: when it returns to the queue.',
      resolve: (task) => (task.resumeOn as ResumeOn | null) ?? null,
    }),
    parent: t.relation('parent', { nullable: true }),
    children: t.relation('children', {
      description:
        'The sub-tasks it delegated, oldest first, with their outputs once they end (readable by whoever reads this task).',
      query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    }),
    treeCost: t.field({
      type: TreeCostRef,
      description: 'What it and everything delegated under it (any depth) have cost so far.',
      resolve: (task, _args, context) => treeCost(context.prisma, task.id),
    }),
    delegationTargets: t.stringList({
      description:
        'The roles it may delegate to now: below its role in the org chart (or across, where allowed), not in its chain, within the depth limit.',
      resolve: async (task, _args, context) => {
        if (task.depth + 1 > MAX_DELEGATION_DEPTH) return [];
        const chain = [...task.roleChain, task.role];
        const chart = await readOrgChart(context.prisma, task.tenantId);
        return delegationTargets(chart, task.role).filter((role) => !chain.includes(role));
      },
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
    cost: t.field({
      type: TreeCostRef,
      description: 'What its tasks and everything they delegated (any depth) have cost so far.',
      resolve: (thread, _args, context) => threadCost(context.prisma, thread.id),
    }),
  }),
});
