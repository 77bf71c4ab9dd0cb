import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimWaitersOf } from '../../src/domain/agents/claim-wait.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/eventually.js';
import { listen } from '../support/ws.js';
import { queueTask } from './agents-support.js';

const ClaimWaiting = graphql(`
  mutation AgentsClaimWaiting($role: String!, $waitSeconds: Int) {
    claimNextTask(role: $role, waitSeconds: $waitSeconds) {
      outcome
      task {
        id
        status
        claimedBy
      }
    }
  }
`);

async function tenant(t: TestApp) {
  const member = await t.caller(['member']);
  const agent = await t.caller(['agent'], { tenantId: member.tenantId, sub: `agent-${member.sub}` });
  await t.app.services.tenants.ensure(member.tenantId);
  return { member, agent };
}

const waiters = (t: TestApp) => claimWaitersOf(t.app.services.bus).size;

/** Starts a waiting claim and resolves, with its answer to come, once its waiter is registered. */
async function waitingClaim(t: TestApp, agent: Caller, role: string, waitSeconds = 30) {
  const before = waiters(t);
  const answer = t.graphql(ClaimWaiting, { role, waitSeconds }, agent);
  await eventually(() => expect(waiters(t)).toBe(before + 1));
  return { answer };
}

describe('claimNextTask(waitSeconds) on one instance', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('without waitSeconds, or with 0, answers at once as before', async () => {
    const { agent } = await tenant(t);

    for (const waitSeconds of [undefined, 0]) {
      const result = await t.graphql(ClaimWaiting, { role: 'cfo', waitSeconds }, agent);
      expect(result.data?.claimNextTask).toEqual({ outcome: 'queue_empty', task: null });
    }
    expect(waiters(t)).toBe(0);
  });

  it('a waiting claim is handed the task a chat queues for its role', async () => {
    const { member, agent } = await tenant(t);
    const { answer: claim } = await waitingClaim(t, agent, 'cfo');

    const id = await queueTask(t, member, 'cfo');

    const result = await claim;
    expect(result.data?.claimNextTask).toEqual({
      outcome: 'claimed',
      task: { id, status: 'running', claimedBy: agent.sub },
    });
    expect(waiters(t)).toBe(0);
  });

  it('one task wakes one of two waiters; the other keeps waiting for the next', async () => {
    const { member, agent } = await tenant(t);
    const { answer: first } = await waitingClaim(t, agent, 'cto');
    const { answer: second } = await waitingClaim(t, agent, 'cto');

    const one = await queueTask(t, member, 'cto', 'one');
    const answered = await first;
    expect(answered.data?.claimNextTask.task?.id).toBe(one);
    expect(waiters(t)).toBe(1);

    const two = await queueTask(t, member, 'cto', 'two');
    expect((await second).data?.claimNextTask.task?.id).toBe(two);
  });

  it('work for another role or another tenant does not end the wait', async () => {
    const { member, agent } = await tenant(t);
    const other = await tenant(t);
    const { answer: claim } = await waitingClaim(t, agent, 'cmo');

    await queueTask(t, member, 'ceo', 'another role');
    await queueTask(t, other.member, 'cmo', 'another tenant');
    const own = await queueTask(t, member, 'cmo', 'own');

    expect((await claim).data?.claimNextTask.task?.id).toBe(own);
    expect(
      await t.db.prisma.task.count({ where: { tenantId: other.member.tenantId, status: 'pending' } }),
    ).toBe(1);
  });

  it('answers the reason when the deadline passes with nothing', async () => {
    const { agent } = await tenant(t);

    const result = await t.graphql(ClaimWaiting, { role: 'coo', waitSeconds: 1 }, agent);

    expect(result.data?.claimNextTask).toEqual({ outcome: 'queue_empty', task: null });
    expect(waiters(t)).toBe(0);
  });

  it('refuses a wait out of 0..30 with BAD_USER_INPUT and registers no waiter', async () => {
    const { agent } = await tenant(t);

    for (const waitSeconds of [-1, 31]) {
      const result = await t.graphql(ClaimWaiting, { role: 'cfo', waitSeconds }, agent);
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(waiters(t)).toBe(0);
  });

  it('answers NOT_FOUND for an unknown role and FORBIDDEN to a member, without waiting', async () => {
    const { member, agent } = await tenant(t);

    const unknown = await t.graphql(ClaimWaiting, { role: 'cso', waitSeconds: 30 }, agent);
    const refused = await t.graphql(ClaimWaiting, { role: 'cfo', waitSeconds: 30 }, member);

    expect(unknown.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(waiters(t)).toBe(0);
  });

  describe('over HTTP', () => {
    let server: RunningServer;
    beforeAll(async () => {
      server = await listen(t);
    });
    afterAll(() => server.close());

    it('a client that goes away releases its waiter', async () => {
      const { agent } = await tenant(t);
      const controller = new AbortController();
      const request = fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
        body: JSON.stringify({
          query: 'mutation { claimNextTask(role: "cfo", waitSeconds: 30) { outcome } }',
        }),
        signal: controller.signal,
      }).catch((error: unknown) => error);
      await eventually(() => expect(waiters(t)).toBe(1));

      controller.abort();

      expect(await request).toBeInstanceOf(Error);
      await eventually(() => expect(waiters(t)).toBe(0));
    });
  });
});

describe('many claims waiting at once', () => {
  let t: TestApp;
  let server: RunningServer;
  beforeAll(async () => {
    // A database budget above the bursts: a request holds its place from the door (once its body is read)
    // until its claim starts waiting, so over sockets a burst larger than the budget may have more requests
    // past the door than the budget before the first of them waits, and those are refused 503 at once
    // (the door's own tests cover that). Here every claim gets in, and the claims must cost one attempt.
    t = await createTestApp({ env: { DATABASE_QUEUE_SIZE: '2000' } });
    server = await listen(t);
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
  });

  /** Polls (without a deadline of its own: the test's) until `done` holds. */
  async function until(done: () => boolean) {
    while (!done()) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  /**
   * A waiting claim over HTTP, as agents send them (in process, a burst reaches the door all at once,
   * before any claim has started to wait: over sockets each request goes its own way to the resolver).
   */
  async function claimOverHttp(agent: Caller, waitSeconds: number, signal?: AbortSignal) {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
      body: JSON.stringify({
        query: `mutation { claimNextTask(role: "cfo", waitSeconds: ${waitSeconds}) { outcome task { id } } }`,
      }),
      signal,
    });
    return { status: response.status, body: (await response.json()) as Record<string, never> };
  }

  it('1,000 claims sent at once all wait (no 503), on one attempt; chats wake them one each', async () => {
    const { member, agent } = await tenant(t);
    const registry = claimWaitersOf(t.app.services.bus);
    const attemptsBefore = registry.attempts;
    const controller = new AbortController();
    const answered: { status: number; body: unknown }[] = [];
    const claims = Array.from({ length: 1000 }, () =>
      claimOverHttp(agent, 30, controller.signal).then(
        (answer) => answered.push(answer),
        (error: unknown) => error,
      ),
    );

    // A claim refused at the door, or by the database, answers at once; a waiting one does not.
    await until(() => registry.waiting === 1000 || answered.length > 0);
    expect(answered).toEqual([]);
    expect(registry.attempts - attemptsBefore).toBe(1);

    const queued = [];
    for (const message of ['one', 'two', 'three']) {
      queued.push(await queueTask(t, member, 'cfo', message));
      await until(() => answered.length === queued.length);
    }
    expect(answered).toEqual(
      queued.map((id) => ({
        status: 200,
        body: { data: { claimNextTask: { outcome: 'claimed', task: { id } } } },
      })),
    );
    expect(registry.waiting).toBe(997);

    controller.abort();
    await Promise.all(claims);
    await eventually(() => expect(registry.size).toBe(0));
  });

  it('300 claims sent at once answer queue_empty at their deadline', async () => {
    const { agent } = await tenant(t);

    const results = await Promise.all(Array.from({ length: 300 }, () => claimOverHttp(agent, 1)));

    const answer = { status: 200, body: { data: { claimNextTask: { outcome: 'queue_empty', task: null } } } };
    expect(results).toEqual(results.map(() => answer));
    expect(waiters(t)).toBe(0);
  });

  it('a chat committed while claims start waiting is claimed: no task is missed', async () => {
    const { member, agent } = await tenant(t);
    // One claim waits already; its answer stands for the claims that start waiting after it.
    const { answer: first } = await waitingClaim(t, agent, 'cmo');
    const claims = [first];
    const queued: string[] = [];
    // The chat goes out before, among and after the new claims' first answers.
    for (const head of [0, 10, 20]) {
      for (let index = 0; index < 20; index += 1) {
        if (index === head) queued.push(await queueTask(t, member, 'cmo', `head ${head}`));
        claims.push(t.graphql(ClaimWaiting, { role: 'cmo', waitSeconds: 30 }, agent));
      }
      if (head === 20) queued.push(await queueTask(t, member, 'cmo', `head ${head}`));
    }
    // Enough chats for every claim: each task is claimed once, and each claim is handed one.
    while (queued.length < claims.length) queued.push(await queueTask(t, member, 'cmo', 'more'));

    const results = await Promise.all(claims);

    expect(results.map((result) => result.data?.claimNextTask.outcome)).toEqual(claims.map(() => 'claimed'));
    expect(new Set(results.map((result) => result.data?.claimNextTask.task?.id))).toEqual(new Set(queued));
    expect(waiters(t)).toBe(0);
  });
});

describe('a waiting claim and the database budget', () => {
  let t: TestApp;
  beforeAll(async () => {
    // A budget of one request in flight (DATABASE_POOL_SIZE + DATABASE_QUEUE_SIZE).
    t = await createTestApp({ env: { DATABASE_POOL_SIZE: '1', DATABASE_QUEUE_SIZE: '0' } });
  });
  afterAll(() => t.close());

  it('gives its place back while it waits: another request is served and wakes it', async () => {
    const { member, agent } = await tenant(t);
    const { answer: claim } = await waitingClaim(t, agent, 'cfo');

    // Once its first attempt is done the claim only waits; holding the one place, it would turn every
    // other request away with 503 until its wait ends.
    const id = await eventually(() => queueTask(t, member, 'cfo'));

    expect((await claim).data?.claimNextTask).toEqual({
      outcome: 'claimed',
      task: { id, status: 'running', claimedBy: agent.sub },
    });
  });
});

describe.runIf(databaseKind === 'postgresql')('claimNextTask(waitSeconds) across instances', () => {
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    database = await createTestDatabase();
    a = await createTestApp({ database });
    b = await createTestApp({ database });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  it('a chat sent on instance A wakes a claim waiting on instance B', async () => {
    const { member, agent } = await tenant(a);
    const { answer: claim } = await waitingClaim(b, agent, 'cfo');

    const id = await queueTask(a, member, 'cfo');

    expect((await claim).data?.claimNextTask).toEqual({
      outcome: 'claimed',
      task: { id, status: 'running', claimedBy: agent.sub },
    });
    expect(waiters(b)).toBe(0);
  });
});
