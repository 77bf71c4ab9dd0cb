import { z } from 'zod';
import { builder } from '../../builder.js';
import { normalizeRole } from '../../domain/agents/roles.js';
import {
  decideTaskReview,
  latestTaskReview,
  MAX_REVIEW_NOTE_LENGTH,
  reviewScope,
  TASK_REVIEW_STATUSES,
} from '../../domain/agents/task-reviews.js';
import { graphqlArg, idArg, zodField } from '../args.js';
import { afterCursor, newestFirst, pageArgsSchema, pageType, toPage } from '../pagination.js';
import { roleArg, TaskRef } from './types.js';

const TaskReviewStatusEnum = builder.enumType('TaskReviewStatus', {
  description:
    'pending: the task is in_review; accepted: it is completed; rejected: it went back to the queue or, on its last attempt, failed (outcome); cancelled: the task was cancelled while in review.',
  values: TASK_REVIEW_STATUSES,
});

export const TaskReviewRef = builder.prismaObject('TaskReview', {
  description:
    'A completion waiting for (or given) the verdict of its role’s reviewer role (docs/reviews.md). Decided by a member, an operator, the chairman or an agent of the reviewer role, never by the agent whose completion it is.',
  fields: (t) => ({
    id: t.exposeID('id'),
    taskId: t.exposeID('taskId'),
    role: t.exposeString('role', { description: 'The task’s role.' }),
    reviewerRole: t.exposeString('reviewerRole', {
      description: 'The role whose agents may decide it, as the policy stood at the completion.',
    }),
    status: t.field({
      type: TaskReviewStatusEnum,
      resolve: (row) => row.status as (typeof TASK_REVIEW_STATUSES)[number],
    }),
    requestedBy: t.exposeString('requestedBy', {
      description: 'Token subject of the agent whose completion it is.',
    }),
    attempt: t.exposeInt('attempt', { description: 'The attempt that completed (its run record’s).' }),
    decidedBy: t.exposeString('decidedBy', { nullable: true }),
    decidedAt: t.expose('decidedAt', { type: 'DateTime', nullable: true }),
    note: t.exposeString('note', {
      nullable: true,
      description: 'The acceptance’s note, or the rejection’s reason (always set for a rejection).',
    }),
    outcome: t.exposeString('outcome', {
      nullable: true,
      description:
        'What a rejection did to the task: pending (back in the queue) or failed (its last attempt).',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    task: t.relation('task'),
  }),
});

builder.prismaObjectField('Task', 'review', (t) =>
  t.field({
    type: TaskReviewRef,
    nullable: true,
    description:
      'The latest review of its completions, when its role wants a reviewer’s acceptance: pending while in_review, then its verdict (a rejection’s reason is what the agent reads on its next claim).',
    resolve: (task, _args, context) =>
      context.viewer ? latestTaskReview({ ...context, viewer: context.viewer }, task.id) : null,
  }),
);

const TaskReviewPage = pageType('TaskReview', TaskReviewRef);

builder.queryField('taskReviews', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TaskReviewPage,
    description:
      'Reviews of the tenant’s tasks, newest first, optionally of one status and reviewer role. An agent whose token is bound to roles sees those its roles review or whose tasks they are.',
    ...zodField(
      t,
      z.object({
        ...pageArgsSchema,
        status: graphqlArg(z.enum(TASK_REVIEW_STATUSES), { type: TaskReviewStatusEnum }).nullish(),
        reviewerRole: roleArg.nullish(),
      }),
      async (_root, { first, after, status, reviewerRole }, context) => {
        const rows = await context.prisma.taskReview.findMany({
          where: {
            AND: [
              reviewScope(context.viewer),
              status ? { status } : {},
              reviewerRole ? { reviewerRole: normalizeRole(reviewerRole) } : {},
              afterCursor(after),
            ],
          },
          orderBy: newestFirst,
          take: first + 1,
        });
        return toPage(rows, first);
      },
    ),
  }),
);

const WHO =
  'A member, an operator, the chairman, or an agent working for the task’s reviewer role; never the agent whose completion it is (FORBIDDEN, reason own_request). NOT_FOUND another tenant’s task; CONFLICT (reason task_not_in_review) a task not in_review; FORBIDDEN (reason not_reviewer) an agent not working for the reviewer role. A refusal changes nothing.';

builder.mutationField('acceptTask', (t) =>
  t.withAuth({ member: true, operator: true, chairman: true, agent: true }).field({
    type: TaskRef,
    description: `Accepts a task in_review: it is completed, and counts in vitals and outcomes from then on (at its agent’s completion time). ${WHO}`,
    ...zodField(
      t,
      z.object({
        id: idArg(),
        note: graphqlArg(z.string().trim().min(1).max(MAX_REVIEW_NOTE_LENGTH).nullish(), {
          description: `At most ${MAX_REVIEW_NOTE_LENGTH} characters.`,
          nullable: true,
        }),
      }),
      (_root, { id, note }, context) => decideTaskReview(context, id, { decision: 'accept', note }),
    ),
  }),
);

builder.mutationField('rejectTask', (t) =>
  t.withAuth({ member: true, operator: true, chairman: true, agent: true }).field({
    type: TaskRef,
    description: `Rejects a task in_review, saying why: it returns to its role’s queue (pending, its attempts kept, the reason in Task.review), or fails when that completion was its last attempt. Its cost stays charged. ${WHO}`,
    ...zodField(
      t,
      z.object({
        id: idArg(),
        reason: graphqlArg(z.string().trim().min(1).max(MAX_REVIEW_NOTE_LENGTH), {
          description: `Why, 1 to ${MAX_REVIEW_NOTE_LENGTH} characters.`,
        }),
      }),
      (_root, { id, reason }, context) => decideTaskReview(context, id, { decision: 'reject', reason }),
    ),
  }),
);
