// Webhook delivery latency: from a chat message's commit (its response) to the signed POST reaching a
// loopback HTTPS receiver, one message at a time, on PGlite in this process (the guarded egress client
// needs the receiver's certificate and name, which only createApp's test options can give it).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { createApp } from '../src/app.js';
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

const HOST = 'hooks.acme-payments.com';
const SECRET = 'bench-secret-that-is-long-enough-for-hs256-signing';

export async function measureWebhookLatency(deliveries: number): Promise<WebhookLatencyFigures> {
  const certificate = await createTestCertificate([HOST]);
  let arrived: ((at: number) => void) | undefined;
  const receiver = createServer(certificate, (request, response) => {
    request.resume();
    request.on('end', () => {
      arrived?.(performance.now());
      response.writeHead(204).end();
    });
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
  try {
    await app.start();
    const token = await signToken(SECRET, {
      tenantId: '7f1c8a52-9a0e-4d1e-8f7a-3b2c1d0e9f8a',
      sub: 'bench-chairman',
      roles: ['chairman'],
    });
    const graphql = async (query: string, variables: Record<string, unknown>) => {
      const response = await app.yoga.fetch('http://bench/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query, variables }),
      });
      const result = (await response.json()) as { errors?: unknown[] };
      if (result.errors) throw new Error(JSON.stringify(result.errors));
    };
    await graphql(
      'mutation ($url: String!) { createWebhook(input: { url: $url, role: "cfo" }) { secret } }',
      {
        url: `https://${HOST}:${port}/hook`,
      },
    );
    const chat =
      'mutation { sendChatMessage(role: "cfo", input: { message: "Close the books" }) { taskId } }';
    const latencies: number[] = [];
    const mutations: number[] = [];
    // Warm-up: the first deliveries open the TLS connection and warm the statements.
    for (let index = 0; index < deliveries + 5; index += 1) {
      const received = new Promise<number>((resolve) => {
        arrived = resolve;
      });
      const started = performance.now();
      await graphql(chat, {});
      const committed = performance.now();
      const at = await received;
      if (index < 5) continue;
      latencies.push(Math.max(0, at - committed));
      mutations.push(committed - started);
    }
    return {
      deliveries,
      medianMs: median(latencies),
      p99Ms: percentile(latencies, 99),
      worstMs: Math.max(...latencies),
      mutationMedianMs: median(mutations),
    };
  } finally {
    await app.close();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
    await rm(dataDir, { recursive: true, force: true });
  }
}
