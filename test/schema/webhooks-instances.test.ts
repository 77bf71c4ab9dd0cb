import { expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import {
  createWebhook,
  queueTask,
  type Receiver,
  receiverOptions,
  withReceiverAndTwoApps,
} from './webhooks-support.js';

let receiver: Receiver;
let a: TestApp;
let b: TestApp;

withReceiverAndTwoApps(
  (made) => ({ receiver, a, b } = made),
  (started) => ({ ...receiverOptions(started), webhooks: { retry: { firstDelayMs: 20, maxDelayMs: 80 } } }),
);

it('two instances share the deliveries: each message is delivered once, in the role’s order', async () => {
  const chairman = await a.caller(['chairman']);
  let calls = 0;
  const accepted: string[] = [];
  receiver.answer('/shared', (delivery, response) => {
    calls += 1;
    const fail = calls % 3 === 1;
    if (!fail) accepted.push(delivery.id);
    response.writeHead(fail ? 500 : 200).end();
  });
  await createWebhook(a, chairman, { url: receiver.url('/shared'), role: 'cfo' });
  const tasks: string[] = [];
  for (let index = 0; index < 8; index += 1) {
    tasks.push(await queueTask(index % 2 === 0 ? a : b, chairman, 'cfo', `task ${index}`));
  }

  await receiver.waitFor('/shared', 12, 10_000);
  const received = receiver.received('/shared');
  // Retries repeat a message in place; collapsing the repeats leaves the queueing order.
  const order = received
    .map((delivery) => delivery.payload.data.task_id)
    .filter((taskId, index, all) => index === 0 || all[index - 1] !== taskId);
  expect(order).toEqual(tasks);
  expect(new Set(received.map((delivery) => delivery.id)).size).toBe(tasks.length);
  expect(accepted).toHaveLength(tasks.length);
  expect(new Set(accepted).size).toBe(tasks.length);
});
