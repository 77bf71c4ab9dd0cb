import { describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import type { Caller, TestApp } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { serveTestApp } from '../support/fixtures.js';
import { closeCodeFor, listen, subscribe } from '../support/ws.js';
import { ClaimTask, CompleteTask, queueTask, watchBus } from './agents-support.js';
import { createWebhook, deliveriesOf, type Receiver, withReceiverAndTwoApps } from './webhooks-support.js';

// A task's run record announces each recording (TASK_STEPS_RECORDED, one event per statement, however many
// steps it wrote), and `taskStepsRecorded(taskId)` delivers them: what keeps the console's timeline live.

const StepsRecorded = graphql(`
  subscription TaskStepsRecordedForTest($taskId: ID!, $after: ID) {
    taskStepsRecorded(taskId: $taskId, after: $after) {
      eventId
      tenantId
      taskId
      role
      rootTaskId
      attempt
      lastSeq
    }
  }
`);

const Report = graphql(`
  mutation TaskStepsLiveReport($taskId: ID!, $steps: [ModelStepInput!]!) {
    reportTaskSteps(taskId: $taskId, steps: $steps) {
      lastSeq
    }
  }
`);

const Renew = graphql(`
  mutation TaskStepsLiveRenew($id: ID!) {
    renewTaskLease(id: $id) {
      id
    }
  }
`);

const modelCall = (costUsd = 0.001) => ({
  model: 'gpt-live',
  durationMs: 120,
  inputTokens: 100,
  outputTokens: 20,
  costUsd,
  request: 'Bearer sk-secret-request-text',
});

let t: TestApp;
let server: RunningServer;

serveTestApp((app) => ({ t, server } = app));

/** A tenant with a chairman, an agent and agent tokens bound to the CEO and to the CFO. */
async function company(app: TestApp = t) {
  const chairman = await app.caller(['chairman']);
  const { tenantId } = chairman;
  await app.app.services.tenants.ensure(tenantId);
  const agent = await app.caller(['agent'], { tenantId });
  const ceo = await app.caller(['agent'], { tenantId, agentRoles: ['ceo'] });
  const cfo = await app.caller(['agent'], { tenantId, agentRoles: ['cfo'] });
  return { chairman, agent, ceo, cfo };
}

/** A task of `role` queued by `chairman` and claimed by `agent`. */
async function runningTask(chairman: Caller, agent: Caller, role = 'cfo', app: TestApp = t) {
  const id = await queueTask(app, chairman, role);
  const claimed = await app.graphql(ClaimTask, { role }, agent);
  expect(claimed.data?.claimTask?.id).toBe(id);
  return id;
}

async function report(agent: Caller, taskId: string, count: number, app: TestApp = t) {
  const steps = Array.from({ length: count }, () => modelCall());
  const result = await app.graphql(Report, { taskId, steps }, agent);
  expect(result.errors).toBeUndefined();
  return result.data?.reportTaskSteps.lastSeq;
}

describe('TASK_STEPS_RECORDED on the bus', () => {
  it('announces a batch of reported model calls once, with the last seq and nothing of their content', async () => {
    const { chairman, agent } = await company();
    const id = await runningTask(chairman, agent);
    const bus = await watchBus(t, 'TASK_STEPS_RECORDED', chairman.tenantId);

    expect(await report(agent, id, 3)).toBe(4);

    // The claim's event may still be on its way from the outbox.
    const event = await bus.next((payload) => payload.last_seq === 4);
    expect(event.payload).toEqual({
      event_id: event.eventId,
      type: 'TASK_STEPS_RECORDED',
      tenant_id: chairman.tenantId,
      task_id: id,
      role: 'cfo',
      root_task_id: id,
      attempt: 1,
      last_seq: 4,
    });
    // Nothing more for the batch (the claim's event, seq 1, may still come).
    await expect(
      bus.next((payload) => payload.task_id === id && payload.last_seq !== 1, 300),
    ).rejects.toThrow();
    await bus.close();
  });

  it('announces the gateway’s own steps: the claim, a lease renewal and the completion', async () => {
    const { chairman, agent } = await company();
    const id = await queueTask(t, chairman, 'cmo');
    const bus = await watchBus(t, 'TASK_STEPS_RECORDED', chairman.tenantId);

    await t.graphql(ClaimTask, { role: 'cmo' }, agent);
    expect((await t.graphql(Renew, { id }, agent)).errors).toBeUndefined();
    const completed = await t.graphql(CompleteTask, { id, input: { tokensUsed: 5, costUsd: 0.01 } }, agent);
    expect(completed.errors).toBeUndefined();

    const seqs = [];
    for (let seq = 1; seq <= 3; seq += 1) {
      const event = await bus.next((payload) => payload.task_id === id);
      seqs.push(event.payload.last_seq);
    }
    expect(seqs).toEqual([1, 2, 3]);
    await bus.close();
  });

  it('announces nothing for a refused report', async () => {
    const { chairman, agent, ceo } = await company();
    const id = await runningTask(chairman, agent);
    const bus = await watchBus(t, 'TASK_STEPS_RECORDED', chairman.tenantId);
    const refused = await t.graphql(Report, { taskId: id, steps: [modelCall()] }, ceo);
    expect(refused.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    // The claim's event (seq 1) may still come; nothing after it.
    await expect(
      bus.next((payload) => payload.task_id === id && payload.last_seq !== 1, 300),
    ).rejects.toThrow();
    await bus.close();
  });
});

describe('the taskStepsRecorded subscription', () => {
  it('delivers a model call reported while the task runs, with no change of status', async () => {
    const { chairman, agent } = await company();
    const id = await runningTask(chairman, agent);
    const other = await runningTask(chairman, agent);
    const subscription = await subscribe(server.url, chairman, StepsRecorded, { taskId: id });
    try {
      await report(agent, other, 1);
      await report(agent, id, 2);

      const result = await subscription.next();
      expect(result.errors).toBeUndefined();
      expect(result.data?.taskStepsRecorded).toEqual({
        eventId: expect.any(String),
        tenantId: chairman.tenantId,
        taskId: id,
        role: 'cfo',
        rootTaskId: id,
        attempt: 1,
        lastSeq: 3,
      });
      const task = await t.db.prisma.task.findUniqueOrThrow({ where: { id } });
      expect(task.status).toBe('running');
    } finally {
      await subscription.close();
    }
  });

  it('delivers to a token bound to the task’s role', async () => {
    const { chairman, agent, cfo } = await company();
    const id = await runningTask(chairman, agent);
    const subscription = await subscribe(server.url, cfo, StepsRecorded, { taskId: id });
    try {
      await report(agent, id, 1);
      expect((await subscription.next()).data?.taskStepsRecorded).toMatchObject({ taskId: id, lastSeq: 2 });
    } finally {
      await subscription.close();
    }
  });

  it('replays what was recorded after an event id, then continues live', async () => {
    const { chairman, agent } = await company();
    const id = await runningTask(chairman, agent);
    const first = await subscribe(server.url, chairman, StepsRecorded, { taskId: id });
    await report(agent, id, 1);
    const seen = (await first.next()).data?.taskStepsRecorded;
    await first.close();
    await report(agent, id, 2);

    const resumed = await subscribe(server.url, chairman, StepsRecorded, {
      taskId: id,
      after: seen?.eventId,
    });
    try {
      expect((await resumed.next()).data?.taskStepsRecorded.lastSeq).toBe(4);
      await report(agent, id, 1);
      expect((await resumed.next()).data?.taskStepsRecorded.lastSeq).toBe(5);
    } finally {
      await resumed.close();
    }
  });

  it('answers NOT_FOUND for another tenant’s task, an unknown one and one of a role the token is not bound to', async () => {
    const { chairman, agent, ceo } = await company();
    const id = await runningTask(chairman, agent);
    const stranger = await t.caller(['chairman']);
    for (const [caller, taskId] of [
      [stranger, id],
      [chairman, '00000000-0000-4000-8000-000000000000'],
      [ceo, id],
    ] as const) {
      const subscription = await subscribe(server.url, caller, StepsRecorded, { taskId });
      const result = await subscription.next();
      await subscription.close();
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
  });

  it('answers BAD_USER_INPUT for a task id that is not a uuid', async () => {
    const { chairman } = await company();
    const subscription = await subscribe(server.url, chairman, StepsRecorded, { taskId: 'task-1' });
    const result = await subscription.next();
    await subscription.close();
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('answers UNAUTHENTICATED to an anonymous subscription, and closes a socket without a valid token (4401)', async () => {
    const { chairman, agent } = await company();
    const id = await runningTask(chairman, agent);
    const body = await t.graphql(StepsRecorded, { taskId: id }, null);
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await closeCodeFor(server.url, {})).toBe(4401);
  });

  it('is in the tenant’s events stream when asked for', async () => {
    const Events = graphql(`
      subscription TaskStepsInEventsForTest {
        events(types: [TASK_STEPS_RECORDED]) {
          __typename
          ... on TaskStepsRecordedEvent {
            taskId
            lastSeq
          }
        }
      }
    `);
    const { chairman, agent } = await company();
    const id = await runningTask(chairman, agent);
    const subscription = await subscribe(server.url, chairman, Events, {});
    try {
      expect((await subscription.next()).data?.events.__typename).toBe('EventStreamStarted');
      await report(agent, id, 1);
      expect((await subscription.next()).data?.events).toEqual({
        __typename: 'TaskStepsRecordedEvent',
        taskId: id,
        lastSeq: 2,
      });
    } finally {
      await subscription.close();
    }
  });
});

describe('two instances and a webhook receiver', () => {
  let a: TestApp;
  let b: TestApp;
  let receiver: Receiver;
  withReceiverAndTwoApps((made) => ({ a, b, receiver } = made));

  it('queues no webhook delivery or push notification for a step event, while the task’s changes are delivered', async () => {
    const { chairman, agent } = await company(a);
    const hook = await createWebhook(a, chairman, { url: receiver.url('/hooks') });
    const bus = await watchBus(a, 'TASK_STEPS_RECORDED', chairman.tenantId);
    const id = await queueTask(a, chairman, 'cfo');
    const push = await a.graphql<any, unknown>(
      `mutation Push($input: CreateTaskWebhookInput!) { createTaskWebhook(input: $input) { webhook { id } } }`,
      { input: { taskId: id, url: receiver.url('/push'), token: 'mine' } },
      chairman,
    );
    expect(push.errors).toBeUndefined();
    expect((await a.graphql(ClaimTask, { role: 'cfo' }, agent)).data?.claimTask?.id).toBe(id);
    await report(agent, id, 2, a);

    // Published: the relay's pass that published it has also written every delivery it causes.
    const event = await bus.next((payload) => payload.task_id === id && payload.last_seq === 3);
    await bus.close();
    const tenantDeliveries = (await deliveriesOf(a, chairman, hook.id, { first: 100 })).nodes;
    const pushDeliveries = (
      await deliveriesOf(a, chairman, push.data.createTaskWebhook.webhook.id, { first: 100 })
    ).nodes;
    for (const delivery of [...tenantDeliveries, ...pushDeliveries])
      expect(delivery.eventId).not.toBe(event.eventId);
    expect(tenantDeliveries.map((delivery) => delivery.eventType)).toEqual(['task.queued']);
    // The claim's status update (and the queueing's, when the relay published it after the push was
    // registered); nothing for the steps.
    expect(new Set(pushDeliveries.map((delivery) => delivery.eventType))).toEqual(
      new Set(['task.status_update']),
    );
  });

  // PGlite is an embedded, single-process database; instances share events only through Redis.
  it.skipIf(databaseKind === 'pglite')(
    'delivers steps recorded on one instance to a subscriber of the other',
    async () => {
      const { chairman, agent } = await company(a);
      const id = await runningTask(chairman, agent, 'cfo', a);
      const onB = await listen(b);
      const subscription = await subscribe(onB.url, chairman, StepsRecorded, { taskId: id });
      try {
        await report(agent, id, 1, a);
        expect((await subscription.next()).data?.taskStepsRecorded).toMatchObject({ taskId: id, lastSeq: 2 });
      } finally {
        await subscription.close();
        await onB.close();
      }
    },
  );
});
