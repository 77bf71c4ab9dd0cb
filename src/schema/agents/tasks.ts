import { z } from 'zod';
import { builder } from '../../builder.js';
import {
  completionReportRule,
  MAX_DELIVERABLES,
  MAX_STEPS_PER_REPORT,
  recommendationRule,
  tokenUsageRule,
} from '../../domain/agents/completion-rules.js';
import { claimTask, completeTask, failTask, releaseTask, renewTaskLease } from '../../domain/agents/queue.js';
import { roleScope } from '../../domain/agents/role-binding.js';
import { normalizeRole } from '../../domain/agents/roles.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { sendWithAttachments } from '../../http/attachments.js';
import { graphqlArg, idArg, zodField, zodInputType } from '../args.js';
import { afterCursor, newestFirst, pageArgsSchema, pageType, toPage } from '../pagination.js';
import { deliverableFiles, withCheckedDeliverables } from './deliverables.js';
import { roleArg, TASK_STATUSES, TaskRef, TaskStatusEnum } from './types.js';

/** A page of tasks, with the filter it was cut from (the cursor aside), for its `totalCount`. */
const TaskPage = pageType<unknown, { filter: Prisma.TaskWhereInput }>('Task', TaskRef);

builder.objectField(TaskPage, 'totalCount', (t) =>
  t.int({
    description:
      'How many tasks the filter matches on every page (the cursor aside), as A2A’s ListTasks answers it; counted only when asked for.',
    resolve: (page, _args, context) => context.prisma.task.count({ where: page.filter }),
  }),
);

builder.queryField('task', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TaskRef,
    nullable: true,
    description:
      'A task of the caller’s tenant (of its roles, for an agent token bound to roles); null when there is none with this id.',
    ...zodField(t, z.object({ id: idArg() }), (_root, { id }, context) =>
      context.prisma.task.findFirst({ where: { id, ...roleScope(context.viewer) } }),
    ),
  }),
);

const tasksArgs = z.object({
  ...pageArgsSchema,
  role: roleArg.nullish(),
  status: graphqlArg(z.enum(TASK_STATUSES), { type: TaskStatusEnum }).nullish(),
  threadId: graphqlArg(z.guid().nullish(), { type: 'ID', description: 'Only the tasks of this thread.' }),
});

builder.queryField('tasks', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TaskPage,
    description:
      'Tasks of the caller’s tenant (of its roles, for an agent token bound to roles), newest first, optionally of one role, one status and one thread.',
    ...zodField(t, tasksArgs, async (_root, { first, after, role, status, threadId }, context) => {
      const filter: Prisma.TaskWhereInput = {
        ...roleScope(context.viewer, role ? normalizeRole(role) : null),
        ...(status ? { status } : {}),
        ...(threadId ? { threadId } : {}),
      };
      const rows = await context.prisma.task.findMany({
        where: { ...filter, ...afterCursor(after) },
        orderBy: newestFirst,
        take: first + 1,
      });
      return { ...toPage(rows, first), filter };
    }),
  }),
);

interface TaskCounts {
  pending: number;
  running: number;
  completed: number;
  failed: number;
  cancelled: number;
  awaiting_approval: number;
  waiting: number;
  in_review: number;
}

const TaskCountsRef = builder.objectRef<TaskCounts>('TaskCounts').implement({
  description: 'How many tasks are in each state (all time).',
  fields: (t) => ({
    pending: t.exposeInt('pending'),
    running: t.exposeInt('running'),
    completed: t.exposeInt('completed'),
    failed: t.exposeInt('failed'),
    cancelled: t.exposeInt('cancelled'),
    awaitingApproval: t.exposeInt('awaiting_approval', {
      description: 'Waiting for a decision the agent asked for; not running, not failed.',
    }),
    waiting: t.exposeInt('waiting', { description: 'Waiting for the sub-tasks they delegated.' }),
    inReview: t.exposeInt('in_review', {
      description: 'Completed by their agent, waiting for the reviewer role’s acceptance; not yet completed.',
    }),
  }),
});

builder.queryField('taskCounts', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TaskCountsRef,
    description: 'The task queue of the caller’s tenant by state, optionally of one role.',
    ...zodField(t, z.object({ role: roleArg.nullish() }), async (_root, { role }, context) => {
      const groups = await context.prisma.task.groupBy({
        by: ['status'],
        where: roleScope(context.viewer, role ? normalizeRole(role) : null),
        _count: { _all: true },
      });
      const counts: TaskCounts = {
        pending: 0,
        running: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
        awaiting_approval: 0,
        waiting: 0,
        in_review: 0,
      };
      for (const group of groups) counts[group.status] = group._count._all;
      return counts;
    }),
  }),
);

builder.mutationField('claimTask', (t) =>
  t.withAuth({ agent: true }).field({
    type: TaskRef,
    nullable: true,
    description:
      'Takes the oldest pending task of a role for the calling agent under a 5-minute lease, reserving its budgets’ estimates; null when nothing is claimable (none pending, the role is paused, or a budget has no room). claimNextTask says which.',
    ...zodField(t, z.object({ role: roleArg }), (_root, { role }, context) => claimTask(context, role)),
  }),
);

// The rules are the domain's (every face checks a completion report with them); what GraphQL says beyond
// them (SafeInt, descriptions) is given here.
zodInputType('RecommendationInput', recommendationRule, {
  fields: { predictedOutcome: { description: 'What should happen if the recommendation is followed.' } },
});

zodInputType('TokenUsageInput', tokenUsageRule, {
  description:
    'The per-kind breakdown of tokensUsed: inputTokens + outputTokens = tokensUsed; cachedInputTokens (part of the input, default 0) ≤ inputTokens; reasoningTokens (part of the output, default 0) ≤ outputTokens.',
  fields: {
    inputTokens: { type: 'SafeInt', description: 'Prompt tokens, cached ones included.' },
    cachedInputTokens: { type: 'SafeInt', description: 'Prompt tokens served from the provider’s cache.' },
    outputTokens: { type: 'SafeInt', description: 'Completion tokens, reasoning ones included.' },
    reasoningTokens: { type: 'SafeInt', description: 'Completion tokens spent on reasoning.' },
  },
});

zodInputType('CompleteTaskInput', completionReportRule, {
  fields: {
    tokensUsed: { type: 'SafeInt', description: '0 to 2^53 - 1.' },
    costUsd: { description: 'US dollars; kept to the micro-dollar (6 decimal places).' },
    usage: { description: 'Optional breakdown of tokensUsed by kind, stored on the task as `usage`.' },
    deliverables: {
      description: `Evidence for "done", at most ${MAX_DELIVERABLES}; a role with requireDeliverable needs one.`,
    },
    steps: {
      description: `The attempt’s model calls not reported yet with reportTaskSteps (at most ${MAX_STEPS_PER_REPORT}), recorded in order before the completion, in its statement: tokensUsed and costUsd must then be exactly the sum of these and the ones reported before (BAD_USER_INPUT \`costs_do_not_add_up\`).`,
    },
  },
});

const completeTaskArgs = z.object({
  id: idArg(),
  input: completionReportRule.transform(withCheckedDeliverables),
});

builder.mutationField('completeTask', (t) =>
  t.withAuth({ agent: true }).field({
    type: TaskRef,
    description:
      'Ends a task the calling agent claimed as completed, with its usage, output, recommendations and deliverables; when the task’s role names a reviewer role (setCompletionPolicy), as in_review instead, charged but completed only once accepted (docs/reviews.md). BAD_USER_INPUT, reason `deliverable_required`, when the task’s role requires a deliverable and none was given; nothing is written when refused.',
    ...zodField(t, completeTaskArgs, (_root, { id, input }, context) =>
      sendWithAttachments(deliverableFiles(input), () =>
        completeTask(context, id, input, context.services.blobs),
      ),
    ),
  }),
);

builder.mutationField('failTask', (t) =>
  t.withAuth({ agent: true }).field({
    type: TaskRef,
    description: 'Ends a task the calling agent claimed as failed, at once.',
    ...zodField(
      t,
      z.object({ id: idArg(), error: z.string().trim().min(1).max(10_000) }),
      (_root, { id, error }, context) => failTask(context, id, error),
    ),
  }),
);

builder.mutationField('releaseTask', (t) =>
  t.withAuth({ agent: true }).field({
    type: TaskRef,
    description:
      'Gives a task the calling agent holds back to the queue unfinished (an agent runtime that stops): pending ' +
      'again, its lease and budget reservation released, the claim not counted against its attempts. NOT_FOUND, ' +
      'CONFLICT (not running) or FORBIDDEN (another agent holds it) change nothing.',
    ...zodField(t, z.object({ id: idArg() }), (_root, { id }, context) => releaseTask(context, id)),
  }),
);

builder.mutationField('renewTaskLease', (t) =>
  t.withAuth({ agent: true }).field({
    type: TaskRef,
    description:
      'Extends the lease of a task the calling agent holds to 5 minutes from now. CONFLICT (`extensions.reason`) ' +
      'when the task is not running (`task_not_running`: it may have been returned to the queue) or its lease ' +
      'has already lapsed (`lease_expired`); FORBIDDEN when another agent holds it. Changes nothing when refused.',
    ...zodField(t, z.object({ id: idArg() }), (_root, { id }, context) => renewTaskLease(context, id)),
  }),
);
