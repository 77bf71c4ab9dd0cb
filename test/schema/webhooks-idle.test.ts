import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/eventually.js';
import {
  createWebhook,
  DISABLE_WEBHOOK,
  deliveriesOf,
  dispatcherPasses,
  nth,
  queueTask,
  type Receiver,
  startReceiver,
  status,
  webhookEnv,
} from './webhooks-support.js';

/**
 * The webhook dispatcher plans its next look only from deliveries it could claim: one waiting behind a
 * failing delivery of its webhook, pending for a webhook disabled by hand, or of a tenant with all its
 * places taken, wakes nothing. Idle with such deliveries it runs no pass, and the same after a restart.
 * A pass is the dispatcher's only work, so counting passes proves it sleeps; what an idle instance costs
 * in CPU is a measurement, not a test, and belongs to `npm run bench`.
 */

// A failed delivery is tried again 5 to 10 minutes later: never within this file.
const RETRY = { firstDelayMs: 600_000, maxDelayMs: 600_000 };
/** How long each measurement watches the idle instances. */
const WINDOW_MS = 3000;
/** The default of WEBHOOK_IN_FLIGHT_PER_TENANT. */
const IN_FLIGHT_PER_TENANT = 4;

let receiver: Receiver;
let database: TestDatabase;
let options: Parameters<typeof createTestApp>[0];
let instances: TestApp[] = [];

beforeAll(async () => {
  const started = await startReceiver();
  receiver = started.receiver;
  database = await createTestDatabase();
  options = {
    database,
    env: webhookEnv(receiver),
    egress: { ca: started.ca, lookup: started.lookup },
    webhooks: { retry: RETRY },
  };
  // Two instances on one database, each with its relay and its dispatcher.
  instances = [await createTestApp(options), await createTestApp(options)];
});
afterAll(async () => {
  for (const instance of instances) await instance.close();
  await database?.drop();
  await receiver?.close();
});

/** The passes both dispatchers ran while the test waits one window and does nothing else. */
async function watchIdle(): Promise<{ passes: number }> {
  const passesBefore = await totalPasses();
  await sleep(WINDOW_MS);
  return { passes: (await totalPasses()) - passesBefore };
}

async function totalPasses(): Promise<number> {
  let total = 0;
  for (const instance of instances) total += await dispatcherPasses(instance);
  return total;
}

it(`sleeps while nothing is pending (${databaseKind})`, async () => {
  const idle = await watchIdle();
  expect(idle.passes).toBeLessThanOrEqual(2);
});

it(`sleeps while its only deliveries cannot be claimed, and after a restart (${databaseKind})`, async () => {
  const [a] = instances as [TestApp, TestApp];
  const boss = await a.caller(['chairman']);

  // A failing receiver with two queued events: the first waits for its retry, the second behind it.
  receiver.answer('/failing', status(500));
  const failing = await createWebhook(a, boss, { url: receiver.url('/failing'), role: 'cfo' });
  await queueTask(a, boss, 'cfo', 'first');
  await queueTask(a, boss, 'cfo', 'second');
  // A webhook disabled by hand with a delivery pending, whose retry has fallen due.
  receiver.answer('/held', status(500));
  const held = await createWebhook(a, boss, { url: receiver.url('/held'), role: 'cto' });
  await queueTask(a, boss, 'cto');
  await eventually(async () => {
    const [first, second] = (await deliveriesOf(a, boss, failing.id)).nodes.reverse();
    expect(first).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500 });
    expect(second).toMatchObject({ status: 'pending', attempts: 0 });
    expect((await deliveriesOf(a, boss, held.id)).nodes).toMatchObject([
      { status: 'pending', attempts: 1, lastStatusCode: 500 },
    ]);
  });
  const disabled = await a.graphql<any, unknown>(DISABLE_WEBHOOK, { id: held.id }, boss);
  expect(disabled.errors).toBeUndefined();
  // Time passing, made explicit: the disabled webhook's retry is due now.
  await a.db.prisma.$executeRaw`
    UPDATE webhook_deliveries SET next_attempt_at = now() WHERE webhook_id = ${held.id}::uuid`;
  const sent = receiver.server.received.length;

  // A pass the last recording started may still end inside the window: at most one per instance.
  const idle = await watchIdle();
  expect(idle.passes).toBeLessThanOrEqual(2);

  // Restarted instances look once, when they start listening, and sleep again.
  for (const instance of instances.splice(0)) await instance.close();
  instances.push(await createTestApp(options), await createTestApp(options));
  for (const instance of instances) {
    await eventually(async () => expect(await dispatcherPasses(instance)).toBeGreaterThan(0));
  }
  const restarted = await watchIdle();
  expect(restarted.passes).toBeLessThanOrEqual(2);
  expect(receiver.server.received).toHaveLength(sent);
});

it(`sleeps while a tenant at its cap of attempts in flight waits for one to end (${databaseKind})`, async () => {
  const [a] = instances as [TestApp, TestApp];
  const boss = await a.caller(['chairman']);
  // Its receivers hold every request until the test lets them through.
  const held: ServerResponse[] = [];
  const paths = Array.from({ length: IN_FLIGHT_PER_TENANT + 1 }, (_, index) => `/capped/${index}`);
  for (const path of paths) {
    receiver.answer(path, (_delivery, response) => void held.push(response));
    await createWebhook(a, boss, { url: receiver.url(path) });
  }
  await queueTask(a, boss, 'cfo');
  await eventually(() => expect(held).toHaveLength(IN_FLIGHT_PER_TENANT));

  // The last delivery is due, but its tenant has no place free: no pass until an attempt ends.
  const passesBefore = await totalPasses();
  await sleep(WINDOW_MS);
  expect((await totalPasses()) - passesBefore).toBeLessThanOrEqual(2);
  expect(held).toHaveLength(IN_FLIGHT_PER_TENANT);

  for (const response of held.splice(0)) response.writeHead(200).end();
  await eventually(() => expect(held).toHaveLength(1));
  nth(held).writeHead(200).end();
});
