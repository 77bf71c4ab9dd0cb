import { createHmac, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Caller, TestApp, TestAppOptions } from '../support/app.js';
import { createTwoTestApps, type TwoTestApps } from '../support/fixtures.js';
import {
  createTestCertificate,
  fixedLookup,
  startHttpsServer,
  type TestCertificate,
  type TestHttpsServer,
} from '../support/https-server.js';

/** The receiver's host name; tests resolve it to 127.0.0.1. */
export const RECEIVER_HOST = 'hooks.acme-payments.com';
/** A public-looking name that resolves to a private address. */
export const PRIVATE_HOST = 'intranet.acme-payments.com';

/** One request the receiver took, with what the independent verification found. */
export interface ReceivedDelivery {
  path: string;
  id: string;
  timestamp: string;
  signatures: string[];
  body: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  at: number;
}

/**
 * The signature of Standard Webhooks, computed here with node:crypto alone (not the library the service
 * signs with): HMAC-SHA256 of `${id}.${timestamp}.${body}` under the base64 key after `whsec_`.
 */
export function expectedSignature(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
}

/** Whether one of the `v1,` entries of the header is the signature under `secret`. */
export function signedWith(delivery: ReceivedDelivery, secret: string): boolean {
  const expected = expectedSignature(secret, delivery.id, delivery.timestamp, delivery.body);
  return delivery.signatures.includes(expected);
}

export type Answer = (delivery: ReceivedDelivery, response: ServerResponse, request: IncomingMessage) => void;

export interface Receiver {
  server: TestHttpsServer;
  /** `https://RECEIVER_HOST:port<path>`. */
  url(path: string): string;
  /** How the receiver answers requests to `path` (default 200). */
  answer(path: string, answer: Answer): void;
  received(path: string): ReceivedDelivery[];
  /** Resolves with the requests to `path` once `count` have arrived; rejects after `timeoutMs`. */
  waitFor(path: string, count: number, timeoutMs?: number): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<{
  receiver: Receiver;
  ca: string;
  lookup: ReturnType<typeof fixedLookup>;
  /** The receiver's certificate and key, for another server under the same name. */
  certificate: TestCertificate;
}> {
  const certificate = await createTestCertificate([RECEIVER_HOST]);
  const server = await startHttpsServer(certificate);
  const answers = new Map<string, Answer>();
  const byPath = new Map<string, ReceivedDelivery[]>();
  const arrivals = new EventEmitter();
  const receiver: Receiver = {
    server,
    url: (path) => `https://${RECEIVER_HOST}:${server.port}${path}`,
    answer: (path, answer) => {
      answers.set(path, answer);
      server.route(path, (request, body, response) => {
        const header = (name: string) => String(request.headers[name] ?? '');
        const delivery: ReceivedDelivery = {
          path,
          id: header('webhook-id'),
          timestamp: header('webhook-timestamp'),
          signatures: header('webhook-signature')
            .split(' ')
            .filter((entry) => entry.startsWith('v1,'))
            .map((entry) => entry.slice(3)),
          body,
          payload: JSON.parse(body),
          at: Date.now(),
        };
        const list = byPath.get(path) ?? [];
        list.push(delivery);
        byPath.set(path, list);
        (answers.get(path) ?? ok)(delivery, response, request);
        arrivals.emit(path);
      });
    },
    received: (path) => byPath.get(path) ?? [],
    waitFor(path, count, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const list = byPath.get(path) ?? [];
          if (list.length < count) return;
          arrivals.off(path, check);
          clearTimeout(timer);
          resolve(list);
        };
        const timer = setTimeout(() => {
          arrivals.off(path, check);
          reject(new Error(`${path} received ${(byPath.get(path) ?? []).length} of ${count} deliveries`));
        }, timeoutMs);
        arrivals.on(path, check);
        check();
      });
    },
    close: () => server.close(),
  };
  return {
    receiver,
    ca: certificate.cert,
    lookup: fixedLookup({ [RECEIVER_HOST]: '127.0.0.1', [PRIVATE_HOST]: '10.1.2.3' }),
    certificate,
  };
}

export const ok: Answer = (_delivery, response) => void response.writeHead(200).end('ok');
export const status =
  (code: number): Answer =>
  (_delivery, response) =>
    void response.writeHead(code).end();

/** Env of an app that may reach the receiver and seal secrets. */
export const webhookEnv = (receiver: Receiver) => ({
  CONNECTOR_EGRESS_ALLOW: `127.0.0.1:${receiver.server.port}`,
  CONNECTOR_SECRETS_KEY: `k1:${randomBytes(32).toString('base64')}`,
});

export type StartedReceiver = Awaited<ReturnType<typeof startReceiver>>;

/** Test-app options of an instance that delivers to `started`'s receiver: its env, CA and resolver. */
export const receiverOptions = (started: StartedReceiver) => ({
  env: webhookEnv(started.receiver),
  egress: { ca: started.ca, lookup: started.lookup },
});

/**
 * A receiver and two instances on one database that deliver to it, each with its relay and its
 * dispatcher, for the tests of the block that calls this: made before them, closed after them.
 * `options` are the instances' options once the receiver has started (default: receiverOptions).
 */
export function withReceiverAndTwoApps(
  ready: (made: { receiver: Receiver; a: TestApp; b: TestApp }) => unknown,
  options: (
    started: StartedReceiver,
  ) => Omit<TestAppOptions, 'database'> | Promise<Omit<TestAppOptions, 'database'>> = receiverOptions,
): void {
  let started: StartedReceiver | undefined;
  let apps: TwoTestApps | undefined;
  beforeAll(async () => {
    started = await startReceiver();
    apps = await createTwoTestApps(await options(started));
    await ready({ receiver: started.receiver, a: apps.a, b: apps.b });
  });
  afterAll(async () => {
    await apps?.close();
    await started?.receiver.close();
  });
}

export const WEBHOOK_FIELDS = `id role url status createdAt secretRotatedAt previousSecretValidUntil failingSince disabledAt disabledReason`;
export const DELIVERY_FIELDS = `id webhookId messageId eventId eventType payload status attempts createdAt nextAttemptAt lastAttemptAt lastStatusCode lastError lastDurationMs deliveredAt latencyMs redeliveryOf`;

export const CREATE_WEBHOOK = `mutation CreateWebhook($input: CreateWebhookInput!) {
  createWebhook(input: $input) { secret webhook { ${WEBHOOK_FIELDS} } }
}`;
export const ROTATE_SECRET = `mutation RotateWebhookSecret($id: ID!) {
  rotateWebhookSecret(id: $id) { secret webhook { ${WEBHOOK_FIELDS} } }
}`;
export const ENABLE_WEBHOOK = `mutation EnableWebhook($id: ID!) { enableWebhook(id: $id) { ${WEBHOOK_FIELDS} } }`;
export const DISABLE_WEBHOOK = `mutation DisableWebhook($id: ID!) { disableWebhook(id: $id) { ${WEBHOOK_FIELDS} } }`;
export const REDELIVER = `mutation Redeliver($id: ID!) { redeliverWebhookDelivery(id: $id) { ${DELIVERY_FIELDS} } }`;
export const WEBHOOKS = `query Webhooks { webhooks { ${WEBHOOK_FIELDS} } }`;
export const WEBHOOK = `query Webhook($id: ID!) { webhook(id: $id) { ${WEBHOOK_FIELDS} } }`;
export const DELIVERIES = `query Deliveries($webhookId: ID!, $status: WebhookDeliveryStatus, $first: Int, $after: String) {
  webhookDeliveries(webhookId: $webhookId, status: $status, first: $first, after: $after) {
    nodes { ${DELIVERY_FIELDS} } nextCursor
  }
}`;
export const CHAT = `mutation Chat($role: String!, $input: ChatMessageInput!) {
  sendChatMessage(role: $role, input: $input) { taskId }
}`;

export interface CreatedWebhook {
  id: string;
  secret: string;
  webhook: Record<string, unknown>;
}

export async function createWebhook(
  t: TestApp,
  caller: Caller,
  input: { url: string; role?: string | null },
): Promise<CreatedWebhook> {
  const result = await t.graphql<any, unknown>(CREATE_WEBHOOK, { input }, caller);
  expect(result.errors).toBeUndefined();
  const created = result.data.createWebhook;
  return { id: created.webhook.id, secret: created.secret, webhook: created.webhook };
}

/** Queues a task for `role` by a chat message; answers its id. */
export async function queueTask(
  t: TestApp,
  caller: Caller,
  role: string,
  message = 'Prepare the Q3 forecast',
): Promise<string> {
  const result = await t.graphql<any, unknown>(CHAT, { role, input: { message } }, caller);
  expect(result.errors).toBeUndefined();
  return result.data.sendChatMessage.taskId;
}

export async function deliveriesOf(
  t: TestApp,
  caller: Caller,
  webhookId: string,
  extra: Record<string, unknown> = {},
) {
  const result = await t.graphql<any, unknown>(DELIVERIES, { webhookId, ...extra }, caller);
  expect(result.errors).toBeUndefined();
  return result.data.webhookDeliveries as { nodes: any[]; nextCursor: string | null };
}

/** The `index`th item, which the test expects to exist. */
export function nth<T>(list: readonly T[], index = 0): T {
  const item = list[index];
  if (item === undefined) throw new Error(`expected an item at ${index} of ${list.length}`);
  return item;
}

/**
 * How long a test waits for a delivery's outcome to be recorded: the same deadline as `waitFor` gives a
 * delivery to arrive (vitest's default of 1 s is shorter than a cold first delivery on a loaded machine).
 */
export const RECORDED = { timeout: 5000, interval: 25 };

/** The sum of a metric's series on one instance, read as a scrape reads it. */
export async function metricTotal(t: TestApp, name: string): Promise<number> {
  await t.app.services.metrics.render();
  const metric = t.app.services.metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`the instance has no ${name} metric`);
  const { values } = await metric.get();
  return values.reduce((sum, { value }) => sum + value, 0);
}

/** Passes the instance's webhook dispatcher has run (every outcome). */
export const dispatcherPasses = (t: TestApp) => metricTotal(t, 'boardroom_webhook_dispatch_passes_total');
