import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase } from '../support/database.js';
import { serveTestApp } from '../support/fixtures.js';
import { closeCodeFor, listen, subscribe } from '../support/ws.js';

const SetLiveMode = graphql(`
  mutation EnableLiveMode($enabled: Boolean!) {
    setDogfoodLiveMode(enabled: $enabled) {
      dogfoodLiveMode
    }
  }
`);

const AgentPaused = graphql(`
  subscription OnAgentPaused($role: String) {
    agentPaused(role: $role) {
      eventId
      tenantId
      role
      actorUserId
      pausedAt
    }
  }
`);

const AgentResumed = graphql(`
  subscription OnAgentResumed {
    agentResumed {
      eventId
      role
      resumedAt
    }
  }
`);

const AuditLog = graphql(`
  query DogfoodAudit($action: String) {
    auditLog(action: $action) {
      nodes {
        action
        outcome
        actor
        details
      }
    }
  }
`);

const pause = (
  t: TestApp,
  caller: Caller,
  role: string,
  body: unknown = { actor_user_id: 'chair-1', reason: 'secret reason' },
) => t.rest('POST', `/api/v1/dogfood/agents/${role}/pause`, { caller, body });

async function liveChairman(t: TestApp, tenantId?: string) {
  const chairman = await t.caller(['chairman'], tenantId ? { tenantId } : {});
  await t.graphql(SetLiveMode, { enabled: true }, chairman);
  return chairman;
}

describe('dogfood pause', () => {
  let t: TestApp;
  let server: RunningServer;
  serveTestApp((app) => ({ t, server } = app));

  it('delivers the event with the event_id of the REST response, without the reason', async () => {
    const chairman = await liveChairman(t);
    const subscription = await subscribe(server.url, chairman, AgentPaused, { role: 'cto' });
    const response = await pause(t, chairman, 'cto');
    const event = await subscription.next();
    await subscription.close();
    expect(event.data?.agentPaused).toEqual({
      eventId: response.body.event_id,
      tenantId: chairman.tenantId,
      role: 'cto',
      actorUserId: 'chair-1',
      pausedAt: response.body.paused_at,
    });
    expect(JSON.stringify(event)).not.toContain('secret reason');
    const outbox = await t.db.prisma.outboxEvent.findUniqueOrThrow({ where: { id: response.body.event_id } });
    expect(JSON.stringify(outbox.payload)).not.toContain('secret reason');
  });

  it('answers a repeat with the original pause, emits nothing new and audits already_paused', async () => {
    const chairman = await liveChairman(t);
    const subscription = await subscribe(server.url, chairman, AgentPaused, { role: null });
    const first = await pause(t, chairman, 'coo');
    expect((await subscription.next()).data?.agentPaused.eventId).toBe(first.body.event_id);

    const second = await pause(t, chairman, 'coo', { actor_user_id: 'chair-2' });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(
      await t.db.prisma.outboxEvent.count({
        where: { tenantId: chairman.tenantId, type: 'DOGFOOD_AGENT_PAUSED' },
      }),
    ).toBe(1);
    const audit = await t.graphql(AuditLog, { action: 'agent.pause' }, chairman);
    expect(audit.data?.auditLog.nodes.map((entry) => entry.outcome)).toEqual(['already_paused', 'paused']);
    expect(audit.data?.auditLog.nodes[1]?.details).toMatchObject({ reason: 'secret reason' });

    // Events reach a subscriber in the order they were committed: had the repeat emitted anything, it
    // would arrive before the pause of another role.
    const next = await pause(t, chairman, 'cfo');
    expect((await subscription.next()).data?.agentPaused).toMatchObject({
      eventId: next.body.event_id,
      role: 'cfo',
    });
    await subscription.close();
  });

  it('delivers nothing to a subscriber of another tenant', async () => {
    const chairman = await liveChairman(t);
    const outsider = await liveChairman(t);
    const subscription = await subscribe(server.url, outsider, AgentPaused, { role: null });
    expect((await pause(t, chairman, 'cmo')).status).toBe(200);
    // The outsider's own pause is committed after the other tenant's: it must be the first event seen.
    const own = await pause(t, outsider, 'cmo');
    expect((await subscription.next()).data?.agentPaused).toMatchObject({
      eventId: own.body.event_id,
      tenantId: outsider.tenantId,
    });
    await subscription.close();
  });

  it('resumes a paused role and publishes DOGFOOD_AGENT_RESUMED', async () => {
    const chairman = await liveChairman(t);
    await pause(t, chairman, 'cpo');
    const subscription = await subscribe(server.url, chairman, AgentResumed, {});
    const response = await t.rest('POST', '/api/v1/dogfood/agents/cpo/resume', {
      caller: chairman,
      body: { actor_user_id: 'chair-1' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ role: 'cpo', paused: false });
    const event = await subscription.next();
    await subscription.close();
    expect(event.data?.agentResumed).toEqual({
      eventId: response.body.event_id,
      role: 'cpo',
      resumedAt: response.body.resumed_at,
    });
  });

  it('answers 409 when resuming a role that was never paused', async () => {
    const chairman = await liveChairman(t);
    const response = await t.rest('POST', '/api/v1/dogfood/agents/clo/resume', {
      caller: chairman,
      body: { actor_user_id: 'c' },
    });
    expect(response.status).toBe(409);
    expect(response.body).toEqual({ detail: "Agent role 'clo' is not paused" });
  });

  it('closes a socket with a bad token with 4401', async () => {
    expect(await closeCodeFor(server.url, { authorization: 'Bearer nope' })).toBe(4401);
    expect(await closeCodeFor(server.url, {})).toBe(4401);
  });
});

describe('dogfood pause errors, in the documented order', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('answers 403 to a member, operator or agent', async () => {
    for (const role of ['member', 'operator', 'agent'] as const) {
      const caller = await t.caller([role]);
      const response = await pause(t, caller, 'ceo');
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ detail: 'Not allowed for your role' });
    }
  });

  it('answers 422 before 400 for a bad body on an unknown role', async () => {
    const chairman = await t.caller(['chairman']);
    const response = await pause(t, chairman, 'janitor', { actor_user_id: 12 });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: 'string_type',
        loc: ['body', 'actor_user_id'],
        msg: 'Input should be a valid string',
        input: 12,
      },
    ]);
  });

  it('answers 422 for a missing body', async () => {
    const chairman = await t.caller(['chairman']);
    const response = await t.rest('POST', '/api/v1/dogfood/agents/ceo/pause', { caller: chairman });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }],
    });
  });

  it('answers 422 json_invalid for malformed JSON', async () => {
    const chairman = await t.caller(['chairman']);
    const response = await t.rest('POST', '/api/v1/dogfood/agents/ceo/pause', {
      caller: chairman,
      body: '{"actor_user_id": ',
    });
    expect(response.status).toBe(422);
    expect(response.body.detail[0]).toMatchObject({
      type: 'json_invalid',
      loc: ['body', expect.any(Number)],
    });
  });

  it('answers 400 for a role outside the C-suite, before the live-mode check', async () => {
    const chairman = await t.caller(['chairman']);
    const response = await pause(t, chairman, 'janitor');
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/Unknown role 'janitor'/);
  });

  it('answers 400 when the tenant is not in dogfood live mode, and writes nothing', async () => {
    const chairman = await t.caller(['chairman']);
    const response = await pause(t, chairman, 'ceo');
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ detail: 'Tenant is not in dogfood live mode' });
    expect(await t.db.prisma.outboxEvent.count({ where: { tenantId: chairman.tenantId } })).toBe(0);
    expect(await t.db.prisma.agentRole.count({ where: { tenantId: chairman.tenantId, paused: true } })).toBe(
      0,
    );
    expect(
      await t.db.prisma.auditEntry.count({ where: { tenantId: chairman.tenantId, action: 'agent.pause' } }),
    ).toBe(0);
  });

  it('matches the role case-insensitively and answers in lower case', async () => {
    const chairman = await liveChairman(t);
    const response = await pause(t, chairman, 'CHRO');
    expect(response.body.role).toBe('chro');
  });

  it('keeps the audit log from members', async () => {
    const member = await t.caller(['member']);
    const result = await t.graphql(AuditLog, { action: null }, member);
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });
});

describe('events across instances and crashes', () => {
  // Instances share events through Redis; the postgres project runs with it (PGlite is single-instance).
  it.runIf(process.env.TEST_DB === 'postgres')(
    'delivers a pause committed by one instance to a subscriber of another',
    async () => {
      const database = await createTestDatabase();
      const a = await createTestApp({ database });
      const b = await createTestApp({ database });
      const serverB = await listen(b);
      try {
        const chairman = await liveChairman(a);
        const subscription = await subscribe(serverB.url, chairman, AgentPaused, { role: null });
        const response = await pause(a, chairman, 'cfo');
        const event = await subscription.next(5000);
        await subscription.close();
        expect(event.data?.agentPaused.eventId).toBe(response.body.event_id);
      } finally {
        await serverB.close();
        await a.close();
        await b.close();
        await database.drop();
      }
    },
  );

  it('publishes after restart an event that was committed but not published', async () => {
    const database = await createTestDatabase();
    const crashed = await createTestApp({ database });
    const chairman = await liveChairman(crashed);
    await crashed.app.services.relay.stop();
    const response = await pause(crashed, chairman, 'ceo');
    await crashed.close();
    expect(
      await database.db.prisma.outboxEvent.findUniqueOrThrow({ where: { id: response.body.event_id } }),
    ).toMatchObject({
      publishedAt: null,
    });

    const restarted = await createTestApp({ database });
    try {
      // The restarted relay's first pass may publish before a subscriber of this test could listen, so the
      // proof is the row: the relay commits its published_at stamp only after the bus accepted the event.
      await vi.waitFor(
        async () => {
          const row = await database.db.prisma.outboxEvent.findUniqueOrThrow({
            where: { id: response.body.event_id },
          });
          expect(row.publishedAt).not.toBeNull();
        },
        { timeout: 5000, interval: 50 },
      );
    } finally {
      await restarted.close();
      await database.drop();
    }
  });

  it('never delivers the same event id twice to one subscriber', async () => {
    const t = await createTestApp();
    try {
      const tenantId = randomUUID();
      const seen: string[] = [];
      const iterator = t.app.services.bus.subscribe('DOGFOOD_AGENT_PAUSED', tenantId)[Symbol.asyncIterator]();
      const event = { eventId: randomUUID(), type: 'DOGFOOD_AGENT_PAUSED' as const, tenantId, payload: {} };
      const first = iterator.next();
      await t.app.services.bus.publish(event);
      await t.app.services.bus.publish(event);
      const other = { ...event, eventId: randomUUID() };
      await t.app.services.bus.publish(other);
      seen.push((await first).value.eventId, (await iterator.next()).value.eventId);
      expect(seen).toEqual([event.eventId, other.eventId]);
      await iterator.return?.();
    } finally {
      await t.close();
    }
  });
});
