import { collectSubFields } from '@graphql-tools/utils';
import { type FieldNode, type GraphQLObjectType, type GraphQLResolveInfo, getNamedType } from 'graphql';
import { z } from 'zod';
import { recordAudit } from '../../audit.js';
import { builder } from '../../builder.js';
import {
  MAX_STEPS_PER_REPORT,
  modelStepRule,
  stepsReportRule,
} from '../../domain/agents/completion-rules.js';
import {
  deleteTask,
  isStepViewKey,
  readTaskSteps,
  reportTaskSteps,
  STEP_KINDS,
  type StepsReport,
  type StepView,
} from '../../domain/agents/task-steps.js';
import { idArg, zodField, zodInputType } from '../args.js';
import { TaskRef } from './types.js';

/** Steps one page of a run record holds at most: a whole 1,000-step timeline in one read. */
const MAX_STEPS_PER_PAGE = 1000;

const TaskStepKindEnum = builder.enumType('TaskStepKind', {
  description:
    'What a run-record step records. MODEL_CALL steps are reported by the agent; every other kind is recorded by the gateway from what it saw.',
  values: STEP_KINDS,
});

const TaskStepRef = builder.objectRef<StepView>('TaskStep').implement({
  description:
    'One step of a task’s run record (docs/runs.md), in order (`seq`), of one attempt (claim) of the task.',
  fields: (t) => ({
    id: t.exposeID('id'),
    seq: t.exposeInt('seq', {
      description: 'Its place in the task’s run record, from 1, assigned by the gateway.',
    }),
    attempt: t.exposeInt('attempt', {
      description: 'The claim it happened in, from 1 (0: before any claim).',
    }),
    kind: t.expose('kind', { type: TaskStepKindEnum }),
    source: t.exposeString('source', { description: '`agent` (reported) or `gateway` (observed).' }),
    actor: t.exposeString('actor', { nullable: true, description: 'The token subject that caused it.' }),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    durationMs: t.exposeInt('durationMs', { nullable: true }),
    model: t.exposeString('model', { nullable: true }),
    inputTokens: t.expose('inputTokens', { type: 'SafeInt', nullable: true }),
    cachedInputTokens: t.expose('cachedInputTokens', { type: 'SafeInt', nullable: true }),
    outputTokens: t.expose('outputTokens', { type: 'SafeInt', nullable: true }),
    reasoningTokens: t.expose('reasoningTokens', { type: 'SafeInt', nullable: true }),
    tokens: t.expose('tokens', {
      type: 'SafeInt',
      nullable: true,
      description: 'Tokens this step adds to the task’s (a model call: input + output).',
    }),
    costUsd: t.float({
      description: 'US dollars, to the micro-dollar; 0 for steps that cost nothing.',
      resolve: (step) => Number(step.costUsd),
    }),
    costUsdText: t.string({
      description: 'costUsd exactly, as a decimal string with 6 places.',
      resolve: (step) => step.costUsd,
    }),
    charged: t.exposeBoolean('charged', {
      description:
        'Whether its cost counts in the task’s: a completion or delegation, or a model call of an attempt that ended with one. The costs of a task’s charged steps add up exactly to its costUsd.',
    }),
    finishReason: t.exposeString('finishReason', { nullable: true }),
    connectorId: t.exposeID('connectorId', { nullable: true }),
    endpoint: t.exposeString('endpoint', {
      nullable: true,
      description: 'A connector call’s METHOD and path.',
    }),
    httpStatus: t.exposeInt('httpStatus', { nullable: true }),
    bytes: t.exposeInt('bytes', { nullable: true, description: 'Size of a connector call’s response body.' }),
    outcome: t.exposeString('outcome', { nullable: true }),
    approvalId: t.exposeID('approvalId', { nullable: true }),
    childTaskId: t.exposeID('childTaskId', { nullable: true }),
    modelVersionId: t.exposeID('modelVersionId', { nullable: true }),
    routing: t.exposeString('routing', { nullable: true, description: 'How a claim routed the task.' }),
    reason: t.exposeString('reason', { nullable: true }),
    content: t.field({
      type: 'JSON',
      nullable: true,
      description:
        'The bodies the agent reported (`request`, `response`), redacted; null unless the tenant captures content, and after its retention.',
      resolve: (step) => step.content,
    }),
  }),
});

const TaskStepPage = builder
  .objectRef<{ nodes: StepView[]; nextCursor: string | null }>('TaskStepPage')
  .implement({
    fields: (t) => ({
      nodes: t.field({ type: [TaskStepRef], resolve: (page) => page.nodes }),
      nextCursor: t.exposeString('nextCursor', {
        nullable: true,
        description: 'Pass as `after` for the next page; null on the last page.',
      }),
    }),
  });

const encodeStepCursor = (seq: number) => Buffer.from(`seq:${seq}`).toString('base64url');
const decodeStepCursor = (cursor: string) => {
  const match = /^seq:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match && encodeStepCursor(Number(match[1])) === cursor ? Number(match[1]) : null;
};

const stepsArgs = z.object({
  first: z
    .int()
    .min(1)
    .max(MAX_STEPS_PER_PAGE)
    .nullish()
    .transform((value) => value ?? 100),
  after: z
    .string()
    .nullish()
    .refine((value) => value == null || decodeStepCursor(value) !== null, {
      message: 'after is not a valid cursor',
    }),
});

/**
 * The StepView keys a `steps` selection reads under `nodes` (fragments, aliases, `@skip` and `@include`
 * followed, as the executor collects them); undefined, for all of them, when it asks for a field that is
 * not one (so that a field added to TaskStep later is never read empty).
 */
function stepFieldsOf(info: GraphQLResolveInfo): Set<keyof StepView> | undefined {
  const collect = (type: GraphQLObjectType, nodes: readonly FieldNode[]) => {
    const { fields, patches } = collectSubFields(
      info.schema,
      info.fragments,
      info.variableValues,
      type,
      // Read only; typed mutable by the library.
      nodes as FieldNode[],
    );
    return [fields, ...patches.map((patch) => patch.fields)].flatMap((map) => [...map.values()].flat());
  };
  const pageType = getNamedType(info.returnType) as GraphQLObjectType;
  const nodeType = getNamedType(pageType.getFields().nodes?.type) as GraphQLObjectType;
  const nodes = collect(pageType, info.fieldNodes).filter((node) => node.name.value === 'nodes');
  const keys = new Set<keyof StepView>();
  for (const node of collect(nodeType, nodes)) {
    const name = node.name.value === 'costUsdText' ? 'costUsd' : node.name.value;
    if (name === '__typename') continue;
    if (!isStepViewKey(name)) return undefined;
    keys.add(name);
  }
  return keys;
}

builder.objectField(TaskRef, 'steps', (t) =>
  t.field({
    type: TaskStepPage,
    description: `The task’s run record in order: steps of every attempt, oldest first (first: 1 to ${MAX_STEPS_PER_PAGE}, default 100).`,
    ...zodField(t, stepsArgs, async (task, { first, after }, context, info) => {
      const page = await readTaskSteps(context.prisma, task.id, {
        first,
        afterSeq: after ? (decodeStepCursor(after) ?? 0) : 0,
        fields: stepFieldsOf(info),
      });
      return { nodes: page.nodes, nextCursor: page.nextSeq === null ? null : encodeStepCursor(page.nextSeq) };
    }),
  }),
);

zodInputType('ModelStepInput', modelStepRule, {
  description:
    'One model call of the running attempt: its model, tokens (cached ⊆ input, reasoning ⊆ output), cost and duration. `request` and `response` are kept (redacted) only when the tenant captures content.',
  fields: {
    startedAt: { description: 'ISO 8601 instant the call started; default: when the report arrives.' },
    inputTokens: { type: 'SafeInt', description: 'Prompt tokens, cached ones included.' },
    cachedInputTokens: { type: 'SafeInt' },
    outputTokens: { type: 'SafeInt', description: 'Completion tokens, reasoning ones included.' },
    reasoningTokens: { type: 'SafeInt' },
    costUsd: { description: 'US dollars, kept to the micro-dollar.' },
  },
});

const StepsReportRef = builder.objectRef<StepsReport>('TaskStepsReport').implement({
  description: 'What a report of steps recorded.',
  fields: (t) => ({
    taskId: t.exposeID('taskId'),
    attempt: t.exposeInt('attempt'),
    firstSeq: t.exposeInt('firstSeq'),
    lastSeq: t.exposeInt('lastSeq'),
    recorded: t.exposeInt('recorded'),
  }),
});

builder.mutationField('reportTaskSteps', (t) =>
  t.withAuth({ agent: true }).field({
    type: StepsReportRef,
    description: `Records model calls of a task the calling agent holds, in order, in its run record: 1 to ${MAX_STEPS_PER_REPORT} per call. A completion or delegation that follows must then report exactly their cost and tokens (BAD_USER_INPUT \`costs_do_not_add_up\` otherwise). NOT_FOUND, CONFLICT or FORBIDDEN as for completeTask; a refusal records nothing.`,
    ...zodField(
      t,
      z.object({ taskId: idArg(), steps: stepsReportRule }),
      (_root, { taskId, steps }, context) => reportTaskSteps(context, taskId, steps),
    ),
  }),
);

interface CapturePolicyView {
  enabled: boolean;
  retentionDays: number;
}

const RunContentCaptureRef = builder.objectRef<CapturePolicyView>('RunContentCapture').implement({
  description: 'Whether run records keep the bodies agents report (redacted), and for how long.',
  fields: (t) => ({
    enabled: t.exposeBoolean('enabled'),
    retentionDays: t.exposeInt('retentionDays'),
  }),
});

builder.queryField('runContentCapture', (t) =>
  t.withAuth({ chairman: true, operator: true }).field({
    type: RunContentCaptureRef,
    description: 'The caller’s tenant’s content capture for run records (chairman or operator).',
    resolve: async (_root, _args, context) => {
      const tenant = await context.prisma.tenant.findUniqueOrThrow({
        where: { id: context.viewer.tenantId },
      });
      return { enabled: tenant.runContentCapture, retentionDays: tenant.runContentRetentionDays };
    },
  }),
);

builder.mutationField('setRunContentCapture', (t) =>
  t.withAuth({ chairman: true }).field({
    type: RunContentCaptureRef,
    description:
      'Turns content capture of run records on or off for the caller’s tenant (chairman only; off by default), with its retention in days (1 to 365, default 30). Audited.',
    ...zodField(
      t,
      z.object({
        enabled: z.boolean(),
        retentionDays: z
          .int()
          .min(1)
          .max(365)
          .nullish()
          .transform((value) => value ?? 30),
      }),
      (_root, { enabled, retentionDays }, context) =>
        context.prisma.$transaction(async (tx) => {
          const tenant = await tx.tenant.update({
            where: { id: context.viewer.tenantId },
            data: { runContentCapture: enabled, runContentRetentionDays: retentionDays },
          });
          await recordAudit(tx, context, {
            action: 'tenant.run_content_capture',
            targetType: 'tenant',
            targetId: tenant.id,
            outcome: enabled ? 'enabled' : 'disabled',
            details: { retention_days: retentionDays },
          });
          return { enabled: tenant.runContentCapture, retentionDays: tenant.runContentRetentionDays };
        }),
    ),
  }),
);

const DeletedTasksRef = builder.objectRef<{ ids: string[] }>('DeletedTasks').implement({
  fields: (t) => ({
    ids: t.exposeIDList('ids', { description: 'The task and every task under it, deleted.' }),
  }),
});

builder.mutationField('deleteTask', (t) =>
  t.withAuth({ chairman: true, operator: true }).field({
    type: DeletedTasksRef,
    description:
      'Deletes an ended task of the caller’s tenant with everything under it: its sub-tasks, its run record, approvals, attachments and recommendations (chairman or operator). CONFLICT (`task_not_ended`) while it or a task under it has not ended; NOT_FOUND for one the caller cannot see. Audited.',
    ...zodField(t, z.object({ id: idArg() }), async (_root, { id }, context) => ({
      ids: await deleteTask(context, id),
    })),
  }),
);
