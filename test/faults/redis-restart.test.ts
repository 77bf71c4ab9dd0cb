import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { productionId, promote, register } from '../schema/finetuning-support.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { createRedisServer, type RedisServer } from '../support/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { listen, type Subscription, subscribe } from '../support/ws.js';

// Redis killed (SIGKILL) and started again while two instances sharing it and one database take a
// steady stream of pauses and resumes, with subscribers on both; and one instance cut off from Redis
// while the other goes on publishing. PGlite is embedded: the two instances share one in-process
// database there, and Redis still carries the events between their buses. Instance B reaches Redis
// through a TCP proxy the test can cut.

const SetLiveMode = graphql(`
  mutation FaultsLiveMode($enabled: Boolean!) {
    setDogfoodLiveMode(enabled: $enabled) {
      dogfoodLiveMode
    }
  }
`);

const Events = graphql(`
  subscription FaultsEvents($after: ID) {
    events(after: $after) {
      __typename
      ... on AgentPausedEvent {
        eventId
      }
      ... on AgentResumedEvent {
        eventId
      }
      ... on TaskUpdatedEvent {
        eventId
      }
      ... on ModelVersionChangedEvent {
        eventId
      }
      ... on ConnectorInvokedEvent {
        eventId
      }
    }
  }
`);

const ROLES = ['ceo', 'cfo', 'coo', 'cto', 'cmo', 'cpo', 'chro', 'clo'] as const;
/** Acknowledged writes to wait for in each phase: before the outage, during it and after it. */
const PER_PHASE = 12;

/** Resolves once `check` holds, asking again every 20 ms; rejects after `limitMs`. */
async function until(what: string, check: () => Promise<boolean> | boolean, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${limitMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

type EventsResult = { events: { __typename: string; eventId?: string } };

/** The next event's id, past the EventStreamStarted message a subscription opens with. */
async function nextEventId(subscription: Subscription<EventsResult>, timeoutMs: number): Promise<string> {
  for (;;) {
    const result = await subscription.next(timeoutMs);
    expect(result.errors).toBeUndefined();
    if (result.data?.events.__typename !== 'EventStreamStarted') return result.data?.events.eventId as string;
  }
}

/** Reads a subscription until `last` arrives; returns every event id received, in order. */
async function readUntil(subscription: Subscription<EventsResult>, last: string, into: string[] = []) {
  while (into.at(-1) !== last) into.push(await nextEventId(subscription, 20_000));
  return into;
}

/** Whatever a subscription has received so far, without waiting for more. */
async function drainReceived(subscription: Subscription<EventsResult>, into: string[]) {
  for (;;) {
    const id = await nextEventId(subscription, 0).catch(() => undefined);
    if (!id) return into;
    into.push(id);
  }
}

const duplicates = (ids: string[]) => ids.filter((id, index) => ids.indexOf(id) !== index);

describe('Redis faults with two instances', () => {
  let redis: RedisServer;
  let proxy: TcpProxy;
  let database: TestDatabase;
  let a: TestApp;
  let b: TestApp;
  let serverA: RunningServer;
  let serverB: RunningServer;

  beforeAll(async () => {
    redis = await createRedisServer();
    await redis.start();
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(redis.url).port) });
    database = await createTestDatabase();
    a = await createTestApp({ database, env: { REDIS_URL: redis.url } });
    b = await createTestApp({ database, env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}` } });
    serverA = await listen(a);
    serverB = await listen(b);
  });
  afterAll(async () => {
    await serverA?.close();
    await serverB?.close();
    await a?.close();
    await b?.close();
    await database?.drop();
    await proxy?.close();
    await redis?.kill();
  });

  const bus = async (server: RunningServer) => {
    const response = await fetch(`${server.url}/readyz`);
    const body = (await response.json()) as { status: string; bus: string };
    return { http: response.status, ...body };
  };
  const busOf = async (state: string) =>
    (await bus(serverA)).bus === state && (await bus(serverB)).bus === state;

  it('Redis killed and restarted under load: nothing acknowledged lost, nothing duplicated, both serve', async () => {
    const chairman: Caller = await a.caller(['chairman']);
    await a.graphql(SetLiveMode, { enabled: true }, chairman);
    const liveA = await subscribe(serverA.url, chairman, Events, {});
    const liveB = await subscribe(serverB.url, chairman, Events, {});
    // Leaves during the outage and comes back on the other instance with `after`.
    const resumer = await subscribe(serverB.url, chairman, Events, {});

    // One writer per role, pausing and resuming it in turn, alternating between the instances.
    const acknowledged: string[] = [];
    const refused: { status: number; body: string }[] = [];
    let stop = false;
    const writers = ROLES.map(async (role, index) => {
      for (let n = index; !stop; n += 1) {
        const server = n % 2 === 0 ? serverA : serverB;
        const action = (n - index) % 2 === 0 ? 'pause' : 'resume';
        const response = await fetch(`${server.url}/api/v1/dogfood/agents/${role}/${action}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${chairman.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ actor_user_id: 'chair-1' }),
        });
        if (response.ok) acknowledged.push(((await response.json()) as { event_id: string }).event_id);
        else refused.push({ status: response.status, body: await response.text() });
      }
    });

    const resumerSaw: string[] = [];
    try {
      await until('writes before the outage', () => acknowledged.length >= PER_PHASE);
      resumerSaw.push(await nextEventId(resumer, 20_000));

      await redis.kill();
      await until('both instances see the bus down', () => busOf('disconnected'));
      const duringFrom = acknowledged.length;
      await until('writes during the outage', () => acknowledged.length >= duringFrom + PER_PHASE);
      // Nothing published while Redis is down: what was written now waits in the outbox.
      const waiting = await database.db.prisma.outboxEvent.count({
        where: { tenantId: chairman.tenantId, publishedAt: null },
      });
      expect(waiting).toBeGreaterThan(0);
      // The resuming client goes away in the middle of the outage, with what it has received so far.
      await drainReceived(resumer, resumerSaw);
      await resumer.close();
      // Degraded, not unready, on both.
      expect(await bus(serverA)).toEqual({ http: 200, status: 'ready', bus: 'disconnected' });
      expect(await bus(serverB)).toEqual({ http: 200, status: 'ready', bus: 'disconnected' });

      await redis.start();
      await until('both instances see the bus again', () => busOf('connected'));
      const afterFrom = acknowledged.length;
      await until('writes after the outage', () => acknowledged.length >= afterFrom + PER_PHASE);
    } finally {
      stop = true;
      await Promise.all(writers);
    }
    expect(refused).toEqual([]);

    // Every event reaches Redis once it is back: the outbox empties.
    await until('the outbox is drained', async () => {
      await Promise.all([a.app.services.relay.kick(), b.app.services.relay.kick()]);
      return (
        (await database.db.prisma.outboxEvent.count({
          where: { tenantId: chairman.tenantId, publishedAt: null },
        })) === 0
      );
    });
    const rows = await database.db.prisma.outboxEvent.findMany({
      where: { tenantId: chairman.tenantId },
      orderBy: { seq: 'asc' },
      select: { id: true },
    });
    const published = rows.map((row) => row.id);
    expect(published).toEqual(expect.arrayContaining(acknowledged));
    const last = published.at(-1) as string;

    // A client that resumes with `after` (its last event) gets the rest exactly once, in commit order.
    const resumed = await subscribe(serverA.url, chairman, Events, { after: resumerSaw.at(-1) as string });
    const resumedSaw = await readUntil(resumed, last);
    await resumed.close();
    const whole = [...resumerSaw, ...resumedSaw];
    expect(duplicates(whole)).toEqual([]);
    expect(whole).toEqual(published);

    // Subscribers that stayed connected receive each event at most once, in commit order (an event
    // whose delivery the kill cut off is the one a live subscriber can miss; see docs/guarantees.md).
    for (const live of [liveA, liveB]) {
      const saw = await readUntil(live, last);
      await live.close();
      expect(duplicates(saw)).toEqual([]);
      expect(saw).toEqual(published.filter((id) => saw.includes(id)));
      expect(published.filter((id) => !saw.includes(id))).toEqual([]);
    }

    // Both instances are alive and serving, and the bus is connected again.
    for (const server of [serverA, serverB]) {
      expect(await bus(server)).toEqual({ http: 200, status: 'ready', bus: 'connected' });
    }
  }, 60_000);

  it('one instance cut off from Redis: its live subscriber and its cache catch up with the other', async () => {
    const chairman: Caller = await a.caller(['chairman']);
    await a.graphql(SetLiveMode, { enabled: true }, chairman);
    const operator = await a.caller(['operator']);
    // B caches that the model has no production version yet (for 30 s). No model version event has
    // reached B before, so nothing else clears its cache during this test.
    expect(await productionId(b, operator, 'partition')).toBeNull();
    const live = await subscribe(serverB.url, chairman, Events, {});
    const pause = async (role: string, action = 'pause') => {
      const response = await a.rest('POST', `/api/v1/dogfood/agents/${role}/${action}`, {
        caller: chairman,
        body: { actor_user_id: 'chair-1' },
      });
      expect(response.status).toBe(200);
      await a.app.services.relay.kick();
      return response.body.event_id as string;
    };
    const before = await pause('ceo');
    expect(await readUntil(live, before)).toEqual([before]);

    await proxy.stop();
    await until('B sees the bus down', async () => (await bus(serverB)).bus === 'disconnected');
    expect((await bus(serverA)).bus).toBe('connected');
    // A publishes these while B cannot hear them.
    const missed = [await pause('cfo'), await pause('coo'), await pause('ceo', 'resume')];
    const production = await register(a, operator, 'partition');
    await promote(a, operator, production);
    await a.app.services.relay.kick();
    const published = await database.db.prisma.outboxEvent.count({
      where: { id: { in: missed }, publishedAt: { not: null } },
    });
    expect(published).toBe(missed.length);

    await proxy.resume();
    await until('B sees the bus again', () => busOf('connected'));
    // The invalidation B missed: its cache is dropped when its subscription is confirmed again.
    await expect
      .poll(() => productionId(b, operator, 'partition'), { timeout: 2000, interval: 20 })
      .toBe(production);
    const after = await pause('cto');
    const saw = await readUntil(live, after);
    await live.close();
    expect(saw).toEqual([...missed, after]);
  }, 60_000);
});
