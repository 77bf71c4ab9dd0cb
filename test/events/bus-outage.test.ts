import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createRedisServer, type RedisServer } from '../support/redis-server.js';
import { listen, subscribe } from '../support/ws.js';

const SetLiveMode = graphql(`
  mutation OutageLiveMode($enabled: Boolean!) {
    setDogfoodLiveMode(enabled: $enabled) {
      dogfoodLiveMode
    }
  }
`);

const AgentPaused = graphql(`
  subscription OutageAgentPaused($role: String) {
    agentPaused(role: $role) {
      eventId
      role
    }
  }
`);

/** Resolves once `check` holds, asking again on each turn of a short timer; rejects after `limitMs`. */
async function until(check: () => Promise<boolean>, limitMs = 20_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the bus while its Redis is down', () => {
  let redis: RedisServer;
  let t: TestApp;
  let server: RunningServer;
  beforeAll(async () => {
    redis = await createRedisServer();
    await redis.start();
    t = await createTestApp({ env: { REDIS_URL: redis.url } });
    server = await listen(t);
  });
  afterAll(async () => {
    await server?.close();
    await t?.close();
    await redis?.kill();
  });

  const readiness = async () => {
    const response = await fetch(`${server.url}/readyz`);
    return { status: response.status, body: (await response.json()) as { status: string; bus: string } };
  };

  it('keeps a pause in the outbox, stays up and ready, and delivers the event once Redis is back', async () => {
    const chairman = await t.caller(['chairman']);
    await t.graphql(SetLiveMode, { enabled: true }, chairman);
    const subscription = await subscribe(server.url, chairman, AgentPaused, { role: null });
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', bus: 'connected' } });

    await redis.kill();
    await until(async () => (await readiness()).body.bus === 'disconnected');
    // Degraded, not unready: reads and writes still work and the outbox keeps the events.
    expect(await readiness()).toEqual({ status: 200, body: { status: 'ready', bus: 'disconnected' } });

    const paused = await t.rest('POST', '/api/v1/dogfood/agents/cto/pause', {
      caller: chairman,
      body: { actor_user_id: 'chair-1' },
    });
    expect(paused.status).toBe(200);
    await t.app.services.relay.kick();
    const row = await t.db.prisma.outboxEvent.findUniqueOrThrow({ where: { id: paused.body.event_id } });
    expect(row.publishedAt).toBeNull();

    await redis.start();
    const delivered = await subscription.next(30_000);
    expect(delivered.data?.agentPaused).toEqual({ eventId: paused.body.event_id, role: 'cto' });
    // The pass that published it commits right after: wait for the relay's pass under way.
    await t.app.services.relay.kick();
    const published = await t.db.prisma.outboxEvent.findUniqueOrThrow({
      where: { id: paused.body.event_id },
    });
    expect(published.publishedAt).not.toBeNull();

    // Once: the next event the subscriber receives is the next pause, not the first one again.
    const next = await t.rest('POST', '/api/v1/dogfood/agents/cfo/pause', {
      caller: chairman,
      body: { actor_user_id: 'chair-1' },
    });
    expect((await subscription.next(30_000)).data?.agentPaused).toEqual({
      eventId: next.body.event_id,
      role: 'cfo',
    });
    await subscription.close();
    expect((await readiness()).body.bus).toBe('connected');
  }, 90_000);

  it('starts while Redis is down, and publishes what waited once Redis is up', async () => {
    const late = await createRedisServer();
    const instance = await createTestApp({ env: { REDIS_URL: late.url } });
    try {
      expect(instance.app.services.bus.status()).toBe('disconnected');
      const chairman = await instance.caller(['chairman']);
      await instance.graphql(SetLiveMode, { enabled: true }, chairman);
      const paused = await instance.rest('POST', '/api/v1/dogfood/agents/cto/pause', {
        caller: chairman,
        body: { actor_user_id: 'chair-1' },
      });
      expect(paused.status).toBe(200);
      await instance.app.services.relay.kick();
      const waiting = await instance.db.prisma.outboxEvent.findUniqueOrThrow({
        where: { id: paused.body.event_id },
      });
      expect(waiting.publishedAt).toBeNull();

      await late.start();
      const received = instance.app.services.bus.subscribe('DOGFOOD_AGENT_PAUSED', chairman.tenantId);
      const iterator = received[Symbol.asyncIterator]();
      // The subscription is confirmed before the relay may publish, so the waiting event reaches it.
      const first = await iterator.next();
      await iterator.return?.();
      expect(first.value?.eventId).toBe(paused.body.event_id);
      expect(instance.app.services.bus.status()).toBe('connected');
    } finally {
      await instance.close();
      await late.kill();
    }
  }, 90_000);
});
