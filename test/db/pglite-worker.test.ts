import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/client.js';
import { type PGliteWorker, startPGliteWorker } from '../../src/db/pglite-remote.js';
import { databaseUnavailableCause } from '../../src/db/unavailable.js';
import { PrismaClient } from '../../src/generated/prisma/client.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';

const select1 = { sql: 'SELECT 1 AS one', args: [], argTypes: [] };

/** Resolves once `promise` has settled, with whether it did within the turns already queued. */
async function settledNow(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

// PGlite runs in a worker thread (src/db/pglite-remote.ts); PostgreSQL has no such thread.
describe.runIf(databaseKind === 'pglite')('PGlite in its worker thread', () => {
  let database: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
  });
  afterAll(() => database?.drop());

  it('dumps its data directory, and a database started from the dump holds the same rows and migrations', async () => {
    const tenantId = randomUUID();
    await db.prisma.tenant.create({ data: { id: tenantId } });
    const dump = await (db.dumpDataDir as () => Promise<Uint8Array>)();
    const copy = await openDatabase({ dataDir: 'memory://', loadDataDir: dump });
    try {
      expect(await copy.prisma.tenant.findUnique({ where: { id: tenantId } })).toMatchObject({
        id: tenantId,
      });
      expect(await copy.ready()).toBe(true);
      // A copy, not a view: what is written to one is not in the other.
      await copy.prisma.tenant.delete({ where: { id: tenantId } });
      expect(await db.prisma.tenant.findUnique({ where: { id: tenantId } })).toMatchObject({ id: tenantId });
    } finally {
      await copy.close();
    }
  });

  it('keeps Prisma error mapping: a unique violation is P2002, a rolled back transaction leaves nothing', async () => {
    const tenantId = randomUUID();
    await db.prisma.tenant.create({ data: { id: tenantId } });
    await db.prisma.agentRole.create({ data: { tenantId, role: 'cfo' } });
    await expect(db.prisma.agentRole.create({ data: { tenantId, role: 'cfo' } })).rejects.toMatchObject({
      code: 'P2002',
    });

    await expect(
      db.prisma.$transaction(async (tx) => {
        await tx.agentRole.create({ data: { tenantId, role: 'coo' } });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await db.prisma.agentRole.count({ where: { tenantId } })).toBe(1);
  });

  it('carries bytes, 64-bit integers, decimals and JSON across the threads unchanged', async () => {
    const [row] = await db.prisma.$queryRawUnsafe<
      { bytes: Uint8Array; big: bigint; amount: { toString(): string }; doc: unknown }[]
    >(
      `SELECT '\\x00ff10'::bytea AS bytes, 9007199254740993::int8 AS big, 12.345678::numeric(18,6) AS amount,
              '{"a":[1,"b"]}'::jsonb AS doc`,
    );
    expect(Array.from(row?.bytes ?? [])).toEqual([0, 255, 16]);
    expect(row?.big).toBe(9007199254740993n);
    expect(row?.amount.toString()).toBe('12.345678');
    expect(row?.doc).toEqual({ a: [1, 'b'] });
  });

  it('wakes a listener on NOTIFY once the notifying transaction commits', async () => {
    let wakes = 0;
    const unlisten = await db.listen('pglite_worker_test', () => {
      wakes += 1;
    });
    expect(wakes).toBe(1);
    await db.prisma.$executeRawUnsafe("SELECT pg_notify('pglite_worker_test', '')");
    await expect.poll(() => wakes).toBe(2);
    await unlisten();
  });
});

describe.runIf(databaseKind === 'pglite')('when the PGlite worker dies', () => {
  let worker: PGliteWorker;
  let prisma: PrismaClient;
  beforeAll(async () => {
    worker = await startPGliteWorker({ dataDir: 'memory://', startParams: [] });
    prisma = new PrismaClient({ adapter: worker.adapter });
  });
  afterAll(async () => {
    await prisma?.$disconnect();
    await worker?.close();
  });

  it('fails the call under way and every later one as unavailable, and reports the loss', async () => {
    const connection = await worker.adapter.connect();
    expect((await connection.queryRaw(select1)).rows).toEqual([[1]]);
    // An open transaction holds PGlite's one connection: the next statement waits behind it until the end.
    const transaction = await connection.startTransaction();
    const waiting = connection.queryRaw(select1);
    waiting.catch(() => {});
    expect(await settledNow(worker.lost)).toBe(false);

    await worker.worker.terminate();

    const underWay = await waiting.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(databaseUnavailableCause(underWay)).toBe('ConnectionClosed');
    await expect(transaction.commit()).rejects.toMatchObject({ cause: { kind: 'ConnectionClosed' } });
    expect(await worker.lost).toBeInstanceOf(Error);
    const later = await prisma.$queryRawUnsafe('SELECT 1').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(databaseUnavailableCause(later)).toBeDefined();
  });

  it('does not report a loss when the database is closed', async () => {
    const other = await startPGliteWorker({ dataDir: 'memory://', startParams: [] });
    await other.close();
    expect(other.worker.threadId).toBe(-1);
    expect(await settledNow(other.lost)).toBe(false);
  });
});
