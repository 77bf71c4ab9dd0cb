import { z } from 'zod';
import { builder } from '../builder.js';
import { roleScope } from '../domain/agents/role-binding.js';
import { normalizeRole } from '../domain/agents/roles.js';
import { CATCH_UPS } from '../domain/routines/schedule.js';
import { createRoutine, deleteRoutine, updateRoutine } from '../domain/routines/store.js';
import { chatArgs } from './agents/chat.js';
import { roleArg, TaskRef } from './agents/types.js';
import { graphqlArg, idArg, zodField, zodInputType } from './args.js';
import {
  afterCursor,
  decodeCursor,
  encodeCursor,
  newestFirst,
  pageArgsSchema,
  pageType,
  toPage,
} from './pagination.js';

const RoutineCatchUpEnum = builder.enumType('RoutineCatchUp', {
  description: 'What a routine does with occurrences no instance handled in time (docs/routines.md).',
  values: {
    SKIP: { value: 'skip', description: 'Records them as one skipped `missed` occurrence; queues nothing.' },
    RUN_ONCE: {
      value: 'run_once',
      description: 'Queues one task for the latest of them; records the others as one `missed` occurrence.',
    },
  } as const,
});

const RoutineOutcomeEnum = builder.enumType('RoutineOutcome', {
  description: 'What an occurrence of a routine did: queued a task, or was skipped (with the reason).',
  values: ['queued', 'skipped'] as const,
});

type Outcome = 'queued' | 'skipped';

const RoutineOccurrenceRef = builder.prismaObject('RoutineOccurrence', {
  description: 'An occurrence of a routine, handled exactly once.',
  fields: (t) => ({
    id: t.exposeID('id'),
    scheduledFor: t.expose('scheduledFor', {
      type: 'DateTime',
      description: 'When it was due (for a `missed` row: the first occurrence it stands for).',
    }),
    outcome: t.field({ type: RoutineOutcomeEnum, resolve: (row) => row.outcome as Outcome }),
    reason: t.exposeString('reason', {
      nullable: true,
      description:
        '`role_paused`, `budget_exhausted`, `missed` or `unknown_role` when skipped; null when queued.',
    }),
    taskId: t.exposeID('taskId', { nullable: true, description: 'The task it queued.' }),
    missedCount: t.exposeInt('missedCount', {
      description: 'For a `missed` row: how many occurrences it stands for (counted up to 1,000); else 0.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const RoutineOccurrencePage = pageType('RoutineOccurrence', RoutineOccurrenceRef);

const RoutineRef = builder.prismaObject('Routine', {
  description:
    'Recurring work for an agent role: each occurrence of its schedule queues one task with its message and cap, exactly once across instances, or is recorded as skipped with the reason (docs/routines.md).',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.exposeString('role'),
    cron: t.exposeString('cron', {
      description: 'Five fields: minute hour day-of-month month day-of-week (or a nickname such as @daily).',
    }),
    timeZone: t.exposeString('timeZone', { description: 'The IANA time zone the schedule is read in.' }),
    message: t.exposeString('message'),
    costCapUsd: t.float({
      nullable: true,
      description: 'The cap each queued task carries (USD); null: none.',
      resolve: (routine) => (routine.costCapUsd === null ? null : routine.costCapUsd.toNumber()),
    }),
    catchUp: t.field({ type: RoutineCatchUpEnum, resolve: (routine) => routine.catchUp }),
    enabled: t.exposeBoolean('enabled'),
    nextRunAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'The next occurrence; null while disabled.',
      resolve: (routine) => (routine.enabled ? routine.nextRunAt : null),
    }),
    lastRunAt: t.expose('lastRunAt', {
      type: 'DateTime',
      nullable: true,
      description: 'The latest occurrence handled; null before the first.',
    }),
    lastOutcome: t.field({
      type: RoutineOutcomeEnum,
      nullable: true,
      resolve: (routine) => routine.lastOutcome as Outcome | null,
    }),
    lastReason: t.exposeString('lastReason', {
      nullable: true,
      description: 'Why the latest occurrence was skipped; null when it queued a task.',
    }),
    lastTask: t.field({
      type: TaskRef,
      nullable: true,
      description: 'The task the latest occurrence queued.',
      resolve: (routine, _args, context) =>
        routine.lastTaskId && context.viewer
          ? context.prisma.task.findFirst({ where: { id: routine.lastTaskId, ...roleScope(context.viewer) } })
          : null,
    }),
    costUsd: t.float({
      description: 'What the tasks it queued have cost so far (USD), summed over those that reported a cost.',
      resolve: async (routine, _args, context) => {
        const spent = await context.prisma.task.aggregate({
          where: { routineId: routine.id, tenantId: routine.tenantId },
          _sum: { costUsd: true },
        });
        return spent._sum.costUsd?.toNumber() ?? 0;
      },
    }),
    occurrences: t.field({
      type: RoutineOccurrencePage,
      description: 'Its occurrences, the latest due first.',
      ...zodField(t, z.object(pageArgsSchema), async (routine, { first, after }, context) => {
        // By when they were due: one tick writes several at once (a `missed` row and the one it ran).
        const cursor = after ? decodeCursor(after) : null;
        const rows = await context.prisma.routineOccurrence.findMany({
          where: {
            routineId: routine.id,
            tenantId: routine.tenantId,
            ...(cursor ? { scheduledFor: { lt: cursor.createdAt } } : {}),
          },
          orderBy: { scheduledFor: 'desc' },
          take: first + 1,
        });
        const nodes = rows.slice(0, first);
        const last = nodes.at(-1);
        const more = rows.length > first && last;
        return {
          nodes,
          nextCursor: more ? encodeCursor({ createdAt: last.scheduledFor, id: last.id }) : null,
        };
      }),
    }),
    createdBy: t.exposeString('createdBy'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
});

const RoutinePage = pageType('Routine', RoutineRef);

builder.queryField('routines', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: RoutinePage,
    description: 'The routines of the caller’s tenant, newest first, optionally of one role.',
    ...zodField(
      t,
      z.object({ ...pageArgsSchema, role: roleArg.nullish() }),
      async (_root, { first, after, role }, context) => {
        const rows = await context.prisma.routine.findMany({
          where: { ...roleScope(context.viewer, role ? normalizeRole(role) : null), ...afterCursor(after) },
          orderBy: newestFirst,
          take: first + 1,
        });
        return toPage(rows, first);
      },
    ),
  }),
);

builder.queryField('routine', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: RoutineRef,
    nullable: true,
    description: 'A routine of the caller’s tenant; null when there is none with this id.',
    ...zodField(t, z.object({ id: idArg() }), (_root, { id }, context) =>
      context.prisma.routine.findFirst({ where: { id, ...roleScope(context.viewer) } }),
    ),
  }),
);

const MAX_CAP_USD = 1_000_000_000;
const costCap = z.number().positive().max(MAX_CAP_USD);
const catchUp = graphqlArg(z.enum(CATCH_UPS as ['skip', 'run_once']), { type: RoutineCatchUpEnum });
const message = chatArgs.shape.input.shape.message;
const cron = z.string().trim().min(1).max(200);
const timeZone = z.string().trim().min(1).max(100);

const createInput = z.object({
  role: roleArg,
  cron: graphqlArg(cron, {
    description:
      'Five fields, minute hour day-of-month month day-of-week (`0 9 * * 1-5`), or a nickname (`@daily`); no seconds.',
  }),
  timeZone: graphqlArg(timeZone, { description: 'An IANA time zone (`Europe/Paris`, `UTC`).' }),
  message,
  costCapUsd: graphqlArg(costCap.nullish(), {
    description: 'USD each queued task may cost at most, > 0; omit or null for no cap.',
  }),
  catchUp: graphqlArg(catchUp.nullish(), { type: RoutineCatchUpEnum, defaultValue: 'skip' }).transform(
    (value) => value ?? 'skip',
  ),
  enabled: graphqlArg(z.boolean().nullish(), { defaultValue: true }).transform((value) => value ?? true),
});
zodInputType('CreateRoutineInput', createInput, {
  description: 'A new routine: the role, the schedule in a time zone, the message, and optionally a cap.',
});

const updateInput = z.object({
  role: roleArg.nullish(),
  cron: graphqlArg(cron.nullish(), { description: 'A new schedule; it starts over from now.' }),
  timeZone: graphqlArg(timeZone.nullish(), {
    description: 'A new time zone; the schedule starts over from now.',
  }),
  message: graphqlArg(message.nullish(), {}),
  costCapUsd: graphqlArg(costCap.nullish(), { description: 'A new cap; null removes it; omitted keeps it.' }),
  catchUp: graphqlArg(catchUp.nullish(), { type: RoutineCatchUpEnum }),
  enabled: graphqlArg(z.boolean().nullish(), {
    description: 'False stops it; true starts it again from now (what passed meanwhile is not missed).',
  }),
});
zodInputType('UpdateRoutineInput', updateInput, {
  description: 'Changes to a routine: what is omitted (or null, but for costCapUsd) is kept.',
});

const keep = <Value>(value: Value | null | undefined) => (value === null ? undefined : value);

builder.mutationField('createRoutine', (t) =>
  t.withAuth({ chairman: true, operator: true }).field({
    type: RoutineRef,
    description:
      'Adds a routine (chairman or operator). BAD_USER_INPUT with `extensions.reason`, and nothing written: `unknown_role`, `cron_seconds_not_supported`, `cron_invalid` (out of range, malformed, or never fires), `unknown_time_zone`; a cap ≤ 0 or a message out of bounds as any invalid input. Audited.',
    ...zodField(t, z.object({ input: createInput }), (_root, { input }, context) =>
      createRoutine(context, input),
    ),
  }),
);

builder.mutationField('updateRoutine', (t) =>
  t.withAuth({ chairman: true, operator: true }).field({
    type: RoutineRef,
    description:
      'Changes a routine (chairman or operator); refused as createRoutine, NOT_FOUND for an id the tenant does not have. Audited.',
    ...zodField(t, z.object({ id: idArg(), input: updateInput }), (_root, { id, input }, context) =>
      updateRoutine(context, id, {
        role: keep(input.role),
        cron: keep(input.cron),
        timeZone: keep(input.timeZone),
        message: keep(input.message),
        costCapUsd: input.costCapUsd,
        catchUp: keep(input.catchUp),
        enabled: keep(input.enabled),
      }),
    ),
  }),
);

builder.mutationField('deleteRoutine', (t) =>
  t.withAuth({ chairman: true, operator: true }).field({
    type: RoutineRef,
    description:
      'Deletes a routine and its occurrences (chairman or operator); its tasks stay. NOT_FOUND for an id the tenant does not have. Audited.',
    ...zodField(t, z.object({ id: idArg() }), (_root, { id }, context) => deleteRoutine(context, id)),
  }),
);
