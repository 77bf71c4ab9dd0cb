import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { capturingLogger } from '../support/fixtures.js';
import { createWebhook, type Receiver, startReceiver } from './webhooks-support.js';

let receiver: Receiver;
let database: TestDatabase;
let started: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  started = await startReceiver();
  receiver = started.receiver;
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
  await receiver?.close();
});

it('logs at start-up how many webhooks sign with a secret no configured key opens', async () => {
  const egress = { ca: started.ca, lookup: started.lookup };
  const allow = { CONNECTOR_EGRESS_ALLOW: `127.0.0.1:${receiver.server.port}` };
  const first: TestApp = await createTestApp({
    database,
    egress,
    env: { ...allow, CONNECTOR_SECRETS_KEY: `k1:${randomBytes(32).toString('base64')}` },
  });
  const chairman = await first.caller(['chairman']);
  await createWebhook(first, chairman, { url: receiver.url('/hook') });
  await first.close();

  const { lines, logger } = capturingLogger();
  const second = await createTestApp({
    database,
    egress,
    logger,
    env: { ...allow, CONNECTOR_SECRETS_KEY: `k9:${randomBytes(32).toString('base64')}` },
  });
  await second.close();
  expect(lines).toContainEqual(
    expect.objectContaining({
      level: 50,
      webhooks: 1,
      msg: expect.stringContaining(
        'webhook secrets are sealed under keys CONNECTOR_SECRETS_KEY does not hold',
      ),
    }),
  );
});
