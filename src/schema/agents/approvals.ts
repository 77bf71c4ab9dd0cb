import { z } from 'zod';
import { type AuthedContext, builder } from '../../builder.js';
import { roleScope } from '../../domain/agents/role-binding.js';
import { normalizeRole } from '../../domain/agents/roles.js';
import {
  decidesTaskApprovals,
  decideTaskApproval,
  effectiveTaskApprovalStatus,
  findTaskApproval,
  latestTaskApproval,
  MAX_APPROVAL_NOTE_LENGTH,
  MAX_APPROVAL_PAYLOAD_BYTES,
  MAX_APPROVAL_SUMMARY_LENGTH,
  requestTaskApproval,
  TASK_APPROVAL_EXPIRY_DEFAULT_SECONDS,
  TASK_APPROVAL_EXPIRY_MAX_SECONDS,
  TASK_APPROVAL_EXPIRY_MIN_SECONDS,
  TASK_APPROVAL_STATUSES,
  type TaskApprovalStatus,
  type TaskDecision,
  type taskApprovalPayload,
} from '../../domain/agents/task-approvals.js';
import { graphqlArg, idArg, zodField, zodInputType, zodSubscription } from '../args.js';
import { seesApprovalEvent } from '../connectors/approvals.js';
import { afterArg, eventStream } from '../event-stream.js';
import { afterCursor, newestFirst, pageArgsSchema, pageType, toPage } from '../pagination.js';
import { roleArg } from './types.js';

const TaskApprovalStatusEnum = builder.enumType('TaskApprovalStatus', {
  description:
    'pending: waiting for a decision (the task is awaiting_approval); approved, rejected, changes_requested: ' +
    'decided, and the task is back in the queue with the decision attached; expired: nobody decided before ' +
    'expiresAt, and the task is back in the queue with the expired request attached.',
  values: TASK_APPROVAL_STATUSES,
});

export const TaskApprovalRef = builder.prismaObject('TaskApproval', {
  description:
    'A decision the agent holding a running task asked for (requestTaskApproval). Decided by the chairman or an operator.',
  fields: (t) => ({
    id: t.exposeID('id'),
    taskId: t.exposeID('taskId'),
    role: t.exposeString('role'),
    summary: t.exposeString('summary'),
    payload: t.expose('payload', {
      type: 'JSON',
      nullable: true,
      description: 'What the agent attached for the decider; null when it asked without one.',
    }),
    status: t.field({
      type: TaskApprovalStatusEnum,
      description: 'A pending request past expiresAt reads as expired, whether or not it was swept yet.',
      resolve: (row) => effectiveTaskApprovalStatus(row),
    }),
    expiresAt: t.expose('expiresAt', {
      type: 'DateTime',
      description: 'When a request still pending expires (undecided, the task returns to the queue).',
    }),
    requestedBy: t.exposeString('requestedBy', { description: 'Token subject of the agent that asked.' }),
    decidedBy: t.exposeString('decidedBy', { nullable: true }),
    decidedAt: t.expose('decidedAt', { type: 'DateTime', nullable: true }),
    note: t.exposeString('note', {
      nullable: true,
      description: 'What the decider said; always set for a rejection (why) .',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    task: t.relation('task'),
  }),
});

builder.prismaObjectField('Task', 'approval', (t) =>
  t.field({
    type: TaskApprovalRef,
    nullable: true,
    description:
      'The latest decision the task’s agent asked for, with its answer once decided: what the agent reads on its next claim.',
    resolve: (task, _args, context) =>
      context.viewer ? latestTaskApproval({ ...context, viewer: context.viewer }, task.id) : null,
  }),
);

const approvalId = idArg();
const note = z.string().trim().min(1).max(MAX_APPROVAL_NOTE_LENGTH).nullish();

const payloadArg = z.unknown().superRefine((value, context) => {
  const size = Buffer.byteLength(JSON.stringify(value ?? null));
  if (size > MAX_APPROVAL_PAYLOAD_BYTES) {
    context.addIssue({
      code: 'too_big',
      origin: 'string',
      maximum: MAX_APPROVAL_PAYLOAD_BYTES,
      inclusive: true,
      input: null,
      message: `payload is ${size} bytes of JSON; at most ${MAX_APPROVAL_PAYLOAD_BYTES}`,
    });
  }
});

const taskApprovalRequestInput = z.object({
  summary: graphqlArg(z.string().trim().min(1).max(MAX_APPROVAL_SUMMARY_LENGTH), {
    description: `What is to be decided, 1 to ${MAX_APPROVAL_SUMMARY_LENGTH} characters.`,
  }),
  payload: graphqlArg(payloadArg.optional(), {
    type: 'JSON',
    description: `Any JSON the decider needs (a draft, an offer), at most ${MAX_APPROVAL_PAYLOAD_BYTES} bytes serialized. Default null.`,
  }),
  expiresInSeconds: graphqlArg(
    z.number().int().min(TASK_APPROVAL_EXPIRY_MIN_SECONDS).max(TASK_APPROVAL_EXPIRY_MAX_SECONDS).nullish(),
    {
      description: `How long the request waits for a decision, ${TASK_APPROVAL_EXPIRY_MIN_SECONDS} to ${TASK_APPROVAL_EXPIRY_MAX_SECONDS} seconds (30 days); default ${TASK_APPROVAL_EXPIRY_DEFAULT_SECONDS} (24 hours). Undecided by then, it expires and the task returns to the queue.`,
    },
  ),
});
zodInputType('TaskApprovalRequestInput', taskApprovalRequestInput);

builder.mutationField('requestTaskApproval', (t) =>
  t.withAuth({ agent: true }).field({
    type: TaskApprovalRef,
    description:
      'Asks for a decision on a task the calling agent holds: the task becomes awaiting_approval (lease and budget ' +
      'reservation released, the claim not counted against its attempts) until the chairman or an operator decides; ' +
      'then it is pending again with the decision in `Task.approval` (also when nobody decides before it expires: ' +
      'status expired). NOT_FOUND another tenant’s task, CONFLICT a task ' +
      'not running, FORBIDDEN another agent’s; a refusal changes nothing.',
    ...zodField(
      t,
      z.object({
        taskId: idArg(),
        input: taskApprovalRequestInput,
      }),
      (_root, { taskId, input }, context) =>
        requestTaskApproval(context, taskId, {
          summary: input.summary,
          payload: input.payload ?? null,
          expiresInSeconds: input.expiresInSeconds,
        }),
    ),
  }),
);

const TaskApprovalPage = pageType('TaskApproval', TaskApprovalRef);

/** Prisma `where` of the status a reader sees (a pending request past its expiry reads as expired). */
function statusWhere(status: TaskApprovalStatus | null | undefined, now: Date) {
  if (!status) return {};
  if (status === 'pending') return { status, expiresAt: { gt: now } };
  if (status === 'expired') {
    return { OR: [{ status: 'expired' }, { status: 'pending', expiresAt: { lte: now } }] };
  }
  return { status };
}

builder.queryField('taskApprovals', (t) =>
  t.withAuth({ chairman: true, operator: true, agent: true }).field({
    type: TaskApprovalPage,
    description:
      'Decision requests of the tenant’s tasks, newest first (an agent sees only its own); optionally of one status and role.',
    ...zodField(
      t,
      z.object({
        ...pageArgsSchema,
        status: graphqlArg(z.enum(TASK_APPROVAL_STATUSES), { type: TaskApprovalStatusEnum }).nullish(),
        role: roleArg.nullish(),
      }),
      async (_root, { first, after, status, role }, context) => {
        const rows = await context.prisma.taskApproval.findMany({
          where: {
            ...roleScope(context.viewer, role ? normalizeRole(role) : null),
            ...(decidesTaskApprovals(context.viewer) ? {} : { requestedBy: context.viewer.sub }),
            ...statusWhere(status, new Date()),
            ...afterCursor(after),
          },
          orderBy: newestFirst,
          take: first + 1,
        });
        return toPage(rows, first);
      },
    ),
  }),
);

builder.queryField('taskApproval', (t) =>
  t.withAuth({ chairman: true, operator: true, agent: true }).field({
    type: TaskApprovalRef,
    description: 'One decision request (an agent reads only its own); NOT_FOUND otherwise.',
    ...zodField(t, z.object({ id: approvalId }), (_root, { id }, context) => findTaskApproval(context, id)),
  }),
);

const decisions: [string, TaskDecision, string][] = [
  ['approveTaskApproval', 'approve', 'Approves a task’s decision request.'],
  ['rejectTaskApproval', 'reject', 'Rejects a task’s decision request; `note` (required) says why.'],
  [
    'requestTaskApprovalChanges',
    'request_changes',
    'Sends a task’s decision request back for changes (say what in `note`).',
  ],
];

for (const [name, decision, description] of decisions) {
  const noteRule = graphqlArg(
    decision === 'reject' ? z.string().trim().min(1).max(MAX_APPROVAL_NOTE_LENGTH) : note,
    {
      description: `At most ${MAX_APPROVAL_NOTE_LENGTH} characters${decision === 'reject' ? '; required' : ''}.`,
      nullable: true,
    },
  );
  builder.mutationField(name, (t) =>
    t.withAuth({ chairman: true, operator: true }).field({
      type: TaskApprovalRef,
      description: `${description} Never by whoever asked (FORBIDDEN, reason own_request, whatever roles the token carries). The task returns to the queue (pending) with the decision readable in Task.approval. A request already decided answers its first decision unchanged; an expired one is CONFLICT with its status (expired) and changes nothing.`,
      ...zodField(t, z.object({ id: approvalId, note: noteRule }), (_root, { id, note: text }, context) =>
        decideTaskApproval(context, { id, decision, note: text }),
      ),
    }),
  );
}

export const TASK_APPROVAL_EVENT_TYPES = ['TASK_APPROVAL_REQUESTED', 'TASK_APPROVAL_DECIDED'] as const;

type TaskApprovalEventPayload = ReturnType<typeof taskApprovalPayload> & {
  event_id: string;
  tenant_id: string;
  type: (typeof TASK_APPROVAL_EVENT_TYPES)[number];
};

export const TaskApprovalEvent = builder.objectRef<TaskApprovalEventPayload>('TaskApprovalEvent').implement({
  description:
    'A task’s decision request was made (TASK_APPROVAL_REQUESTED) or decided (TASK_APPROVAL_DECIDED). ' +
    'Seen by the chairman and operators, and by the agent that asked; never its summary, payload or note.',
  fields: (t) => ({
    eventId: t.exposeID('event_id'),
    tenantId: t.exposeID('tenant_id'),
    kind: t.exposeString('type', { description: 'TASK_APPROVAL_REQUESTED or TASK_APPROVAL_DECIDED.' }),
    approvalId: t.exposeID('approval_id'),
    taskId: t.exposeID('task_id'),
    role: t.exposeString('role'),
    status: t.field({ type: TaskApprovalStatusEnum, resolve: (event) => event.status as TaskApprovalStatus }),
    requestedBy: t.exposeString('requested_by'),
    decidedBy: t.exposeString('decided_by', { nullable: true }),
  }),
});

const subscriptionArgs = z.object({ role: roleArg.nullish(), after: afterArg });

builder.subscriptionField('taskApprovalChanged', (t) =>
  t.withAuth({ chairman: true, operator: true, agent: true }).field({
    type: TaskApprovalEvent,
    description:
      'New and decided decision requests of the subscriber’s tenant, optionally of one role (an agent gets only its own).',
    ...zodSubscription(t, subscriptionArgs, (_root, { role, after }, context: AuthedContext) => {
      const wanted = role ? normalizeRole(role) : null;
      return eventStream(
        context,
        TASK_APPROVAL_EVENT_TYPES,
        after,
        (event) =>
          seesApprovalEvent(context.viewer, event.payload) && (!wanted || event.payload.role === wanted),
      );
    }),
    resolve: (event) => event.payload as unknown as TaskApprovalEventPayload,
  }),
);
