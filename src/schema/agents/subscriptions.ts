import { z } from 'zod';
import { builder } from '../../builder.js';
import { roleScope } from '../../domain/agents/role-binding.js';
import { normalizeRole } from '../../domain/agents/roles.js';
import type { TaskEventPayload, TaskStepsRecordedPayload } from '../../domain/agents/task-events.js';
import { notFound } from '../../domain/errors.js';
import { graphqlArg, idArg, zodSubscription } from '../args.js';
import { afterArg, eventStream } from '../event-stream.js';
import { TaskRef, TaskStatusEnum } from './types.js';

export type TaskUpdatedPayload = TaskEventPayload & { event_id: string; tenant_id: string };

export const TaskUpdatedEvent = builder.objectRef<TaskUpdatedPayload>('TaskUpdatedEvent').implement({
  description:
    'A task changed state (queued, claimed, returned to the queue, waiting for its sub-tasks, completed, failed or cancelled).',
  fields: (t) => ({
    eventId: t.exposeID('event_id'),
    tenantId: t.exposeID('tenant_id'),
    taskId: t.exposeID('task_id'),
    role: t.exposeString('role'),
    status: t.field({
      type: TaskStatusEnum,
      resolve: (event) => event.status as (typeof TaskStatusEnum)['$inferType'],
    }),
    attempts: t.exposeInt('attempts'),
    updatedAt: t.field({ type: 'DateTime', resolve: (event) => event.updated_at }),
    parentTaskId: t.id({
      nullable: true,
      description: 'The task that delegated it; null for a task queued by a chat message.',
      resolve: (event) => event.parent_task_id ?? null,
    }),
    rootTaskId: t.id({
      description: 'The root of its delegation tree (itself for a root).',
      resolve: (event) => event.root_task_id ?? event.task_id,
    }),
    task: t.field({
      type: TaskRef,
      nullable: true,
      description: 'The task as it is now.',
      resolve: (event, _args, context) =>
        context.prisma.task.findFirst({
          where: {
            id: event.task_id,
            ...(context.viewer ? roleScope(context.viewer) : { tenantId: event.tenant_id }),
          },
        }),
    }),
  }),
});

const taskSubscriptionArgs = z.object({
  role: z.string().max(64).nullish(),
  taskId: graphqlArg(z.guid().nullish(), { type: 'ID', description: 'Only this task’s changes.' }),
  after: afterArg,
});

builder.subscriptionField('taskUpdated', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TaskUpdatedEvent,
    description: 'Task state changes in the subscriber’s tenant, optionally of one role, or of one task.',
    ...zodSubscription(t, taskSubscriptionArgs, (_root, { role, taskId, after }, context) => {
      const wanted = role ? normalizeRole(role) : null;
      return eventStream(
        context,
        ['TASK_UPDATED'],
        after,
        (event) =>
          (!wanted || event.payload.role === wanted) && (!taskId || event.payload.task_id === taskId),
      );
    }),
    resolve: (event) => event.payload as unknown as TaskUpdatedPayload,
  }),
);

export type TaskStepsRecordedEventPayload = TaskStepsRecordedPayload & {
  event_id: string;
  tenant_id: string;
};

export const TaskStepsRecordedEvent = builder
  .objectRef<TaskStepsRecordedEventPayload>('TaskStepsRecordedEvent')
  .implement({
    description:
      'Steps were appended to a task’s run record: one event per recording (a batch of reported model calls, a ' +
      'connector call, a claim, a lease renewal, an end…), however many steps it wrote. Read `Task.steps` ' +
      'after the last seq you hold to get them.',
    fields: (t) => ({
      eventId: t.exposeID('event_id'),
      tenantId: t.exposeID('tenant_id'),
      taskId: t.exposeID('task_id'),
      role: t.exposeString('role'),
      rootTaskId: t.exposeID('root_task_id', {
        description: 'The root of its delegation tree (itself for a root).',
      }),
      attempt: t.exposeInt('attempt', { description: 'The claim the task is in (Step.attempt).' }),
      lastSeq: t.exposeInt('last_seq', {
        description:
          'The seq of the task’s last step when the event was written (at least the recording’s last).',
      }),
    }),
  });

const stepsSubscriptionArgs = z.object({ taskId: idArg(), after: afterArg });

builder.subscriptionField('taskStepsRecorded', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TaskStepsRecordedEvent,
    description:
      'Each time steps are appended to one task’s run record, while it runs and when it ends (NOT_FOUND for a ' +
      'task the caller cannot read: another tenant’s, or of a role its token is not bound to).',
    ...zodSubscription(t, stepsSubscriptionArgs, async (_root, { taskId, after }, context) => {
      const task = await context.prisma.task.findFirst({
        where: { id: taskId, ...roleScope(context.viewer) },
        select: { id: true },
      });
      if (!task) throw notFound(`Task ${taskId} not found`);
      return eventStream(
        context,
        ['TASK_STEPS_RECORDED'],
        after,
        (event) => event.payload.task_id === taskId,
      );
    }),
    resolve: (event) => event.payload as unknown as TaskStepsRecordedEventPayload,
  }),
);
