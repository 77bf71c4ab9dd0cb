import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimWaitersOf } from '../../src/domain/agents/claim-wait.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';
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
  await vi.waitFor(() => expect(waiters(t)).toBe(before + 1));
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
      await vi.waitFor(() => expect(waiters(t)).toBe(1));

      controller.abort();

      expect(await request).toBeInstanceOf(Error);
      await vi.waitFor(() => expect(waiters(t)).toBe(0));
    });
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
    const id = await vi.waitFor(() => queueTask(t, member, 'cfo'), { timeout: 5000 });

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
