import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import {
  createWebhook,
  deliveriesOf,
  nth,
  ok,
  queueTask,
  RECORDED,
  REDELIVER,
  type Receiver,
  ROTATE_SECRET,
  signedWith,
  startReceiver,
  status,
  WEBHOOK,
  webhookEnv,
} from './webhooks-support.js';

/**
 * Every attempt's deadline in this file. Only the receiver that never answers should reach it: a shorter
 * one turned cold first deliveries on a loaded machine into retries, which the other tests count.
 */
const CALL_TIMEOUT_MS = 2000;
const DISABLE_AFTER_MS = 2000;

let receiver: Receiver;
let t: TestApp;

beforeAll(async () => {
  const started = await startReceiver();
  receiver = started.receiver;
  t = await createTestApp({
    env: webhookEnv(receiver),
    egress: { ca: started.ca, lookup: started.lookup },
    webhooks: {
      retry: { firstDelayMs: 40, maxDelayMs: 200, disableAfterMs: DISABLE_AFTER_MS },
      callTimeoutMs: CALL_TIMEOUT_MS,
    },
  });
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

let paths = 0;
/** A fresh receiver path answered by `answer`. */
function path(answer = ok): string {
  paths += 1;
  const name = `/hooks/${paths}`;
  receiver.answer(name, answer);
  return name;
}

async function chairman(): Promise<Caller> {
  return t.caller(['chairman']);
}

describe('signed deliveries', () => {
  it('shows a delegation tree to the tenant’s webhooks: the parent waiting, each sub-task queued under it', async () => {
    const boss = await chairman();
    await t.app.services.tenants.ensure(boss.tenantId);
    const agent = await t.caller(['agent'], { tenantId: boss.tenantId });
    const hook = path();
    await createWebhook(t, boss, { url: receiver.url(hook) });
    const rootId = await queueTask(t, boss, 'ceo', 'Brief the board');
    await t.graphql('mutation { claimNextTask(role: "ceo") { outcome } }', {}, agent);
    const delegated = await t.graphql<any, any>(
      `mutation ($id: ID!) { delegateTask(taskId: $id, input: {
        delegations: [{ role: "cfo", message: "Revenue?" }, { role: "clo", message: "Litigation?" }]
        tokensUsed: 10, costUsd: 0.001 }) { children { id role } } }`,
      { id: rootId },
      agent,
    );
    expect(delegated.errors).toBeUndefined();

    // Queued root, then the root waiting and its two children queued (the claim of the root is no webhook).
    const deliveries = await receiver.waitFor(hook, 4);
    const seen = deliveries.map((delivery: any) => [
      delivery.payload.type,
      delivery.payload.data.role,
      delivery.payload.data.parent_task_id,
      delivery.payload.data.root_task_id,
    ]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['task.queued', 'ceo', null, rootId],
        ['task.waiting', 'ceo', null, rootId],
        ['task.queued', 'cfo', rootId, rootId],
        ['task.queued', 'clo', rootId, rootId],
      ]),
    );
  });

  it('POSTs a task.queued message signed per Standard Webhooks when work is queued for the role', async () => {
    const boss = await chairman();
    const hook = path();
    const { id, secret } = await createWebhook(t, boss, { url: receiver.url(hook), role: 'cfo' });
    const member = await t.caller(['member'], { tenantId: boss.tenantId });
    const taskId = await queueTask(t, member, 'cfo', 'Wire 40k to the supplier, account 1234');

    const delivery = nth(await receiver.waitFor(hook, 1));
    expect(signedWith(delivery, secret)).toBe(true);
    expect(Math.abs(Number(delivery.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    expect(delivery.payload).toEqual({
      type: 'task.queued',
      timestamp: expect.any(String),
      data: {
        event_id: expect.any(String),
        tenant_id: boss.tenantId,
        role: 'cfo',
        task_id: taskId,
        attempts: 0,
        updated_at: expect.any(String),
        parent_task_id: null,
        root_task_id: taskId,
      },
    });
    expect(delivery.body).not.toContain('Wire 40k');
    // The maintained implementation agrees with the independent one.
    expect(() =>
      new StandardWebhook(secret).verify(delivery.body, {
        'webhook-id': delivery.id,
        'webhook-timestamp': delivery.timestamp,
        'webhook-signature': `v1,${delivery.signatures[0]}`,
      }),
    ).not.toThrow();

    await vi.waitFor(async () => {
      const { nodes } = await deliveriesOf(t, boss, id);
      expect(nodes).toMatchObject([
        {
          webhookId: id,
          messageId: delivery.id,
          eventType: 'task.queued',
          status: 'delivered',
          attempts: 1,
          lastStatusCode: 200,
          lastError: null,
          nextAttemptAt: null,
        },
      ]);
      expect(nodes[0].latencyMs).toBeGreaterThanOrEqual(0);
    }, RECORDED);
  });

  it('sends a role webhook only its role’s work, and a tenant webhook every role’s', async () => {
    const boss = await chairman();
    const cfoHook = path();
    const allHook = path();
    await createWebhook(t, boss, { url: receiver.url(cfoHook), role: 'CFO' });
    await createWebhook(t, boss, { url: receiver.url(allHook) });
    const cto = await queueTask(t, boss, 'cto');
    const cfo = await queueTask(t, boss, 'cfo');

    const all = await receiver.waitFor(allHook, 2);
    expect(all.map((delivery) => delivery.payload.data.task_id)).toEqual([cto, cfo]);
    const only = nth(await receiver.waitFor(cfoHook, 1));
    expect(only.payload.data.task_id).toBe(cfo);
    await queueTask(t, boss, 'cmo');
    await receiver.waitFor(allHook, 3);
    expect(receiver.received(cfoHook)).toHaveLength(1);
  });

  it('announces pause and resume without the reason', async () => {
    const boss = await chairman();
    await t.graphql('mutation { setDogfoodLiveMode(enabled: true) { id } }', undefined, boss);
    const hook = path();
    await createWebhook(t, boss, { url: receiver.url(hook), role: 'cto' });
    const pause = await t.rest('POST', '/api/v1/dogfood/agents/cto/pause', {
      caller: boss,
      body: { actor_user_id: 'chair-1', reason: 'secret reason' },
    });
    expect(pause.status).toBe(200);
    const resume = await t.rest('POST', '/api/v1/dogfood/agents/cto/resume', {
      caller: boss,
      body: { actor_user_id: 'chair-1', reason: 'another secret' },
    });
    expect(resume.status).toBe(200);

    const received = await receiver.waitFor(hook, 2);
    const paused = nth(received, 0);
    const resumed = nth(received, 1);
    expect(paused.payload).toMatchObject({
      type: 'agent.paused',
      data: { role: 'cto', actor_user_id: 'chair-1', event_id: pause.body.event_id },
    });
    expect(resumed.payload).toMatchObject({ type: 'agent.resumed', data: { role: 'cto' } });
    expect(paused.body + resumed.body).not.toContain('secret');
  });
});

describe('retries', () => {
  it('retries after 500s with backoff, under the same webhook-id, until a 2xx', async () => {
    const boss = await chairman();
    let calls = 0;
    const hook = path((_delivery, response) => {
      calls += 1;
      response.writeHead(calls <= 2 ? 500 : 204).end();
    });
    const { id, secret } = await createWebhook(t, boss, { url: receiver.url(hook), role: 'cfo' });
    await queueTask(t, boss, 'cfo');

    const attempts = await receiver.waitFor(hook, 3);
    expect(new Set(attempts.map((attempt) => attempt.id)).size).toBe(1);
    expect(attempts.every((attempt) => signedWith(attempt, secret))).toBe(true);
    // Equal jitter: each wait is at least half its step (40 ms, then 80 ms).
    expect(nth(attempts, 1).at - nth(attempts, 0).at).toBeGreaterThanOrEqual(20);
    expect(nth(attempts, 2).at - nth(attempts, 1).at).toBeGreaterThanOrEqual(40);
    await vi.waitFor(async () => {
      const { nodes } = await deliveriesOf(t, boss, id);
      expect(nodes).toMatchObject([
        { status: 'delivered', attempts: 3, lastStatusCode: 204, lastError: null },
      ]);
    }, RECORDED);
    const webhook = await t.graphql<any, unknown>(WEBHOOK, { id }, boss);
    expect(webhook.data.webhook).toMatchObject({ status: 'active', failingSince: null });
  });

  it('counts a receiver that does not answer in time as a failure and tries again', async () => {
    const boss = await chairman();
    let calls = 0;
    const hook = path((_delivery, response) => {
      calls += 1;
      // The first request is never answered (its socket closes with the receiver).
      if (calls > 1) response.writeHead(200).end();
    });
    const { id } = await createWebhook(t, boss, { url: receiver.url(hook), role: 'cfo' });
    await queueTask(t, boss, 'cfo');
    const attempts = await receiver.waitFor(hook, 2, CALL_TIMEOUT_MS + 5000);
    expect(nth(attempts, 1).id).toBe(nth(attempts, 0).id);
    expect(nth(attempts, 1).at - nth(attempts, 0).at).toBeGreaterThanOrEqual(CALL_TIMEOUT_MS);
    await vi.waitFor(async () => {
      const { nodes } = await deliveriesOf(t, boss, id);
      expect(nodes).toMatchObject([{ status: 'delivered', attempts: 2, lastStatusCode: 200 }]);
    }, RECORDED);
  });

  it('keeps the role’s order: a later delivery waits until the earlier one is delivered', async () => {
    const boss = await chairman();
    let calls = 0;
    const hook = path((_delivery, response) => {
      calls += 1;
      response.writeHead(calls <= 3 ? 503 : 200).end();
    });
    await createWebhook(t, boss, { url: receiver.url(hook), role: 'coo' });
    const firstTask = await queueTask(t, boss, 'coo', 'first');
    const secondTask = await queueTask(t, boss, 'coo', 'second');
    const thirdTask = await queueTask(t, boss, 'coo', 'third');

    const received = await receiver.waitFor(hook, 6);
    expect(received.map((delivery) => delivery.payload.data.task_id)).toEqual([
      firstTask,
      firstTask,
      firstTask,
      firstTask,
      secondTask,
      thirdTask,
    ]);
  });

  it('does not follow a redirect from the target', async () => {
    const boss = await chairman();
    const target = path();
    const hook = path((_delivery, response) => void response.writeHead(307, { location: target }).end());
    const { id } = await createWebhook(t, boss, { url: receiver.url(hook), role: 'clo' });
    await queueTask(t, boss, 'clo');
    await receiver.waitFor(hook, 2);
    const { nodes } = await deliveriesOf(t, boss, id);
    expect(nodes[0]).toMatchObject({ status: 'pending' });
    expect(nodes[0].lastError).toMatch(/^redirect_refused: /);
    expect(receiver.received(target)).toHaveLength(0);
    await t.graphql('mutation Disable($id: ID!) { disableWebhook(id: $id) { id } }', { id }, boss);
  });
});

describe('redelivery', () => {
  it('sends a delivered message again under the same webhook-id, as a new delivery', async () => {
    const boss = await chairman();
    const hook = path();
    const { id, secret } = await createWebhook(t, boss, { url: receiver.url(hook), role: 'cpo' });
    await queueTask(t, boss, 'cpo');
    const original = nth(await receiver.waitFor(hook, 1));
    const delivered = await vi.waitFor(async () => {
      const { nodes } = await deliveriesOf(t, boss, id, { status: 'delivered' });
      expect(nodes).toHaveLength(1);
      return nth(nodes);
    }, RECORDED);

    const result = await t.graphql<any, unknown>(REDELIVER, { id: delivered.id }, boss);
    expect(result.errors).toBeUndefined();
    expect(result.data.redeliverWebhookDelivery).toMatchObject({
      redeliveryOf: delivered.id,
      messageId: delivered.messageId,
      status: 'pending',
      attempts: 0,
    });
    const again = nth(await receiver.waitFor(hook, 2), 1);
    expect(again.id).toBe(original.id);
    expect(again.body).toBe(original.body);
    expect(signedWith(again, secret)).toBe(true);
    await vi.waitFor(async () => {
      const { nodes } = await deliveriesOf(t, boss, id);
      expect(nodes.map((node) => node.status)).toEqual(['delivered', 'delivered']);
    }, RECORDED);
  });

  it('pages deliveries newest first with a cursor', async () => {
    const boss = await chairman();
    const hook = path();
    const { id } = await createWebhook(t, boss, { url: receiver.url(hook), role: 'chro' });
    const tasks = [];
    for (let index = 0; index < 3; index += 1) tasks.push(await queueTask(t, boss, 'chro'));
    await receiver.waitFor(hook, 3);
    const page1 = await deliveriesOf(t, boss, id, { first: 2 });
    expect(page1.nodes.map((node) => node.payload.data.task_id)).toEqual([tasks[2], tasks[1]]);
    const page2 = await deliveriesOf(t, boss, id, { first: 2, after: page1.nextCursor });
    expect(page2.nodes.map((node) => node.payload.data.task_id)).toEqual([tasks[0]]);
    expect(page2.nextCursor).toBeNull();
  });
});

describe('rotation', () => {
  it('signs with both the new and the previous secret during the overlap', async () => {
    const boss = await chairman();
    const hook = path();
    const { id, secret: before } = await createWebhook(t, boss, { url: receiver.url(hook), role: 'ceo' });
    const rotated = await t.graphql<any, unknown>(ROTATE_SECRET, { id }, boss);
    expect(rotated.errors).toBeUndefined();
    const after: string = rotated.data.rotateWebhookSecret.secret;
    expect(after).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(after).not.toBe(before);
    const validUntil = Date.parse(rotated.data.rotateWebhookSecret.webhook.previousSecretValidUntil);
    expect(validUntil - Date.now()).toBeGreaterThan(23 * 3600_000);

    await queueTask(t, boss, 'ceo');
    const delivery = nth(await receiver.waitFor(hook, 1));
    expect(delivery.signatures).toHaveLength(2);
    expect(signedWith(delivery, after)).toBe(true);
    expect(signedWith(delivery, before)).toBe(true);
    const headers = {
      'webhook-id': delivery.id,
      'webhook-timestamp': delivery.timestamp,
      'webhook-signature': delivery.signatures.map((signature) => `v1,${signature}`).join(' '),
    };
    expect(() => new StandardWebhook(before).verify(delivery.body, headers)).not.toThrow();
    expect(() => new StandardWebhook(after).verify(delivery.body, headers)).not.toThrow();
  });
});

describe('disabling', () => {
  it('disables a webhook that fails for long enough, with an event and an audit row', async () => {
    const boss = await chairman();
    const hook = path(status(500));
    const { id } = await createWebhook(t, boss, { url: receiver.url(hook), role: 'cmo' });
    await queueTask(t, boss, 'cmo');
    await queueTask(t, boss, 'cmo');

    const webhook = await vi.waitFor(
      async () => {
        const result = await t.graphql<any, unknown>(WEBHOOK, { id }, boss);
        expect(result.data.webhook.status).toBe('disabled');
        return result.data.webhook;
      },
      { timeout: DISABLE_AFTER_MS * 4, interval: 100 },
    );
    expect(webhook.disabledReason).toMatch(/the receiver answered 500/);
    const { nodes } = await deliveriesOf(t, boss, id);
    expect(nodes.map((node) => node.status)).toEqual(['failed', 'failed']);
    expect(nodes[1].attempts).toBeGreaterThan(1);

    const events = await t.db.prisma.outboxEvent.findMany({
      where: { tenantId: boss.tenantId, type: 'WEBHOOK_DISABLED' },
    });
    expect(events.map((event) => event.payload)).toMatchObject([{ webhook_id: id, role: 'cmo' }]);
    const member = await t.caller(['member'], { tenantId: boss.tenantId });
    const recent = await t.graphql<any, unknown>(
      `query { recentEvents(types: [WEBHOOK_DISABLED]) {
        event { __typename ... on WebhookDisabledEvent { webhookId webhookRole failingSince disabledAt } }
      } }`,
      undefined,
      member,
    );
    expect(recent.errors).toBeUndefined();
    expect(recent.data.recentEvents).toMatchObject([
      { event: { __typename: 'WebhookDisabledEvent', webhookId: id, webhookRole: 'cmo' } },
    ]);
    const audits = await t.db.prisma.auditEntry.findMany({
      where: { tenantId: boss.tenantId, action: 'webhook.disabled' },
    });
    expect(audits).toMatchObject([{ actor: 'system', targetId: id, outcome: 'failing' }]);

    // Nothing more is sent, and nothing new is queued, until it is enabled again.
    const sent = receiver.received(hook).length;
    await queueTask(t, boss, 'cmo');
    const redelivery = await t.graphql<any, unknown>(REDELIVER, { id: nodes[0].id }, boss);
    expect(redelivery.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    receiver.answer(hook, ok);
    const enabled = await t.graphql<any, unknown>(
      'mutation Enable($id: ID!) { enableWebhook(id: $id) { status failingSince disabledAt } }',
      { id },
      boss,
    );
    expect(enabled.data.enableWebhook).toEqual({ status: 'active', failingSince: null, disabledAt: null });
    expect(receiver.received(hook)).toHaveLength(sent);
    await queueTask(t, boss, 'cmo');
    await receiver.waitFor(hook, sent + 1);
    expect((await deliveriesOf(t, boss, id)).nodes).toHaveLength(3);
  });
});
