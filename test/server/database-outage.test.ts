import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/client.js';
import { databaseUnavailableCause } from '../../src/db/unavailable.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

// Short timeouts so an outage is answered in about a second; the bounds below leave a wide margin.
const env = {
  DATABASE_POOL_SIZE: '4',
  DATABASE_CONNECT_TIMEOUT_MS: '500',
  DATABASE_STATEMENT_TIMEOUT_MS: '1000',
  READYZ_TIMEOUT_MS: '500',
  RETRY_AFTER_SECONDS: '3',
};
const config = loadConfig(env);
// Connecting, then a statement and Prisma's rollback each waiting out the statement timeout (+ the
// client's 500 ms): what a hung server may cost a request at most, plus several seconds of slack.
const ANSWER_BOUND_MS =
  config.database.connectTimeoutMs + 2 * (config.database.statementTimeoutMs + 500) + 5000;
const READYZ_BOUND_MS = config.readyzTimeoutMs + 5000;

const chatMutation = `mutation Chat($input: ChatMessageInput!) {
  sendChatMessage(role: "cfo", input: $input) { taskId }
}`;

let base: TestDatabase;
let proxy: TcpProxy;
let db: Database;
let t: TestApp;
let chairman: Caller;

async function timed<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await run();
  return { result, ms: performance.now() - started };
}

const postChat = (message: string) =>
  t.rest('POST', '/api/v1/agents/cfo/chat', { caller: chairman, body: { message, persist_thread: false } });

async function graphqlChat(message: string) {
  const response = await t.app.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${chairman.token}` },
    body: JSON.stringify({ query: chatMutation, variables: { input: { message, persistThread: false } } }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const readyz = () => t.rest('GET', '/readyz');
const storedMessages = async () =>
  (await base.db.prisma.task.findMany({ where: { tenantId: chairman.tenantId }, select: { message: true } }))
    .map((task) => task.message)
    .sort();

/** The same instance serves again: ready, and a write is acknowledged and stored. */
async function expectRecovered(message: string) {
  await expect.poll(async () => (await readyz()).status, { timeout: 20_000, interval: 100 }).toBe(200);
  const response = await postChat(message);
  expect(response.status).toBe(202);
  expect(await storedMessages()).toContain(message);
}

describe.skipIf(databaseKind !== 'postgresql')('PostgreSQL stopped or hung', () => {
  beforeAll(async () => {
    base = await createTestDatabase();
    const target = new URL(base.url as string);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    db = await openDatabase({
      databaseUrl: proxy.rewrite(base.url as string),
      dataDir: 'memory://',
      limits: config.database,
    });
    t = await createTestApp({ database: { db, url: base.url, drop: async () => {} }, env });
    chairman = await t.caller(['chairman']);
    expect((await postChat('before the outage')).status).toBe(202);
  });
  afterAll(async () => {
    await t?.close();
    await db?.close();
    await proxy?.close();
    await base?.drop();
  });
  beforeEach(async () => {
    await proxy.resume();
  });

  it('answers 503 with Retry-After on REST and GraphQL while PostgreSQL is stopped, and recovers', async () => {
    await proxy.stop();

    const rest = await timed(() => postChat('while stopped (REST)'));
    expect(rest.result.status).toBe(503);
    expect(rest.result.headers.get('retry-after')).toBe('3');
    expect(rest.result.body).toEqual({ detail: 'Service temporarily unavailable; retry in 3 s' });
    expect(rest.ms).toBeLessThan(ANSWER_BOUND_MS);

    const graphql = await graphqlChat('while stopped (GraphQL)');
    expect(graphql.status).toBe(503);
    expect(graphql.headers.get('retry-after')).toBe('3');
    expect(graphql.body.errors).toEqual([
      expect.objectContaining({
        message: 'Service temporarily unavailable; retry in 3 s',
        extensions: { code: 'SERVICE_UNAVAILABLE' },
      }),
    ]);

    const ready = await readyz();
    expect(ready.status).toBe(503);
    expect(ready.body.status).toBe('unavailable');

    await proxy.resume();
    await expectRecovered('after the stop');
    expect(await storedMessages()).not.toContain('while stopped (REST)');
    expect(await storedMessages()).not.toContain('while stopped (GraphQL)');
  });

  it('answers 503 within the timeouts while PostgreSQL hangs, and recovers without a restart', async () => {
    proxy.hang();

    const [rest, graphql, ready] = await Promise.all([
      timed(() => postChat('while hung (REST)')),
      timed(() => graphqlChat('while hung (GraphQL)')),
      timed(readyz),
    ]);
    expect(rest.result.status).toBe(503);
    expect(rest.result.headers.get('retry-after')).toBe('3');
    expect(rest.ms).toBeLessThan(ANSWER_BOUND_MS);
    expect(graphql.result.status).toBe(503);
    expect(graphql.result.body.errors[0].extensions).toEqual({ code: 'SERVICE_UNAVAILABLE' });
    expect(graphql.ms).toBeLessThan(ANSWER_BOUND_MS);
    expect(ready.result.status).toBe(503);
    expect(ready.ms).toBeLessThan(READYZ_BOUND_MS);

    await proxy.resume();
    await expectRecovered('after the hang');
    expect(await storedMessages()).not.toContain('while hung (REST)');
    expect(await storedMessages()).not.toContain('while hung (GraphQL)');
  });

  it('ends a statement that outlives DATABASE_STATEMENT_TIMEOUT_MS on the server as unavailable', async () => {
    const outcome = await timed(() =>
      db.prisma.$queryRawUnsafe('SELECT pg_sleep(30)').catch((error) => error),
    );

    expect(databaseUnavailableCause(outcome.result)).toBe('57014');
    expect(outcome.ms).toBeLessThan(ANSWER_BOUND_MS);
  });

  it('stops waiting for a statement whose answer never comes', async () => {
    const pending = timed(() => db.prisma.$queryRawUnsafe('SELECT 1').catch((error) => error));
    proxy.hang();
    const outcome = await pending;

    expect(databaseUnavailableCause(outcome.result)).toBeDefined();
    expect(outcome.ms).toBeLessThan(ANSWER_BOUND_MS);
    await proxy.resume();
    await expectRecovered('after a hung statement');
  });
});
