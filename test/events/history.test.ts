import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import { queueTask } from '../schema/agents-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';

const SetLiveMode = graphql(`
  mutation HistoryLiveMode($enabled: Boolean!) {
    setDogfoodLiveMode(enabled: $enabled) {
      dogfoodLiveMode
    }
  }
`);

const RecentEvents = graphql(`
  query HistoryRecentEvents($first: Int, $types: [EventType!]) {
    recentEvents(first: $first, types: $types) {
      recordedAt
      event {
        __typename
        ... on AgentPausedEvent {
          eventId
          tenantId
          role
          actorUserId
          pausedAt
        }
        ... on AgentResumedEvent {
          eventId
          role
        }
        ... on TaskUpdatedEvent {
          eventId
          role
          status
        }
      }
    }
  }
`);

let t: TestApp;

withTestApp((app) => (t = app));

async function liveChairman(): Promise<Caller> {
  const chairman = await t.caller(['chairman'], { sub: 'chair-history' });
  await t.graphql(SetLiveMode, { enabled: true }, chairman);
  return chairman;
}

async function pause(chairman: Caller, role: string, verb = 'pause'): Promise<string> {
  const response = await t.rest('POST', `/api/v1/dogfood/agents/${role}/${verb}`, {
    caller: chairman,
    body: { actor_user_id: chairman.sub, reason: 'a reason never shown' },
  });
  expect(response.status).toBe(200);
  return response.body.event_id;
}

const idOf = (entry: { event: { __typename: string } }) => (entry.event as { eventId?: string }).eventId;

describe('recentEvents', () => {
  it('lists the tenant’s published events newest first, with when each was recorded', async () => {
    const chairman = await liveChairman();
    const paused = await pause(chairman, 'ceo');
    const resumed = await pause(chairman, 'ceo', 'resume');
    const task = await queueTask(t, chairman, 'cfo');
    await t.app.services.relay.kick();

    const { data, errors } = await t.graphql(RecentEvents, {}, chairman);

    expect(errors).toBeUndefined();
    const entries = data?.recentEvents ?? [];
    expect(entries.map(idOf)).toHaveLength(3);
    expect(entries.map((entry) => entry.event.__typename)).toEqual([
      'TaskUpdatedEvent',
      'AgentResumedEvent',
      'AgentPausedEvent',
    ]);
    expect(entries[0]?.event).toMatchObject({ role: 'cfo', status: 'pending' });
    expect(entries.slice(1).map(idOf)).toEqual([resumed, paused]);
    expect(entries[2]?.event).toMatchObject({
      tenantId: chairman.tenantId,
      role: 'ceo',
      actorUserId: 'chair-history',
    });
    for (const entry of entries) {
      expect(Math.abs(Date.parse(entry.recordedAt) - Date.now())).toBeLessThan(60_000);
    }
    expect(JSON.stringify(data)).not.toContain('a reason never shown');
    expect(task).toEqual(expect.any(String));
  });

  it('keeps to the given types and count', async () => {
    const chairman = await liveChairman();
    const first = await pause(chairman, 'cto');
    await queueTask(t, chairman, 'cfo');
    const second = await pause(chairman, 'cmo');
    const third = await pause(chairman, 'cpo');
    await t.app.services.relay.kick();

    const all = await t.graphql(RecentEvents, { types: ['DOGFOOD_AGENT_PAUSED'] }, chairman);
    const two = await t.graphql(RecentEvents, { types: ['DOGFOOD_AGENT_PAUSED'], first: 2 }, chairman);

    expect(all.data?.recentEvents.map(idOf)).toEqual([third, second, first]);
    expect(two.data?.recentEvents.map(idOf)).toEqual([third, second]);
  });

  it('shows nothing of another tenant', async () => {
    const chairman = await liveChairman();
    await pause(chairman, 'clo');
    const outsider = await t.caller(['chairman']);
    await t.app.services.relay.kick();

    const { data } = await t.graphql(RecentEvents, {}, outsider);

    expect(data?.recentEvents).toEqual([]);
  });

  it('leaves out events older than the replay window, even before they are pruned', async () => {
    const chairman = await liveChairman();
    const kept = await pause(chairman, 'chro');
    await t.app.services.relay.kick();
    const payload = (id: string) => ({
      event_id: id,
      type: 'DOGFOOD_AGENT_PAUSED',
      tenant_id: chairman.tenantId,
      role: 'coo',
      actor_user_id: 'old',
      paused_at: new Date().toISOString(),
    });
    const old = randomUUID();
    await t.db.prisma.outboxEvent.create({
      data: {
        id: old,
        tenantId: chairman.tenantId,
        type: 'DOGFOOD_AGENT_PAUSED',
        payload: payload(old),
        createdAt: new Date(Date.now() - 25 * 3600_000),
        publishedAt: new Date(Date.now() - 25 * 3600_000),
      },
    });

    const { data } = await t.graphql(RecentEvents, {}, chairman);

    expect(data?.recentEvents.map(idOf)).toEqual([kept]);
  });

  it('refuses a count outside 1–200 with BAD_USER_INPUT', async () => {
    const chairman = await liveChairman();

    for (const first of [0, 201]) {
      const result = await t.graphql(RecentEvents, { first }, chairman);
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    }
  });

  it('answers UNAUTHENTICATED without a token', async () => {
    const result = await t.graphql(RecentEvents, {}, null);

    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
