import { builder } from '../../builder.js';
import { normalizeRole } from '../../domain/agents/roles.js';
import type { TaskEventPayload } from '../../domain/agents/task-events.js';
import type { BusEvent } from '../../events/topics.js';
import { TaskRef, TaskStatusEnum } from './types.js';

type TaskUpdatedPayload = TaskEventPayload & { event_id: string; tenant_id: string };

const TaskUpdatedEvent = builder.objectRef<TaskUpdatedPayload>('TaskUpdatedEvent').implement({
  description: 'A task changed state (queued, claimed, returned to the queue, completed or failed).',
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
    task: t.field({
      type: TaskRef,
      nullable: true,
      description: 'The task as it is now.',
      resolve: (event, _args, context) =>
        context.prisma.task.findFirst({
          where: { id: event.task_id, tenantId: context.viewer?.tenantId ?? event.tenant_id },
        }),
    }),
  }),
});

async function* tasksOf(events: AsyncIterable<BusEvent>, role: string | null | undefined) {
  const wanted = role ? normalizeRole(role) : null;
  for await (const event of events) {
    const payload = event.payload as unknown as TaskUpdatedPayload;
    if (!wanted || payload.role === wanted) yield payload;
  }
}

builder.subscriptionField('taskUpdated', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: TaskUpdatedEvent,
    description: 'Task state changes in the subscriber’s tenant, optionally of one role.',
    args: { role: t.arg.string() },
    subscribe: (_root, { role }, context) =>
      tasksOf(context.services.bus.subscribe('TASK_UPDATED', context.viewer.tenantId), role),
    resolve: (payload) => payload,
  }),
);
