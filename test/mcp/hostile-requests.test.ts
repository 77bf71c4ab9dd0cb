import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.js';
import { TEST_SECRET } from '../support/app.js';
import { migratedTarget, READY, runMain } from '../support/main-process.js';
import { BATCH_REFUSED } from './mcp-support.js';

/** A template of `count` GET endpoints, each with a few query parameters: a heavy tool list. */
const heavyTemplate = (name: string, count: number) => ({
  name,
  base_url: 'https://billing.example.com/v1',
  auth_type: 'none',
  description: 'Invoices, customers and payments of the billing system.',
  endpoints: Array.from({ length: count }, (_, index) => ({
    method: 'GET',
    path: `/resources/r${index}/{id}`,
    query_params: {
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      status: { enum: ['open', 'closed', 'void'] },
      since: { type: 'string', format: 'date-time' },
    },
  })),
});

const message = (id: number, method: string, params: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method,
  params,
});

interface Probes {
  /** Time of each `/healthz` answer that came back while the probes ran, in milliseconds. */
  times: number[];
  /** Why probing stopped early: a probe got no answer within 1 s. */
  failure?: string;
}

/**
 * Asks `/healthz` over its own socket, one request after another, until `work` settles, and times each
 * answer: a probe unanswered after 1 s stops the probing and is reported.
 */
async function probeWhile(url: string, work: Promise<unknown>): Promise<Probes> {
  let settled = false;
  const done = work.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  const probes: Probes = { times: [] };
  do {
    const started = performance.now();
    try {
      const health = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
      await health.arrayBuffer();
      probes.times.push(performance.now() - started);
    } catch (error) {
      probes.failure = `/healthz unanswered after ${Math.round(performance.now() - started)} ms (${String(error)})`;
      break;
    }
  } while (!settled);
  if (!probes.failure) await done;
  return probes;
}

describe('one hostile /mcp request (child process)', () => {
  it('is answered at once and small while /healthz of another client keeps answering within 1 s', {
    timeout: 120_000,
  }, async () => {
    const target = await migratedTarget('mcp-hostile');
    const aborts = new AbortController();
    try {
      const main = runMain(target.env);
      const [, url = ''] = await main.waitFor(READY);
      const tenantId = randomUUID();
      const chairman = await signToken(TEST_SECRET, { tenantId, sub: 'chairman', roles: ['chairman'] });
      const agent = await signToken(TEST_SECRET, { tenantId, sub: 'runtime', roles: ['agent'] });
      for (let index = 0; index < 10; index += 1) {
        const created = await fetch(`${url}/api/v1/forge/connectors`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${chairman}` },
          body: JSON.stringify({ template: heavyTemplate(`Billing ${index}`, 100) }),
        });
        expect(created.status).toBe(201);
      }
      const post = (body: unknown) =>
        fetch(`${url}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${agent}`,
          },
          body: JSON.stringify(body),
          signal: aborts.signal,
        }).then(async (response) => ({ status: response.status, text: await response.text() }));

      // A batch of 100 messages (as many as a batch could hold): tools/list, and calls of unknown names.
      const batch = [
        ...Array.from({ length: 60 }, (_, index) => message(index, 'tools/list')),
        ...Array.from({ length: 40 }, (_, index) =>
          message(100 + index, 'tools/call', { name: `nope_${index}__get_x`, arguments: {} }),
        ),
      ];
      expect(JSON.stringify(batch).length).toBeLessThan(10 * 1024);
      const hostile = post(batch);
      const duringBatch = await probeWhile(url, hostile);
      expect(duringBatch.failure).toBeUndefined();
      const refused = await hostile;
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.text)).toEqual(BATCH_REFUSED);

      // The largest single messages left: the list (one page, whatever the connectors), a search of every
      // endpoint, and a call of an unknown name.
      const list = post(message(1, 'tools/list'));
      expect((await probeWhile(url, list)).failure).toBeUndefined();
      const listed = await list;
      expect(listed.status).toBe(200);
      const { result } = JSON.parse(listed.text);
      expect(result.nextCursor).toBeUndefined();
      // The nine agent tools and the three of the connector surface, not one per endpoint.
      expect(result.tools.length).toBe(10 + 3);
      const search = post(
        message(3, 'tools/call', {
          name: 'search_connector_endpoints',
          arguments: { query: 'billing '.repeat(25), limit: 25 },
        }),
      );
      expect((await probeWhile(url, search)).failure).toBeUndefined();
      const searched = JSON.parse((await search).text).result.structuredContent;
      expect(searched.endpoints.length).toBe(25);
      expect(searched.total).toBe(10 * 100);

      const unknown = post(message(2, 'tools/call', { name: 'nope__get_x', arguments: {} }));
      expect((await probeWhile(url, unknown)).failure).toBeUndefined();
      expect(JSON.parse((await unknown).text).error).toMatchObject({ code: -32602 });
    } finally {
      aborts.abort();
      await target.cleanup();
    }
  });
});
