import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import {
  createWebhook,
  DELIVERIES,
  deliveriesOf,
  ok,
  queueTask,
  REDELIVER,
  type Receiver,
  ROTATE_SECRET,
  signedWith,
  startReceiver,
  status,
  WEBHOOK,
  webhookEnv,
} from './webhooks-support.js';

const CALL_TIMEOUT_MS = 400;
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
  it('POSTs a task.queued message signed per Standard Webhooks when work is queued for the role', async () => {
    const boss = await chairman();
    const hook = path();
    const { id, secret } = await createWebhook(t, boss, { url: receiver.url(hook), role: 'cfo' });
    const member = await t.caller(['member'], { tenantId: boss.tenantId });
    const taskId = await queueTask(t, member, 'cfo', 'Wire 40k to the supplier, account 1234');

    const [delivery] = await receiver.waitFor(hook, 1);
    expect(signedWith(delivery!, secret)).toBe(true);
    expect(Math.abs(Number(delivery!.timestamp) - Date.now() / 1000)).toBeLessThan(30);
    expect(delivery!.payload).toEqual({
      type: 'task.queued',
      timestamp: expect.any(String),
      data: {
        event_id: expect.any(String),
        tenant_id: boss.tenantId,
        role: 'cfo',
        task_id: taskId,
        attempts: 0,
        updated_at: expect.any(String),
      },
    });
    expect(delivery!.body).not.toContain('Wire 40k');
    // The maintained implementation agrees with the independent one.
    expect(() =>
      new StandardWebhook(secret).verify(delivery!.body, {
        'webhook-id': delivery!.id,
        'webhook-timestamp': delivery!.timestamp,
        'webhook-signature': `v1,${delivery!.signatures[0]}`,
      }),
    ).not.toThrow();

    await vi.waitFor(async () => {
      const { nodes } = await deliveriesOf(t, boss, id);
      expect(nodes).toMatchObject([
        {
          webhookId: id,
          messageId: delivery!.id,
          eventType: 'task.queued',
          status: 'delivered',
          attempts: 1,
          lastStatusCode: 200,
          lastError: null,
          nextAttemptAt: null,
        },
      ]);
      expect(nodes[0].latencyMs).toBeGreaterThanOrEqual(0);
    });
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
    const [only] = await receiver.waitFor(cfoHook, 1);
    expect(only!.payload.data.task_id).toBe(cfo);
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

    const [paused, resumed] = await receiver.waitFor(hook, 2);
    expect(paused!.payload).toMatchObject({
      type: 'agent.paused',
      data: { role: 'cto', actor_user_id: 'chair-1', event_id: pause.body.event_id },
    });
    expect(resumed!.payload).toMatchObject({ type: 'agent.resumed', data: { role: 'cto' } });
    expect(paused!.body + resumed!.body).not.toContain('secret');
  });
});
