import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/client.js';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../src/db/data-dir-lock.js';
import { databaseKind } from '../support/database.js';

const dirs: string[] = [];
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'boardroom-lock-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** The PID of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid as number;
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

describe.runIf(databaseKind === 'pglite')('one owner per PGlite data directory', () => {
  it('refuses a second lock on the same directory, naming the directory and the owner', async () => {
    const dir = await freshDir();
    const release = await lockDataDir(dir);
    await expect(lockDataDir(dir)).rejects.toThrow(
      `DATA_DIR ${dir} is in use by process ${process.pid} (lock file ${path.join(dir, LOCK_FILE)}); ` +
        'stop that process or choose another DATA_DIR.',
    );
    await release();
    expect(await exists(path.join(dir, LOCK_FILE))).toBe(false);
    const again = await lockDataDir(dir);
    await again();
  });

  it('refuses a lock held by another live process', async () => {
    const dir = await freshDir();
    const parentPid = process.ppid;
    await writeFile(path.join(dir, LOCK_FILE), `${parentPid}\n`);
    const refused = await lockDataDir(dir).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as DataDirLockedError).pid).toBe(parentPid);
    expect(await readFile(path.join(dir, LOCK_FILE), 'utf8')).toBe(`${parentPid}\n`);
  });

  it('recovers a lock left by a process that no longer runs', async () => {
    const dir = await freshDir();
    await writeFile(path.join(dir, LOCK_FILE), `${await deadPid()}\n`);
    const release = await lockDataDir(dir);
    expect(await readFile(path.join(dir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    await release();
  });

  it('lets one openDatabase own DATA_DIR until it closes', async () => {
    const dir = await freshDir();
    const first = await openDatabase({ dataDir: dir });
    await expect(openDatabase({ dataDir: dir })).rejects.toThrow(
      `DATA_DIR ${dir} is in use by process ${process.pid}`,
    );
    await first.close();
    expect(await exists(path.join(dir, LOCK_FILE))).toBe(false);
    const second = await openDatabase({ dataDir: dir });
    await second.close();
  }, 120_000);
});
