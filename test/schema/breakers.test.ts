import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepExpiredLeases } from '../../src/domain/agents/lease-sweeper.js';
import { graphql } from '../../src/generated/graphql/index.js';
import { createConnector, startUpstream, UPSTREAM_HOST, type Upstream } from '../rest/connectors-support.js';
import { createTwoTestApps, type TwoTestApps } from '../support/fixtures.js';
import { listen, subscribe } from '../support/ws.js';
import { claim, company, complete, delegate, FAIL, ok } from './agents-delegation-support.js';
import { queueTask } from './agents-support.js';
import {
  CLAIM_OUTCOME,
  claimed,
  companyWithRole,
  expectTrippedOnce,
  PAUSE,
  readRole,
  resume,
  SET_POLICY,
  TRIPS,
  tripsOf,
} from './breakers-support.js';

// Two instances on one database (PGlite, or PostgreSQL + Redis): the runtimes report to both at once.
let apps: TwoTestApps;
let upstream: Upstream;
beforeAll(async () => {
  upstream = await startUpstream();
  upstream.server.route('/v1/customers', (_request, _body, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('[]');
  });
  apps = await createTwoTestApps({ env: upstream.allow, egress: upstream.egress });
});
afterAll(async () => {
  await apps?.close();
  await upstream?.server.close();
});

const BreakerPaused = graphql(`
  subscription BreakerPaused($role: String) {
    agentPaused(role: $role) {
      eventId
      role
      actorUserId
      breaker {
        kind
        tripId
        evidence
      }
    }
  }
`);

const pair = () => [apps.a, apps.b] as [typeof apps.a, typeof apps.b];

describe('circuit breakers', () => {
  it('consecutive failures reported on two instances at once trip once and pause the registered role until resumed', async () => {
    const { a, b } = apps;
    const people = await companyWithRole(a, 'analyst', { consecutiveFailures: 3 });
    const ids = await claimed(pair(), people, 'analyst', 3);
    await Promise.all(
      ids.map((id, index) => ok(index % 2 === 0 ? a : b, FAIL, { id, error: 'model refused' }, people.agent)),
    );

    const evidence = await expectTrippedOnce(a, people, 'analyst', 'consecutive_failures');
    expect(evidence).toMatchObject({ failed_tasks: 3, threshold: 3 });
    expect([...(evidence.task_ids as string[])].sort()).toEqual([...ids].sort());

    await queueTask(a, people.member, 'analyst');
    await resume(b, people.chairman, 'analyst');
    expect((await ok(a, CLAIM_OUTCOME, { role: 'analyst' }, people.agent)).claimNextTask.outcome).toBe(
      'claimed',
    );
    // The streak starts again after the resume: one more failure does not trip.
    expect((await readRole(a, people.chairman, 'analyst')).paused).toBe(false);
  });

  it('spend above the absolute limit, from completions on two instances, trips once with the sum and the tasks', async () => {
    const { a, b } = apps;
    const people = await companyWithRole(a, 'trader', { spendLimitUsd: 1, spendWindowMinutes: 60 });
    const ids = await claimed(pair(), people, 'trader', 3);
    await complete(a, people.agent, ids[0] as string, 'ok', 0.25);
    await Promise.all([
      complete(a, people.agent, ids[1] as string, 'ok', 0.5),
      complete(b, people.agent, ids[2] as string, 'ok', 0.5),
    ]);
    const evidence = await expectTrippedOnce(a, people, 'trader', 'spend');
    expect(evidence).toMatchObject({
      rule: 'absolute',
      spent_usd: 1.25,
      threshold_usd: 1,
      window_minutes: 60,
    });
    expect([...(evidence.task_ids as string[])].sort()).toEqual([...ids].sort());
  });

  it('spend above k times the trailing rate trips; a role without a trailing rate does not', async () => {
    const { a, b } = apps;
    const people = await companyWithRole(a, 'buyer', { spendMultiple: 5, spendWindowMinutes: 60 });
    const [first, second] = await claimed(pair(), people, 'buyer', 2);
    // Without history nothing is a multiple of anything.
    await complete(a, people.agent, first as string, 'ok', 7);
    expect(await tripsOf(a, people.tenantId, 'buyer')).toEqual([]);
    // That spend moves into the trailing 7 days: $7 a week is $0.041667 an hour, times 5 is $0.208333.
    await a.db.prisma.task.update({
      where: { id: first as string },
      data: { finishedAt: new Date(Date.now() - 2 * 24 * 3600_000) },
    });
    await complete(b, people.agent, second as string, 'ok', 0.3);
    const evidence = await expectTrippedOnce(a, people, 'buyer', 'spend');
    expect(evidence).toMatchObject({
      rule: 'trailing_multiple',
      spent_usd: 0.3,
      multiple: 5,
      trailing_usd_per_window: 0.041667,
      threshold_usd: 0.208333,
      task_ids: [second],
    });
  });

  it('a lease lapsing on the last attempt trips the attempts breaker once, whichever instance sweeps', async () => {
    const { a, b } = apps;
    const people = await companyWithRole(a, 'courier');
    const [id] = await claimed(pair(), people, 'courier', 1);
    await a.db.prisma.task.update({
      where: { id: id as string },
      data: { attempts: 3, leaseExpiresAt: new Date(Date.now() - 1000) },
    });
    await Promise.all([sweepExpiredLeases(a.db.prisma), sweepExpiredLeases(b.db.prisma)]);
    const evidence = await expectTrippedOnce(a, people, 'courier', 'attempts_exceeded');
    expect(evidence).toEqual({ task_id: id, attempts: 3, max_attempts: 3, status: 'failed' });
  });

  it('a task running past its role’s limit trips once from sweeps on both instances', async () => {
    const { a, b } = apps;
    const people = await companyWithRole(a, 'auditor', { maxDurationMinutes: 1 });
    const [id] = await claimed(pair(), people, 'auditor', 1);
    await a.db.prisma.task.update({
      where: { id: id as string },
      data: { startedAt: new Date(Date.now() - 5 * 60_000) },
    });
    await Promise.all([sweepExpiredLeases(a.db.prisma), sweepExpiredLeases(b.db.prisma)]);
    await sweepExpiredLeases(a.db.prisma);
    const evidence = await expectTrippedOnce(a, people, 'auditor', 'duration_exceeded');
    expect(evidence).toMatchObject({ task_id: id, status: 'running', max_duration_minutes: 1 });
    expect(evidence.running_minutes).toBeGreaterThanOrEqual(5);
  });

  it('the same connector call repeated within one task trips once at the limit; other arguments count apart', async () => {
    const { a, b } = apps;
    const people = await companyWithRole(a, 'clerk', { repeatedCallLimit: 3 });
    const operator = await a.caller(['chairman'], { tenantId: people.tenantId });
    const connector = await createConnector(a, operator, 'Customers', {
      base_url: `https://${UPSTREAM_HOST}:${upstream.server.port}/v1`,
      auth_type: 'none',
    });
    const [id] = await claimed(pair(), people, 'clerk', 1);
    const call = (t: typeof a, limit: number) =>
      ok(
        t,
        `mutation Call($id: ID!, $taskId: ID, $input: ConnectorCallInput) {
          invokeConnector(id: $id, endpoint: { method: "GET", path: "/customers" }, input: $input, taskId: $taskId) {
            ... on ConnectorInvocation { status }
          }
        }`,
        { id: connector.id, taskId: id, input: { query: { limit } } },
        people.agent,
      );
    await call(a, 1);
    await call(b, 2);
    await call(b, 1);
    expect(await tripsOf(a, people.tenantId, 'clerk')).toEqual([]);
    await Promise.all([call(a, 1), call(b, 1)]);
    const evidence = await expectTrippedOnce(a, people, 'clerk', 'repeated_call');
    expect(evidence).toMatchObject({
      task_id: id,
      connector_id: connector.id,
      method: 'GET',
      path: '/customers',
      limit: 3,
    });
    expect(evidence.calls).toBeGreaterThanOrEqual(3);
  });

  it('a call named with a task that is not the caller’s running one is refused and nothing is counted', async () => {
    const { a } = apps;
    const people = await companyWithRole(a, 'porter');
    const chairman = await a.caller(['chairman'], { tenantId: people.tenantId });
    const connector = await createConnector(a, chairman, 'Porters', {
      base_url: `https://${UPSTREAM_HOST}:${upstream.server.port}/v1`,
      auth_type: 'none',
    });
    const taskId = await queueTask(a, people.member, 'porter');
    const result = await a.graphql<any, Record<string, unknown>>(
      `mutation Call($id: ID!, $taskId: ID) {
        invokeConnector(id: $id, endpoint: { method: "GET", path: "/customers" }, taskId: $taskId) { __typename }
      }`,
      { id: connector.id, taskId },
      people.agent,
    );
    expect(result.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(await a.db.prisma.connectorCallFingerprint.count({ where: { taskId } })).toBe(0);
  });

  it('a delegation refused as a cycle, tried on two instances, trips the delegating role once', async () => {
    const { a, b } = apps;
    const people = await company(a);
    await queueTask(a, people.member, 'ceo');
    const root = await claim(a, people.agent, 'ceo');
    await delegate(a, people.agent, root.id, [{ role: 'cfo', message: 'Numbers?' }]);
    const cfo = await claim(b, people.agent, 'cfo');
    const attempts = await Promise.all(
      [a, b].map((t) => delegate(t, people.agent, cfo.id, [{ role: 'ceo', message: 'Back to you' }])),
    );
    for (const attempt of attempts) expect(attempt.errors?.[0]?.extensions?.reason).toBe('delegation_cycle');
    const evidence = await expectTrippedOnce(a, people, 'cfo', 'delegation_cycle');
    expect(evidence).toEqual({ task_id: cfo.id, chain: ['ceo', 'cfo', 'ceo'] });
  });

  it('publishes the breaker and its evidence to agentPaused subscribers on the other instance', async () => {
    const { a, b } = apps;
    const people = await companyWithRole(a, 'watcher', { consecutiveFailures: 1 });
    const server = await listen(a);
    try {
      const subscription = await subscribe(server.url, people.member, BreakerPaused, { role: 'watcher' });
      const [id] = await claimed(pair(), people, 'watcher', 1);
      await ok(b, FAIL, { id, error: 'x' }, people.agent);
      const event = await subscription.next();
      await subscription.close();
      const [trip] = await tripsOf(a, people.tenantId, 'watcher');
      expect(event.data?.agentPaused).toMatchObject({
        role: 'watcher',
        actorUserId: 'breaker:consecutive_failures',
        breaker: {
          kind: 'consecutive_failures',
          tripId: trip?.id,
          evidence: { failed_tasks: 1, threshold: 1, task_ids: [id] },
        },
      });
    } finally {
      await server.close();
    }
  });

  it('lists a role’s trips newest first, page by page', async () => {
    const { a } = apps;
    const people = await companyWithRole(a, 'scout', { consecutiveFailures: 1 });
    for (let round = 0; round < 2; round += 1) {
      const [id] = await claimed(pair(), people, 'scout', 1);
      await ok(a, FAIL, { id, error: 'x' }, people.agent);
      await resume(a, people.chairman, 'scout');
    }
    const first = await ok(a, TRIPS, { role: 'scout', first: 1 }, people.member);
    expect(first.breakerTrips.nodes).toHaveLength(1);
    const second = await ok(
      a,
      TRIPS,
      { role: 'scout', first: 1, after: first.breakerTrips.nextCursor },
      people.member,
    );
    expect(second.breakerTrips.nodes).toHaveLength(1);
    expect(second.breakerTrips.nextCursor).toBeNull();
    expect(second.breakerTrips.nodes[0].id).not.toBe(first.breakerTrips.nodes[0].id);
  });
});

describe('breaker policies and pausing registered roles', () => {
  it('answers the defaults for a role without a policy', async () => {
    const people = await companyWithRole(apps.a, 'intern');
    expect((await readRole(apps.a, people.member, 'intern')).breakerPolicy).toEqual({
      custom: false,
      consecutiveFailures: 5,
      maxDurationMinutes: 120,
      repeatedCallLimit: 5,
      spendLimitUsd: null,
      spendMultiple: 5,
    });
  });

  it('refuses a negative threshold or an unknown role with the reason, and writes nothing', async () => {
    const { a } = apps;
    const people = await companyWithRole(a, 'temp');
    const before = await a.db.prisma.auditEntry.count({ where: { tenantId: people.tenantId } });
    const negative = await a.graphql<any, Record<string, unknown>>(
      SET_POLICY,
      { role: 'temp', input: { consecutiveFailures: -1 } },
      people.chairman,
    );
    expect(negative.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      reason: 'out_of_range',
      field: 'consecutiveFailures',
    });
    const unknown = await a.graphql<any, Record<string, unknown>>(
      SET_POLICY,
      { role: 'ghost', input: { consecutiveFailures: 2 } },
      people.chairman,
    );
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', reason: 'unknown_role' });
    const member = await a.graphql<any, Record<string, unknown>>(
      SET_POLICY,
      { role: 'temp', input: { consecutiveFailures: 2 } },
      people.member,
    );
    expect(member.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await a.db.prisma.breakerPolicy.count({ where: { tenantId: people.tenantId } })).toBe(0);
    expect(await a.db.prisma.auditEntry.count({ where: { tenantId: people.tenantId } })).toBe(before);
  });

  it('audits a policy change as breaker_policy.set', async () => {
    const { a } = apps;
    const people = await companyWithRole(a, 'steward');
    const set = await ok(a, SET_POLICY, { role: 'steward', input: { spendLimitUsd: 12.5 } }, people.chairman);
    expect(set.setBreakerPolicy).toMatchObject({ custom: true, spendLimitUsd: 12.5, consecutiveFailures: 5 });
    const audit = await a.db.prisma.auditEntry.findFirstOrThrow({
      where: { tenantId: people.tenantId, action: 'breaker_policy.set' },
    });
    expect(audit.details).toMatchObject({ before: { spendLimitUsd: null }, after: { spendLimitUsd: 12.5 } });
  });

  it('pauses and resumes a registered role over GraphQL; the REST route keeps to the C-suite', async () => {
    const { a } = apps;
    const people = await companyWithRole(a, 'planner');
    await ok(a, 'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }', {}, people.chairman);
    const paused = await ok(
      a,
      PAUSE,
      { role: 'Planner', input: { actorUserId: 'chair-1' } },
      people.chairman,
    );
    expect(paused.pauseAgent).toMatchObject({ role: 'planner', paused: true });
    expect(await readRole(a, people.chairman, 'planner')).toMatchObject({
      paused: true,
      pausedBy: 'chair-1',
    });
    await resume(a, people.chairman, 'planner');

    const unknown = await a.graphql<any, Record<string, unknown>>(
      PAUSE,
      { role: 'ghost', input: { actorUserId: 'chair-1' } },
      people.chairman,
    );
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_REQUEST', reason: 'unknown_role' });

    const rest = await a.rest('POST', '/api/v1/dogfood/agents/planner/pause', {
      caller: people.chairman,
      body: { actor_user_id: 'chair-1' },
    });
    expect(rest.status).toBe(400);
    expect((await readRole(a, people.chairman, 'planner')).paused).toBe(false);
  });

  it('shows the pause reason to the chairman only', async () => {
    const { a } = apps;
    const people = await companyWithRole(a, 'runner', { consecutiveFailures: 1 });
    const [id] = await claimed(pair(), people, 'runner', 1);
    await ok(a, FAIL, { id, error: 'x' }, people.agent);
    expect((await readRole(a, people.chairman, 'runner')).pauseReason).toMatch(/1 tasks failed in a row/);
    expect((await readRole(a, people.member, 'runner')).pauseReason).toBeNull();
  });
});
