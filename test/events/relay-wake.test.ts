import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BusEvent } from '../../src/events/topics.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';

const open: (TestApp | TestDatabase)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const item of open.splice(0).reverse()) await ('app' in item ? item.close() : item.drop());
});

async function appOnOwnDatabase(): Promise<{ t: TestApp; database: TestDatabase }> {
  const database = await createTestDatabase();
  open.push(database);
  const t = await createTestApp({ database });
  open.push(t);
  return { t, database };
}

/**
 * Commits an outbox event the way another instance would: on a connection of its own on PostgreSQL (the
 * embedded database has one connection), and never through this instance's relay.
 */
async function commitElsewhere(database: TestDatabase, tenantId: string): Promise<string> {
  const eventId = randomUUID();
  const payload = JSON.stringify({ event_id: eventId, type: 'TASK_UPDATED', tenant_id: tenantId });
  const sql = `WITH tenant AS (
      INSERT INTO tenants (id, updated_at) VALUES ($2::uuid, now()) ON CONFLICT (id) DO NOTHING
    )
    INSERT INTO outbox_events (id, tenant_id, type, payload) VALUES ($1::uuid, $2::uuid, 'TASK_UPDATED', $3::jsonb)`;
  if (!database.url) {
    await database.db.prisma.$executeRawUnsafe(sql, eventId, tenantId, payload);
    return eventId;
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(sql, [eventId, tenantId, payload]);
  } finally {
    await client.end();
  }
  return eventId;
}

function nextEvent(t: TestApp, tenantId: string): Promise<BusEvent> {
  return new Promise((resolve) => {
    const stop = t.app.services.bus.listen(['TASK_UPDATED'], tenantId, (event) => {
      stop();
      resolve(event);
    });
  });
}

async function passes(t: TestApp): Promise<Record<string, number>> {
  const { values } = await t.app.services.metrics.relayPasses.get();
  return Object.fromEntries(values.map(({ labels, value }) => [String(labels.outcome), value]));
}

describe('the outbox relay', () => {
  it('publishes an event another connection commits, woken by the commit', async () => {
    const { t, database } = await appOnOwnDatabase();
    const tenantId = randomUUID();
    const received = nextEvent(t, tenantId);
    // No timer fires from here on: only the commit's notification can wake the relay.
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval'] });

    const eventId = await commitElsewhere(database, tenantId);

    expect(await received).toMatchObject({ eventId, tenantId, type: 'TASK_UPDATED' });
  });

  it('runs no pass and arms no timer while nothing commits', async () => {
    const { t } = await appOnOwnDatabase();
    await t.app.services.relay.kick();
    const before = await passes(t);

    // Ten idle minutes, as far as every timer in the process is concerned.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    vi.useRealTimers();

    expect(t.app.services.relay.retrying()).toBe(false);
    await t.app.services.relay.stop();
    expect(await passes(t)).toEqual(before);
  });

  it.runIf(databaseKind === 'postgresql')(
    'listens again after its connection is cut, and publishes what committed meanwhile',
    async () => {
      const { t, database } = await appOnOwnDatabase();
      const tenantId = randomUUID();
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      try {
        const cut = await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE datname = current_database() AND query LIKE 'LISTEN %outbox_events%'`,
        );
        expect(cut.rowCount).toBe(1);
        const received = nextEvent(t, tenantId);

        const eventId = await commitElsewhere(database, tenantId);

        expect(await received).toMatchObject({ eventId, tenantId });
      } finally {
        await admin.end();
      }
    },
  );
});
