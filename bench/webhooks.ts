// Webhook delivery latency: from a chat message's commit (its response) to the signed POST reaching a
// loopback HTTPS receiver, one message at a time, on PGlite in this process (the guarded egress client
// needs the receiver's certificate and name, which only createApp's test options can give it). Then the
// same for a tenant while another tenant's slow receivers have a backlog.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { type App, createApp } from '../src/app.js';
import { signToken } from '../src/auth/tokens.js';
import { loadConfig } from '../src/config.js';
import { createTestCertificate, fixedLookup } from '../test/support/https-server.js';
import { median, percentile } from './measure.js';

export interface WebhookLatencyFigures {
  deliveries: number;
  /** From the chat mutation's response (its commit is done) to the receiver reading the request. */
  medianMs: number;
  p99Ms: number;
  worstMs: number;
  /** The chat mutation itself, for scale. */
  mutationMedianMs: number;
}

export interface WebhookFairnessFigures {
  /** The slow tenant's endpoints, each answering after `slowAnswerMs`. */
  slowEndpoints: number;
  slowAnswerMs: number;
  /** Deliveries queued for the slow tenant right before the measurement began. */
  slowBacklog: number;
  /** The other tenant's deliveries, one at a time, during that backlog. */
  deliveries: number;
  medianMs: number;
  p99Ms: number;
  worstMs: number;
  /** The most attempts the slow tenant had in flight at once (its cap, WEBHOOK_IN_FLIGHT_PER_TENANT). */
  slowInFlightMost: number;
}

const HOST = 'hooks.acme-payments.com';
const SECRET = 'bench-secret-that-is-long-enough-for-hs256-signing';
const CHAT = 'mutation { sendChatMessage(role: "cfo", input: { message: "Close the books" }) { taskId } }';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

interface WebhookBench {
  app: App;
  /** A chairman of a new tenant. */
  tenant(): Promise<string>;
  graphql(token: string, query: string, variables?: Record<string, unknown>): Promise<void>;
  /** Registers a tenant-wide webhook to `path`, answered by `handler` once the request is read. */
  webhook(token: string, path: string, handler: Handler): Promise<void>;
}

/** A loopback HTTPS receiver and an in-process PGlite gateway allowed to reach it, for `run`. */
async function withWebhookBench<T>(run: (bench: WebhookBench) => Promise<T>): Promise<T> {
  const certificate = await createTestCertificate([HOST]);
  const handlers = new Map<string, Handler>();
  const receiver = createServer(certificate, (request, response) => {
    request.resume();
    request.on('end', () => handlers.get(request.url ?? '')?.(request, response));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-bench-webhooks-'));
  const config = loadConfig({
    AUTH_JWT_SECRET: SECRET,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    CONNECTOR_EGRESS_ALLOW: `127.0.0.1:${port}`,
    CONNECTOR_SECRETS_KEY: `k1:${randomBytes(32).toString('base64')}`,
  });
  const app = await createApp(config, {
    logger: pino({ level: 'silent' }),
    egress: { ca: certificate.cert, lookup: fixedLookup({ [HOST]: '127.0.0.1' }) },
  });
  const graphql: WebhookBench['graphql'] = async (token, query, variables = {}) => {
    const response = await app.yoga.fetch('http://bench/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    });
    const result = (await response.json()) as { errors?: unknown[] };
    if (result.errors) throw new Error(JSON.stringify(result.errors));
  };
  try {
    await app.start();
    return await run({
      app,
      tenant: () => signToken(SECRET, { tenantId: randomUUID(), sub: 'bench-chairman', roles: ['chairman'] }),
      graphql,
      async webhook(token, hookPath, handler) {
        handlers.set(hookPath, handler);
        await graphql(token, 'mutation ($url: String!) { createWebhook(input: { url: $url }) { secret } }', {
          url: `https://${HOST}:${port}${hookPath}`,
        });
      },
    });
  } finally {
    await app.close();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Sends `deliveries` chats for `token`'s tenant one at a time; each latency runs from the chat's response to the POST. */
async function deliverOneAtATime(
  bench: WebhookBench,
  token: string,
  deliveries: number,
  warmup: number,
  arrivals: { next: ((at: number) => void) | undefined },
): Promise<{ latencies: number[]; mutations: number[] }> {
  const latencies: number[] = [];
  const mutations: number[] = [];
  for (let index = 0; index < deliveries + warmup; index += 1) {
    const received = new Promise<number>((resolve) => {
      arrivals.next = resolve;
    });
    const started = performance.now();
    await bench.graphql(token, CHAT);
    const committed = performance.now();
    const at = await received;
    if (index < warmup) continue;
    latencies.push(Math.max(0, at - committed));
    mutations.push(committed - started);
  }
  return { latencies, mutations };
}

export async function measureWebhookLatency(deliveries: number): Promise<WebhookLatencyFigures> {
  return withWebhookBench(async (bench) => {
    const token = await bench.tenant();
    const arrivals: { next: ((at: number) => void) | undefined } = { next: undefined };
    await bench.webhook(token, '/hook', (_request, response) => {
      arrivals.next?.(performance.now());
      response.writeHead(204).end();
    });
    // Warm-up: the first deliveries open the TLS connection and warm the statements.
    const { latencies, mutations } = await deliverOneAtATime(bench, token, deliveries, 5, arrivals);
    return {
      deliveries,
      medianMs: median(latencies),
      p99Ms: percentile(latencies, 99),
      worstMs: Math.max(...latencies),
      mutationMedianMs: median(mutations),
    };
  });
}

/**
 * Another tenant's delivery latency while one tenant has more endpoints than the instance has places (16),
 * each answering after `slowAnswerMs`, and three events queued for each: the report's case of a tenant
 * whose slow receivers delayed everyone else's deliveries by tens of seconds.
 */
export async function measureWebhookFairness(deliveries: number): Promise<WebhookFairnessFigures> {
  const slowEndpoints = 24;
  const slowAnswerMs = 2000;
  const slowEvents = 3;
  return withWebhookBench(async (bench) => {
    const slowToken = await bench.tenant();
    const otherToken = await bench.tenant();
    const slow = { open: 0, most: 0 };
    let backlogStarted: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      backlogStarted = resolve;
    });
    for (let index = 0; index < slowEndpoints; index += 1) {
      await bench.webhook(slowToken, `/slow/${index}`, (_request, response) => {
        slow.open += 1;
        backlogStarted();
        slow.most = Math.max(slow.most, slow.open);
        const timer = setTimeout(() => {
          slow.open -= 1;
          response.writeHead(204).end();
        }, slowAnswerMs);
        response.once('close', () => clearTimeout(timer));
      });
    }
    const arrivals: { next: ((at: number) => void) | undefined } = { next: undefined };
    await bench.webhook(otherToken, '/prompt', (_request, response) => {
      arrivals.next?.(performance.now());
      response.writeHead(204).end();
    });
    // The other tenant's warm-up goes first: every delivery measured then waits behind the backlog.
    await deliverOneAtATime(bench, otherToken, 0, 5, arrivals);
    for (let index = 0; index < slowEvents; index += 1) await bench.graphql(slowToken, CHAT);
    await started;
    const { latencies } = await deliverOneAtATime(bench, otherToken, deliveries, 0, arrivals);
    return {
      slowEndpoints,
      slowAnswerMs,
      slowBacklog: slowEndpoints * slowEvents,
      deliveries,
      medianMs: median(latencies),
      p99Ms: percentile(latencies, 99),
      worstMs: Math.max(...latencies),
      slowInFlightMost: slow.most,
    };
  });
}
