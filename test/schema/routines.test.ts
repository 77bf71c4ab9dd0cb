import { describe, expect, it } from 'vitest';
import { tickRoutines } from '../../src/domain/routines/tick.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTwoTestApps } from '../support/fixtures.js';
import { setBudget } from './agents-budgets-support.js';
import { company, ok } from './agents-delegation-support.js';

// Two instances on one database tick with one moved clock; their own tickers stay out of the way.
let a: TestApp;
let b: TestApp;
withTwoTestApps(
  ({ a: first, b: second }) => {
    a = first;
    b = second;
  },
  { env: { ROUTINE_TICK_INTERVAL_MS: '3600000' } },
);

const ROUTINE_FIELDS = `id role cron timeZone message costCapUsd catchUp enabled nextRunAt lastRunAt lastOutcome
  lastReason lastTask { id role status message costCapUsd routineId createdBy }`;

const CREATE = `mutation Create($input: CreateRoutineInput!) { createRoutine(input: $input) { ${ROUTINE_FIELDS} } }`;
const UPDATE = `mutation Update($id: ID!, $input: UpdateRoutineInput!) {
  updateRoutine(id: $id, input: $input) { ${ROUTINE_FIELDS} }
}`;
const DELETE = `mutation Delete($id: ID!) { deleteRoutine(id: $id) { id } }`;
const ROUTINE = `query Routine($id: ID!) {
  routine(id: $id) {
    ${ROUTINE_FIELDS}
    occurrences { nodes { scheduledFor outcome reason taskId missedCount } }
  }
}`;
const ROUTINES = `query Routines($role: String) { routines(role: $role) { nodes { id role nextRunAt lastOutcome } } }`;

interface RoutineView {
  id: string;
  role: string;
  cron: string;
  timeZone: string;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastOutcome: string | null;
  lastReason: string | null;
  catchUp: string;
  enabled: boolean;
  lastTask: { id: string; routineId: string; costCapUsd: number | null; createdBy: string } | null;
  occurrences: {
    nodes: {
      scheduledFor: string;
      outcome: string;
      reason: string | null;
      taskId: string | null;
      missedCount: number;
    }[];
  };
}

async function create(caller: Caller, input: Record<string, unknown>): Promise<RoutineView> {
  return (
    await ok(
      a,
      CREATE,
      { input: { role: 'cfo', cron: '0 9 * * *', timeZone: 'UTC', message: 'Close the books', ...input } },
      caller,
    )
  ).createRoutine;
}

const read = async (t: TestApp, caller: Caller, id: string): Promise<RoutineView> =>
  (await ok(t, ROUTINE, { id }, caller)).routine;

/** Both instances tick at once, at `now`. */
const tickBoth = (now: Date) =>
  Promise.all([tickRoutines(a.db.prisma, { now }), tickRoutines(b.db.prisma, { now })]);

const routineTasks = (routineId: string) =>
  a.db.prisma.task.findMany({ where: { routineId }, orderBy: { createdAt: 'asc' } });

const at = (iso: string, plusMs = 0) => new Date(new Date(iso).getTime() + plusMs);
const DAY = 24 * 60 * 60 * 1000;

describe('routines', () => {
  it('each occurrence queues exactly one task with two instances ticking at once, announced as TASK_UPDATED', async () => {
    const { chairman, tenantId } = await company(a);
    const routine = await create(chairman, { timeZone: 'Europe/Paris', costCapUsd: 2.5 });
    expect(routine).toMatchObject({ role: 'cfo', catchUp: 'SKIP', enabled: true, lastOutcome: null });
    const first = routine.nextRunAt as string;
    // 09:00 in Paris is 08:00 UTC in winter.
    expect(first).toMatch(/T08:00:00\.000Z$/);

    await tickBoth(at(first, 1_000));
    await tickBoth(at(first, 2_000));
    const tasks = await routineTasks(routine.id);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({
      role: 'cfo',
      status: 'pending',
      message: 'Close the books',
      createdBy: `routine:${routine.id}`,
      threadId: null,
    });
    expect(tasks[0]?.costCapUsd?.toNumber()).toBe(2.5);
    const events = await a.db.prisma.outboxEvent.findMany({ where: { tenantId, type: 'TASK_UPDATED' } });
    expect(events.map((event) => (event.payload as { task_id: string }).task_id)).toEqual([tasks[0]?.id]);

    const after = await read(b, chairman, routine.id);
    expect(after).toMatchObject({ lastOutcome: 'queued', lastReason: null, lastRunAt: first });
    expect(after.lastTask).toMatchObject({ id: tasks[0]?.id, routineId: routine.id, costCapUsd: 2.5 });
    expect(after.nextRunAt).toBe(at(first, DAY).toISOString());
    // Its task's cost is the routine's.
    await a.db.prisma.task.update({ where: { id: tasks[0]?.id as string }, data: { costUsd: 0.125 } });
    expect(
      (await ok(a, `query($id: ID!) { routine(id: $id) { costUsd } }`, { id: routine.id }, chairman)).routine,
    ).toEqual({ costUsd: 0.125 });

    // The clock moves on to the next occurrence: one more task, still one per occurrence.
    await tickBoth(at(first, DAY + 500));
    expect(await routineTasks(routine.id)).toHaveLength(2);
    const occurrences = (await read(a, chairman, routine.id)).occurrences.nodes;
    expect(occurrences.map((row) => [row.scheduledFor, row.outcome, row.missedCount])).toEqual([
      [at(first, DAY).toISOString(), 'queued', 0],
      [first, 'queued', 0],
    ]);
  });

  it('many routines due at once, ticked in small batches by both instances, each queue exactly one task', async () => {
    const { chairman } = await company(a);
    const routines = [];
    for (let index = 0; index < 12; index++)
      routines.push(await create(chairman, { message: `Report ${index}` }));
    const now = at(routines[0]?.nextRunAt as string, 1_000);
    await Promise.all([a, b, a, b].map((t) => tickRoutines(t.db.prisma, { now, batchSize: 3 })));
    const tasks = await a.db.prisma.task.findMany({
      where: { routineId: { in: routines.map((r) => r.id) } },
    });
    expect(tasks).toHaveLength(12);
    expect(new Set(tasks.map((task) => task.routineId)).size).toBe(12);
  });

  it('pages through occurrences, the latest due first', async () => {
    const { chairman } = await company(a);
    const routine = await create(chairman, { catchUp: 'RUN_ONCE' });
    await tickBoth(at(routine.nextRunAt as string, 2 * DAY + 60 * 60 * 1000));
    const PAGE = `query($id: ID!, $after: String) {
      routine(id: $id) { occurrences(first: 1, after: $after) { nodes { scheduledFor reason } nextCursor } }
    }`;
    const first = (await ok(a, PAGE, { id: routine.id }, chairman)).routine.occurrences;
    expect(first.nodes).toEqual([
      { scheduledFor: at(routine.nextRunAt as string, 2 * DAY).toISOString(), reason: null },
    ]);
    const second = (await ok(a, PAGE, { id: routine.id, after: first.nextCursor }, chairman)).routine
      .occurrences;
    expect(second).toEqual({
      nodes: [{ scheduledFor: routine.nextRunAt, reason: 'missed' }],
      nextCursor: null,
    });
  });

  it('skips an occurrence while the role is paused, and one whose budget has no room, with the reason', async () => {
    const { chairman, tenantId } = await company(a);
    const routine = await create(chairman, { role: 'cmo' });
    const first = routine.nextRunAt as string;
    await a.db.prisma.agentRole.update({
      where: { tenantId_role: { tenantId, role: 'cmo' } },
      data: { paused: true, pausedAt: new Date() },
    });
    await tickBoth(at(first, 1_000));
    expect(await routineTasks(routine.id)).toHaveLength(0);
    expect(await read(a, chairman, routine.id)).toMatchObject({
      lastOutcome: 'skipped',
      lastReason: 'role_paused',
      lastTask: null,
    });

    await a.db.prisma.agentRole.update({
      where: { tenantId_role: { tenantId, role: 'cmo' } },
      data: { paused: false },
    });
    await setBudget(a, chairman, { role: 'cmo', period: 'month', limitUsd: '1', estimateUsd: '1' });
    await a.db.prisma.budget.updateMany({ where: { tenantId, role: 'cmo' }, data: { spentUsd: 1 } });
    await tickBoth(at(first, DAY + 1_000));
    expect(await routineTasks(routine.id)).toHaveLength(0);
    const skipped = await read(b, chairman, routine.id);
    expect(skipped).toMatchObject({ lastOutcome: 'skipped', lastReason: 'budget_exhausted' });
    expect(skipped.occurrences.nodes.map((row) => [row.outcome, row.reason])).toEqual([
      ['skipped', 'budget_exhausted'],
      ['skipped', 'role_paused'],
    ]);
  });

  it('after downtime, catch-up `skip` records the missed occurrences as one row and queues nothing', async () => {
    const { chairman } = await company(a);
    const routine = await create(chairman, { catchUp: 'SKIP' });
    const first = routine.nextRunAt as string;
    // The first tick after three days and an hour without any instance: 4 occurrences passed, the latest an hour ago.
    await tickBoth(at(first, 3 * DAY + 60 * 60 * 1000));
    expect(await routineTasks(routine.id)).toHaveLength(0);
    const after = await read(a, chairman, routine.id);
    expect(after).toMatchObject({
      lastOutcome: 'skipped',
      lastReason: 'missed',
      lastRunAt: at(first, 3 * DAY).toISOString(),
      nextRunAt: at(first, 4 * DAY).toISOString(),
    });
    expect(after.occurrences.nodes).toEqual([
      { scheduledFor: first, outcome: 'skipped', reason: 'missed', taskId: null, missedCount: 4 },
    ]);
  });

  it('after downtime, catch-up `run_once` queues one task for the latest occurrence and records the rest as missed', async () => {
    const { chairman } = await company(a);
    const routine = await create(chairman, { catchUp: 'RUN_ONCE' });
    const first = routine.nextRunAt as string;
    await tickBoth(at(first, 3 * DAY + 60 * 60 * 1000));
    const tasks = await routineTasks(routine.id);
    expect(tasks).toHaveLength(1);
    const after = await read(a, chairman, routine.id);
    expect(after).toMatchObject({ lastOutcome: 'queued', lastTask: { id: tasks[0]?.id } });
    expect(after.occurrences.nodes).toEqual([
      {
        scheduledFor: at(first, 3 * DAY).toISOString(),
        outcome: 'queued',
        reason: null,
        taskId: tasks[0]?.id,
        missedCount: 0,
      },
      { scheduledFor: first, outcome: 'skipped', reason: 'missed', taskId: null, missedCount: 3 },
    ]);
  });

  it('an occurrence a tick handles within the grace still runs, whatever the catch-up rule', async () => {
    const { chairman } = await company(a);
    const routine = await create(chairman, { catchUp: 'SKIP' });
    await tickBoth(at(routine.nextRunAt as string, 30_000));
    expect(await routineTasks(routine.id)).toHaveLength(1);
  });

  it('a disabled routine does not run; enabled again, it starts over from now', async () => {
    const { chairman } = await company(a);
    const routine = await create(chairman, {});
    const disabled = (await ok(a, UPDATE, { id: routine.id, input: { enabled: false } }, chairman))
      .updateRoutine;
    expect(disabled).toMatchObject({ enabled: false, nextRunAt: null });
    await tickBoth(at(routine.nextRunAt as string, 5 * DAY));
    expect(await routineTasks(routine.id)).toHaveLength(0);
    const enabled = (
      await ok(a, UPDATE, { id: routine.id, input: { enabled: true, costCapUsd: null } }, chairman)
    ).updateRoutine;
    expect(enabled).toMatchObject({ enabled: true, nextRunAt: routine.nextRunAt, costCapUsd: null });
  });

  it('refuses bad input with the reason and changes nothing', async () => {
    const { chairman, tenantId } = await company(a);
    const rows = async () => ({
      routines: await a.db.prisma.routine.count({ where: { tenantId } }),
      audit: await a.db.prisma.auditEntry.count({ where: { tenantId } }),
      events: await a.db.prisma.outboxEvent.count({ where: { tenantId } }),
    });
    const before = await rows();
    const refusal = async (input: Record<string, unknown>) => {
      const result = await a.graphql<any, unknown>(
        CREATE,
        { input: { role: 'cfo', cron: '0 9 * * *', timeZone: 'UTC', message: 'Report', ...input } },
        chairman,
      );
      expect(result.data).toBeNull();
      return result.errors?.[0]?.extensions as {
        code: string;
        reason?: string;
        detail?: { type: string; loc: unknown[] }[];
      };
    };
    expect(await refusal({ role: 'cxo' })).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'unknown_role' });
    expect(await refusal({ cron: '0 0 9 * * *' })).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'cron_seconds_not_supported',
      detail: [{ type: 'cron_seconds_not_supported', loc: ['input', 'cron'] }],
    });
    expect(await refusal({ cron: '61 * * * *' })).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'cron_invalid',
    });
    expect(await refusal({ cron: '0 24 * * *' })).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'cron_invalid',
    });
    expect(await refusal({ cron: '0 9 30 2 *' })).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'cron_invalid',
    });
    expect(await refusal({ cron: 'every day' })).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'cron_invalid',
    });
    expect(await refusal({ timeZone: 'Mars/Olympus_Mons' })).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'unknown_time_zone',
    });
    expect(await refusal({ costCapUsd: -1 })).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ loc: ['input', 'costCapUsd'] }],
    });
    expect(await refusal({ costCapUsd: 0 })).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ loc: ['input', 'costCapUsd'] }],
    });
    expect(await refusal({ message: 'x'.repeat(4097) })).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ loc: ['input', 'message'] }],
    });
    const routine = await create(chairman, {});
    const afterCreate = await rows();
    const update = await a.graphql<any, unknown>(
      UPDATE,
      { id: routine.id, input: { cron: '* * * * * *' } },
      chairman,
    );
    expect(update.errors?.[0]?.extensions).toMatchObject({ reason: 'cron_seconds_not_supported' });
    expect(await rows()).toEqual(afterCreate);
    expect(afterCreate).toEqual({ ...before, routines: 1, audit: before.audit + 1 });
  });

  it('only the chairman or an operator changes routines; everyone of the tenant reads them; audited', async () => {
    const { chairman, member, tenantId } = await company(a);
    const operator = await a.caller(['operator'], { tenantId });
    const denied = await a.graphql<any, unknown>(
      CREATE,
      { input: { role: 'cfo', cron: '@daily', timeZone: 'UTC', message: 'x' } },
      member,
    );
    expect(denied.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const routine = await create(operator, { role: 'cto', cron: '@hourly' });
    await ok(a, UPDATE, { id: routine.id, input: { message: 'Check the uptime' } }, chairman);
    expect((await ok(b, ROUTINES, { role: 'CTO' }, member)).routines.nodes).toEqual([
      { id: routine.id, role: 'cto', nextRunAt: routine.nextRunAt, lastOutcome: null },
    ]);
    await ok(a, DELETE, { id: routine.id }, chairman);
    const audit = await a.db.prisma.auditEntry.findMany({
      where: { tenantId, targetType: 'routine' },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit.map((row) => [row.action, row.actor])).toEqual([
      ['routine.create', operator.sub],
      ['routine.update', chairman.sub],
      ['routine.delete', chairman.sub],
    ]);
    expect((await ok(a, ROUTINES, {}, member)).routines.nodes).toEqual([]);
  });

  it('another tenant’s routine is not found and never listed', async () => {
    const { chairman } = await company(a);
    const other = await company(a);
    const routine = await create(chairman, {});
    expect((await ok(a, ROUTINE, { id: routine.id }, other.chairman)).routine).toBeNull();
    expect((await ok(a, ROUTINES, {}, other.chairman)).routines.nodes).toEqual([]);
    for (const [document, variables] of [
      [UPDATE, { id: routine.id, input: { enabled: false } }],
      [DELETE, { id: routine.id }],
    ] as const) {
      const result = await a.graphql<any, unknown>(document, variables, other.chairman);
      expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
    expect((await read(a, chairman, routine.id)).enabled).toBe(true);
  });
});
