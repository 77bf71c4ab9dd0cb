import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { eventually } from '../support/eventually.js';
import {
  createWebhook,
  deliveriesOf,
  metricTotal,
  nth,
  ok,
  queueTask,
  REDELIVER,
  type Receiver,
  receiverOptions,
  signedWith,
  webhookEnv,
  withReceiverAndTwoApps,
} from './webhooks-support.js';

/**
 * A tenant has at most WEBHOOK_QUEUE_PER_TENANT deliveries pending. One its relay would queue beyond that
 * is recorded as `dropped` (never sent, counted in boardroom_webhook_deliveries_dropped_total), and can be
 * redelivered once the queue has room. Two instances share the database.
 */

const QUEUE_PER_TENANT = 3;

let receiver: Receiver;
let a: TestApp;
let b: TestApp;

withReceiverAndTwoApps(
  (made) => ({ receiver, a, b } = made),
  (started) => ({
    ...receiverOptions(started),
    env: { ...webhookEnv(started.receiver), WEBHOOK_QUEUE_PER_TENANT: String(QUEUE_PER_TENANT) },
  }),
);

async function droppedCount(): Promise<number> {
  const name = 'boardroom_webhook_deliveries_dropped_total';
  return (await metricTotal(a, name)) + (await metricTotal(b, name));
}

it(`records deliveries beyond a tenant's queue as dropped, sends the rest, and redelivers one once there is room (${databaseKind})`, async () => {
  const boss = await a.caller(['chairman']);
  const other = await b.caller(['chairman']);
  // The receiver holds its requests until the test lets them through.
  const held: ServerResponse[] = [];
  receiver.answer('/held', (_delivery, response) => void held.push(response));
  const { id, secret } = await createWebhook(a, boss, { url: receiver.url('/held'), role: 'cfo' });
  receiver.answer('/other', ok);
  await createWebhook(b, other, { url: receiver.url('/other'), role: 'cfo' });

  const tasks: string[] = [];
  for (let index = 0; index < QUEUE_PER_TENANT + 2; index += 1) {
    tasks.push(await queueTask(index % 2 === 0 ? a : b, boss, 'cfo', `task ${index}`));
  }
  const queued = await eventually(async () => {
    const { nodes } = await deliveriesOf(a, boss, id);
    expect(nodes).toHaveLength(tasks.length);
    return nodes.reverse();
  });
  expect(queued.map((delivery) => delivery.payload.data.task_id)).toEqual(tasks);
  expect(queued.map((delivery) => delivery.status)).toEqual([
    'pending',
    'pending',
    'pending',
    'dropped',
    'dropped',
  ]);
  for (const dropped of queued.slice(QUEUE_PER_TENANT)) {
    expect(dropped).toMatchObject({ attempts: 0, nextAttemptAt: null, lastAttemptAt: null });
    expect(dropped.lastError).toBe(
      `not queued: the tenant already had ${QUEUE_PER_TENANT} deliveries pending (its limit)`,
    );
  }
  expect(await droppedCount()).toBe(2);
  // The queue itself, as a scrape of either instance sees it.
  expect(await metricTotal(b, 'boardroom_webhook_queue_depth')).toBe(QUEUE_PER_TENANT);
  const onlyDropped = await deliveriesOf(a, boss, id, { status: 'dropped' });
  expect(onlyDropped.nodes).toHaveLength(2);

  // Another tenant's queue is its own.
  await queueTask(b, other, 'cfo');
  await receiver.waitFor('/other', 1);

  // A full queue refuses a redelivery too, and queues nothing.
  const dropped = nth(queued, QUEUE_PER_TENANT);
  const refused = await a.graphql<any, unknown>(REDELIVER, { id: dropped.id }, boss);
  expect(refused.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  expect(refused.errors?.[0]?.message).toBe(
    `Webhook deliveries of this tenant are at their limit (${QUEUE_PER_TENANT} pending): redeliver once they are sent`,
  );
  expect((await deliveriesOf(a, boss, id)).nodes).toHaveLength(tasks.length);

  // The held requests go through, the queue drains, and the dropped message can be sent after all.
  receiver.answer('/held', ok);
  await eventually(() => expect(held).toHaveLength(1));
  nth(held).writeHead(200).end();
  await receiver.waitFor('/held', QUEUE_PER_TENANT);
  await eventually(async () => {
    const { nodes } = await deliveriesOf(a, boss, id, { status: 'pending' });
    expect(nodes).toHaveLength(0);
  });
  const redelivered = await a.graphql<any, unknown>(REDELIVER, { id: dropped.id }, boss);
  expect(redelivered.errors).toBeUndefined();
  const again = nth(await receiver.waitFor('/held', QUEUE_PER_TENANT + 1), QUEUE_PER_TENANT);
  expect(again.id).toBe(dropped.messageId);
  expect(again.payload.data.task_id).toBe(nth(tasks, QUEUE_PER_TENANT));
  expect(signedWith(again, secret)).toBe(true);
  // Only the messages that were queued reached the receiver, each once, in order.
  expect(receiver.received('/held').map((delivery) => delivery.payload.data.task_id)).toEqual([
    ...tasks.slice(0, QUEUE_PER_TENANT),
    nth(tasks, QUEUE_PER_TENANT),
  ]);
});
