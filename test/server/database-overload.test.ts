import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/client.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';

// A pool far smaller than the burst and a short queue: most of the burst is refused.
const env = { DATABASE_POOL_SIZE: '3', DATABASE_QUEUE_SIZE: '20', DATABASE_CONNECT_TIMEOUT_MS: '2000' };
const { database: limits } = loadConfig(env);
const BURST = 2000;

let database: TestDatabase;
let t: TestApp;
let chairman: Caller;

beforeAll(async () => {
  const base = await createTestDatabase();
  const db = base.url ? await openDatabase({ databaseUrl: base.url, dataDir: 'memory://', limits }) : base.db;
  database = {
    db,
    url: base.url,
    async drop() {
      if (db !== base.db) await db.close();
      await base.drop();
    },
  };
  t = await createTestApp({ database, env });
  chairman = await t.caller(['chairman']);
  // The tenant exists before the burst, so each request is one read and one write transaction.
  expect((await t.rest('GET', '/api/v1/agents/cfo/vitals', { caller: chairman })).status).toBe(200);
});
afterAll(async () => {
  await t?.close();
  await database?.drop();
});

describe(`a burst of ${BURST} concurrent writes (${databaseKind})`, () => {
  it('answers only 202, 429 or 503, and exactly the 202s were written', async () => {
    const responses = await Promise.all(
      Array.from({ length: BURST }, (_, index) =>
        t.rest('POST', '/api/v1/agents/cfo/chat', {
          caller: chairman,
          body: { message: `burst ${index}`, persist_thread: false },
        }),
      ),
    );

    const statuses = new Set(responses.map((response) => response.status));
    expect([...statuses].filter((status) => ![202, 429, 503].includes(status))).toEqual([]);
    const accepted = responses.filter((response) => response.status === 202);
    expect(accepted.length).toBeGreaterThan(0);
    for (const refused of responses.filter((response) => response.status === 503)) {
      expect(refused.headers.get('retry-after')).toBe('2');
      expect(refused.body).toEqual({ detail: 'Service temporarily unavailable; retry in 2 s' });
    }
    if (databaseKind === 'postgresql') {
      // 2,000 at once cannot fit 3 connections and 20 waiting: the bound must have refused some.
      expect(responses.some((response) => response.status === 503)).toBe(true);
    }

    const stored = await t.db.prisma.task.findMany({
      where: { tenantId: chairman.tenantId },
      select: { id: true, message: true },
    });
    expect(new Set(stored.map((task) => task.id))).toEqual(
      new Set(accepted.map((response) => response.body.data.task_id as string)),
    );
  });
});
