import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/db/client.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { canMountTmpfs, mountTmpfs, type Tmpfs } from '../support/tmpfs.js';

/** Writes zeros to `file` until the file system refuses: the disk is full. */
async function fillUp(file: string) {
  const handle = await open(file, 'w');
  const chunk = Buffer.alloc(1024 * 1024);
  try {
    for (let size = chunk.length; ; ) {
      try {
        await handle.write(chunk.subarray(0, size));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        if (size === 1) return;
        size = Math.max(1, Math.floor(size / 16));
      }
    }
  } finally {
    await handle.close();
  }
}

// A real full disk: PGlite's files on a tmpfs of their own that is filled to the last byte. Mounting needs
// root (CI runs as root); elsewhere this is skipped. On PostgreSQL the disk is the server's, not ours.
describe.runIf(databaseKind === 'pglite' && canMountTmpfs())('DATA_DIR filling up while serving', () => {
  let disk: Tmpfs;
  let db: Database;
  let t: TestApp;
  let chairman: Caller;
  const filler = () => path.join(disk.dir, 'filler');
  const postChat = (message: string) =>
    t.rest('POST', '/api/v1/agents/cfo/chat', { caller: chairman, body: { message, persist_thread: true } });

  beforeAll(async () => {
    disk = mountTmpfs('96m');
    const dataDir = path.join(disk.dir, 'data');
    db = await openDatabase({ dataDir });
    await db.migrate();
    t = await createTestApp({
      database: { db, url: undefined, drop: async () => {} },
      env: { DATA_DIR: dataDir },
    });
    chairman = await t.caller(['chairman']);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await db?.close();
    disk?.unmount();
  });

  it('answers writes 503 and /readyz unready while the disk is full, and recovers when space returns', async () => {
    expect((await postChat('before')).status).toBe(202);
    await fillUp(filler());

    // Pages with room left still take rows; the first write that needs a new page is refused.
    const accepted: string[] = [];
    let refused: Awaited<ReturnType<typeof postChat>> | undefined;
    for (let index = 0; index < 5000 && !refused; index += 1) {
      const response = await postChat(`while full ${index}`);
      if (response.status === 202) accepted.push(response.body.data.task_id);
      else refused = response;
    }
    expect(refused?.status).toBe(503);
    expect(refused?.headers.get('retry-after')).toBe('2');
    expect(refused?.body).toEqual({ detail: 'Service temporarily unavailable; retry in 2 s' });
    expect((await t.rest('GET', '/readyz')).status).toBe(503);

    await rm(filler());
    await expect.poll(async () => (await t.rest('GET', '/readyz')).status, { timeout: 10_000 }).toBe(200);
    const after = await postChat('after');
    expect(after.status).toBe(202);

    // Every 202 is stored, the refused write is not.
    const stored = await db.prisma.task.findMany({
      where: { tenantId: chairman.tenantId },
      select: { message: true },
    });
    const messages = stored.map((task) => task.message);
    expect(messages).toHaveLength(accepted.length + 2);
    expect(messages).toEqual(expect.arrayContaining(['before', 'after']));
    expect(messages).not.toContain(`while full ${accepted.length}`);
  }, 120_000);
});
