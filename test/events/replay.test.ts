import { describe, expect, it } from 'vitest';
import { openEventStream } from '../../src/events/replay.js';
import type { BusEvent } from '../../src/events/topics.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { ClaimTask, queueTask } from '../schema/agents-support.js';
import { Promote, Register } from '../schema/finetuning-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { subscribe } from '../support/ws.js';

const SetLiveMode = graphql(`
  mutation ReplayLiveMode($enabled: Boolean!) {
    setDogfoodLiveMode(enabled: $enabled) {
      dogfoodLiveMode
    }
  }
`);

const Events = graphql(`
  subscription ReplayEvents($after: ID, $types: [EventType!]) {
    events(after: $after, types: $types) {
      __typename
      ... on EventStreamStarted {
        position
      }
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
`);

const AgentPausedAfter = graphql(`
  subscription ReplayAgentPaused($role: String, $after: ID) {
    agentPaused(role: $role, after: $after) {
      eventId
      role
    }
  }
`);

const TaskUpdatedAfter = graphql(`
  subscription ReplayTaskUpdated($role: String, $after: ID) {
    taskUpdated(role: $role, after: $after) {
      eventId
      taskId
      status
    }
  }
`);

const ModelVersionChangedAfter = graphql(`
  subscription ReplayModelVersionChanged($baseModel: String!, $after: ID) {
    modelVersionChanged(baseModel: $baseModel, after: $after) {
      eventId
      deploymentStatus
    }
  }
`);

const ROLES = ['ceo', 'cfo', 'coo', 'cto', 'cmo', 'cpo', 'chro', 'clo'] as const;

let t: TestApp;
let server: RunningServer;

serveTestApp((app) => ({ t, server } = app));

async function liveChairman(): Promise<Caller> {
  const chairman = await t.caller(['chairman']);
  await t.graphql(SetLiveMode, { enabled: true }, chairman);
  return chairman;
}

/** Pauses a role over REST; returns the event id of the response. */
async function pause(chairman: Caller, role: string): Promise<string> {
  const response = await t.rest('POST', `/api/v1/dogfood/agents/${role}/pause`, {
    caller: chairman,
    body: { actor_user_id: 'chair-1', reason: 'secret reason' },
  });
  expect(response.status).toBe(200);
  return response.body.event_id;
}

type EventsSubscription = { next(): Promise<{ data?: any; errors?: readonly unknown[] }> };

/** The EventStreamStarted message every `events` subscription opens with: its position. */
async function startOf(subscription: EventsSubscription): Promise<string> {
  const started = await subscription.next();
  expect(started.errors).toBeUndefined();
  expect(started.data?.events).toEqual({ __typename: 'EventStreamStarted', position: expect.any(String) });
  return started.data?.events.position;
}

/** The ids of the next `count` events, after the stream's EventStreamStarted message if it comes first. */
async function eventIds(subscription: EventsSubscription, count: number) {
  const ids: string[] = [];
  while (ids.length < count) {
    const event = (await subscription.next()).data?.events;
    if (event?.__typename !== 'EventStreamStarted') ids.push(event?.eventId);
  }
  return ids;
}

describe('events subscription with after', () => {
  it('replays what happened while disconnected, in order, then continues live without duplicates', async () => {
    const chairman = await liveChairman();
    const first = await subscribe(server.url, chairman, Events, {});
    const e1 = await pause(chairman, 'ceo');
    const e2 = await pause(chairman, 'cfo');
    expect(await eventIds(first, 2)).toEqual([e1, e2]);
    await first.close();

    const e3 = await pause(chairman, 'coo');
    const e4 = await pause(chairman, 'cto');
    const e5 = await pause(chairman, 'cmo');
    // Wait until the relay has published them: only published events are replayable.
    await t.app.services.relay.kick();

    const resumed = await subscribe(server.url, chairman, Events, { after: e2 });
    expect(await eventIds(resumed, 3)).toEqual([e3, e4, e5]);
    const e6 = await pause(chairman, 'cpo');
    const e7 = await pause(chairman, 'chro');
    // A duplicate of any earlier event would arrive before e7.
    expect(await eventIds(resumed, 2)).toEqual([e6, e7]);
    await resumed.close();
  });

  it('never replays another tenant’s events nor a reason', async () => {
    const chairman = await liveChairman();
    const outsider = await liveChairman();
    const start = await pause(chairman, 'ceo');
    await pause(outsider, 'ceo');
    const own = await pause(chairman, 'cfo');
    await pause(outsider, 'cfo');
    await t.app.services.relay.kick();

    const resumed = await subscribe(server.url, chairman, Events, { after: start });
    expect(await startOf(resumed)).toBe(start);
    const replayed = await resumed.next();
    const live = await pause(chairman, 'coo');
    const next = await resumed.next();
    await resumed.close();
    expect(replayed.data?.events).toMatchObject({
      __typename: 'AgentPausedEvent',
      eventId: own,
      tenantId: chairman.tenantId,
      role: 'cfo',
      actorUserId: 'chair-1',
    });
    expect(next.data?.events).toMatchObject({ eventId: live, tenantId: chairman.tenantId });
    expect(JSON.stringify([replayed, next])).not.toContain('secret reason');
  });

  it('answers RESUME_POINT_EXPIRED for an unknown id or another tenant’s event, 422 for a malformed one', async () => {
    const chairman = await liveChairman();
    const outsider = await liveChairman();
    const foreign = await pause(outsider, 'ceo');
    await t.app.services.relay.kick();

    for (const after of ['00000000-0000-4000-8000-000000000000', foreign]) {
      const subscription = await subscribe(server.url, chairman, Events, { after });
      const result = await subscription.next();
      await subscription.close();
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'RESUME_POINT_EXPIRED' });
    }
    const malformed = await subscribe(server.url, chairman, Events, { after: 'not-an-id' });
    const result = await malformed.next();
    await malformed.close();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
  });

  it('opens with the position it starts from, and resuming there replays what was published meanwhile', async () => {
    const chairman = await liveChairman();
    const before = await pause(chairman, 'ceo');
    const first = await subscribe(server.url, chairman, Events, {});
    const position = await startOf(first);
    // No event reached this subscription before it was dropped.
    await first.close();

    const away = await pause(chairman, 'cfo');
    await t.app.services.relay.kick();

    const resumed = await subscribe(server.url, chairman, Events, { after: position });
    expect(await startOf(resumed)).toBe(position);
    expect(await eventIds(resumed, 1)).toEqual([away]);
    const live = await pause(chairman, 'coo');
    expect(await eventIds(resumed, 1)).toEqual([live]);
    await resumed.close();
    expect(before).not.toBe(away);
  });

  it('resumes from a position through the single-type subscriptions too', async () => {
    const chairman = await liveChairman();
    const first = await subscribe(server.url, chairman, Events, { types: ['DOGFOOD_AGENT_PAUSED'] });
    const position = await startOf(first);
    await first.close();
    await pause(chairman, 'ceo');
    const cto = await pause(chairman, 'cto');
    await t.app.services.relay.kick();

    const resumed = await subscribe(server.url, chairman, AgentPausedAfter, { role: 'cto', after: position });
    expect((await resumed.next()).data?.agentPaused).toEqual({ eventId: cto, role: 'cto' });
    await resumed.close();
  });

  it('answers RESUME_POINT_EXPIRED for a position from before every retained event or from the future', async () => {
    const chairman = await liveChairman();
    const hourFromNow = (Date.now() + 3_600_000) * 1000;
    for (const after of ['pos:1000000', `pos:${hourFromNow}`]) {
      const subscription = await subscribe(server.url, chairman, Events, { after });
      const result = await subscription.next();
      await subscription.close();
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'RESUME_POINT_EXPIRED' });
    }
  });

  it('filters by type', async () => {
    const chairman = await liveChairman();
    const subscription = await subscribe(server.url, chairman, Events, { types: ['DOGFOOD_AGENT_RESUMED'] });
    await pause(chairman, 'clo');
    const resumed = await t.rest('POST', '/api/v1/dogfood/agents/clo/resume', {
      caller: chairman,
      body: { actor_user_id: 'chair-1' },
    });
    await startOf(subscription);
    expect((await subscription.next()).data?.events).toEqual({
      __typename: 'AgentResumedEvent',
      eventId: resumed.body.event_id,
      role: 'clo',
    });
    await subscription.close();
  });
});

describe('agentPaused with after', () => {
  it('replays only the subscribed role’s pauses after the given event', async () => {
    const chairman = await liveChairman();
    const start = await pause(chairman, 'ceo');
    await pause(chairman, 'cfo');
    const cto = await pause(chairman, 'cto');
    await t.app.services.relay.kick();

    const subscription = await subscribe(server.url, chairman, AgentPausedAfter, {
      role: 'CTO',
      after: start,
    });
    expect((await subscription.next()).data?.agentPaused).toEqual({ eventId: cto, role: 'cto' });
    const coo = await pause(chairman, 'coo');
    const cto2 = await (async () => {
      await t.rest('POST', '/api/v1/dogfood/agents/cto/resume', {
        caller: chairman,
        body: { actor_user_id: 'c' },
      });
      return pause(chairman, 'cto');
    })();
    expect((await subscription.next()).data?.agentPaused).toEqual({ eventId: cto2, role: 'cto' });
    expect(coo).not.toBe(cto2);
    await subscription.close();
  });
});

describe('taskUpdated and modelVersionChanged with after', () => {
  it('replay a role’s task changes and a base model’s changes after the given event', async () => {
    const operator = await t.caller(['operator', 'member']);
    const agent = await t.caller(['agent'], { tenantId: operator.tenantId });
    const register = (baseModel: string) =>
      t.graphql(
        Register,
        {
          input: {
            baseModel,
            provider: 'openai',
            trainingDataHash: 'sha256:x',
            hyperparameters: {},
            evaluationMetrics: {},
          },
        },
        operator,
      );
    const start = await queueTask(t, operator, 'cto');
    await queueTask(t, operator, 'cfo');
    await t.graphql(ClaimTask, { role: 'cto' }, agent);
    const registered = await register('replay-model');
    await register('other-model');
    await t.graphql(Promote, { id: registered.data?.registerModelVersion.id as string }, operator);
    await t.app.services.relay.kick();
    const [first] = await t.db.prisma.outboxEvent.findMany({
      where: {
        tenantId: operator.tenantId,
        type: 'TASK_UPDATED',
        payload: { path: ['task_id'], equals: start },
      },
      orderBy: { seq: 'asc' },
    });

    const tasks = await subscribe(server.url, operator, TaskUpdatedAfter, { role: 'cto', after: first?.id });
    expect((await tasks.next()).data?.taskUpdated).toMatchObject({ taskId: start, status: 'running' });
    await tasks.close();
    const models = await subscribe(server.url, operator, ModelVersionChangedAfter, {
      baseModel: 'replay-model',
      after: first?.id,
    });
    expect((await models.next()).data?.modelVersionChanged).toMatchObject({ deploymentStatus: 'ready' });
    expect((await models.next()).data?.modelVersionChanged).toMatchObject({ deploymentStatus: 'production' });
    await models.close();
  });
});

describe('openEventStream', () => {
  it('delivers every event of a burst exactly once and in commit order when resuming during the burst', async () => {
    const chairman = await liveChairman();
    const start = await pause(chairman, 'ceo');
    await t.app.services.relay.kick();

    // Pauses and resumes commit while the stream opens and reads its backlog.
    const burst = (async () => {
      const ids: string[] = [];
      for (const role of ROLES.slice(1)) ids.push(await pause(chairman, role));
      for (const role of ROLES) {
        const response = await t.rest('POST', `/api/v1/dogfood/agents/${role}/resume`, {
          caller: chairman,
          body: { actor_user_id: 'chair-1' },
        });
        ids.push(response.body.event_id);
      }
      return ids;
    })();
    const stream = await openEventStream({
      prisma: t.db.prisma,
      bus: t.app.services.bus,
      tenantId: chairman.tenantId,
      types: ['DOGFOOD_AGENT_PAUSED', 'DOGFOOD_AGENT_RESUMED'],
      after: start,
    });
    const expected = await burst;
    const received: BusEvent[] = [];
    while (received.length < expected.length) {
      const next = await stream.next();
      if (next.done) break;
      received.push(next.value);
    }
    await stream.return?.();
    expect(received.map((event) => event.eventId)).toEqual(expected);
    const seqs = received.map((event) => BigInt(event.seq as string));
    expect(seqs).toEqual([...seqs].sort((a, b) => (a < b ? -1 : 1)));
  });

  it('resumes from a position fixed during a burst with exactly the events published after it', async () => {
    const chairman = await liveChairman();
    const types = ['DOGFOOD_AGENT_PAUSED', 'DOGFOOD_AGENT_RESUMED'] as const;
    const burst = (async () => {
      const ids: string[] = [];
      for (const role of ROLES) ids.push(await pause(chairman, role));
      for (const role of ROLES) {
        const response = await t.rest('POST', `/api/v1/dogfood/agents/${role}/resume`, {
          caller: chairman,
          body: { actor_user_id: 'chair-1' },
        });
        ids.push(response.body.event_id);
      }
      return ids;
    })();
    const options = { prisma: t.db.prisma, bus: t.app.services.bus, tenantId: chairman.tenantId, types };
    const first = await openEventStream({ ...options, announceStart: true });
    const all = await burst;
    await t.app.services.relay.kick();
    const position = first.start as string;
    expect(position).toMatch(/^pos:\d+$/);
    const live: string[] = [];
    while (!live.includes(all.at(-1) as string)) {
      const next = await first.next();
      if (next.done) break;
      live.push(next.value.eventId);
    }
    await first.return?.();

    const resumed = await openEventStream({ ...options, after: position });
    const after = await t.db.prisma.$queryRawUnsafe<{ id: string }[]>(
      `SELECT id::text FROM outbox_events WHERE tenant_id = $1::uuid
         AND published_at > to_timestamp(0) + $2::bigint * interval '1 microsecond' ORDER BY seq`,
      chairman.tenantId,
      position.slice('pos:'.length),
    );
    const replayed: string[] = [];
    while (replayed.length < after.length) {
      const next = await resumed.next();
      if (next.done) break;
      replayed.push(next.value.eventId);
    }
    await resumed.return?.();
    expect(replayed).toEqual(after.map((row) => row.id));
    // The first stream delivered the burst from when it listened; the replay, its part after the position.
    expect(all.slice(all.length - live.length)).toEqual(live);
    expect(live.slice(live.length - replayed.length)).toEqual(replayed);
  });

  it('stops listening when the subscriber leaves while waiting', async () => {
    const chairman = await liveChairman();
    const stream = await openEventStream({
      prisma: t.db.prisma,
      bus: t.app.services.bus,
      tenantId: chairman.tenantId,
      types: ['DOGFOOD_AGENT_PAUSED'],
    });
    const waiting = stream.next();
    await stream.return?.();
    expect(await waiting).toEqual({ value: undefined, done: true });
  });

  it('reads the outbox sequence once for the streams that open while a read is under way', async () => {
    const chairman = await liveChairman();
    let reads = 0;
    // As with Redis: a stream opened without `after` reads where the sequence stands.
    const bus = { ...t.app.services.bus, status: () => 'connected' as const };
    const prisma = new Proxy(t.db.prisma, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver);
        if (property !== '$queryRawUnsafe') return value;
        return (sql: string, ...values: unknown[]) => {
          if (sql.includes('pg_sequence_last_value')) reads += 1;
          return value.call(target, sql, ...values);
        };
      },
    });
    const streams = await Promise.all(
      Array.from({ length: 50 }, () =>
        openEventStream({ prisma, bus, tenantId: chairman.tenantId, types: ['DOGFOOD_AGENT_PAUSED'] }),
      ),
    );
    // The first opener's read, then one shared by the 49 that asked while it ran.
    expect(reads).toBe(2);
    await Promise.all(streams.map((stream) => stream.return?.()));
  });
});
