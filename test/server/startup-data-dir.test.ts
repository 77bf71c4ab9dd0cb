import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseKind } from '../support/database.js';
import { type MainOptions, READY, runMain } from '../support/main-process.js';
import { canMountTmpfs, mountTmpfs, type Tmpfs } from '../support/tmpfs.js';

interface Outcome {
  code: number | null;
  /** Every line written to stdout and stderr. */
  lines: string[];
}

/**
 * Runs the built server on PGlite until it exits, or until it is ready (then it is stopped with SIGTERM and
 * `ready` is true).
 */
async function start(dataDir: string, options?: MainOptions): Promise<Outcome & { ready: boolean }> {
  const main = runMain({ DATA_DIR: dataDir, DATABASE_URL: '' }, options);
  const ready = await main.waitFor(READY).then(
    () => true,
    () => false,
  );
  if (ready) main.child.kill('SIGTERM');
  const { code } = await main.exited;
  return {
    code,
    ready,
    lines: main
      .output()
      .split('\n')
      .filter((line) => line.trim() !== ''),
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function scratchDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'boardroom-data-dir-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

function tmpfs(size: string, options?: { readOnly?: boolean }): Tmpfs {
  const mounted = mountTmpfs(size, options);
  cleanups.push(() => mounted.unmount());
  return mounted;
}

const mountable = databaseKind === 'pglite' && canMountTmpfs();

// Start-up on PGlite reads DATA_DIR itself; the read-only, unwritable and full cases need a tmpfs of their
// own and a user without root's rights, so they run as root (as CI does) and are skipped elsewhere.
describe.runIf(databaseKind === 'pglite')('start-up with an unusable DATA_DIR', () => {
  it('exits 1 with one line when DATA_DIR is a file', async () => {
    const dataDir = path.join(await scratchDir(), 'data');
    await writeFile(dataDir, 'not a directory');

    const outcome = await start(dataDir);

    expect(outcome.code).toBe(1);
    expect(outcome.lines).toEqual([
      `DATA_DIR ${dataDir} is not usable: a path component is a file, not a directory (ENOTDIR)`,
    ]);
  }, 120_000);

  it.runIf(mountable)(
    'exits 1 with one line when DATA_DIR is on a read-only file system',
    async () => {
      const dataDir = path.join(tmpfs('1m', { readOnly: true }).dir, 'data');

      const outcome = await start(dataDir);

      expect(outcome.code).toBe(1);
      expect(outcome.lines).toEqual([
        `DATA_DIR ${dataDir} is not usable: the file system is read-only (EROFS)`,
      ]);
    },
    120_000,
  );

  it.runIf(mountable)(
    'exits 1 with one line when the user may not write to DATA_DIR',
    async () => {
      const parent = await scratchDir();
      await chmod(parent, 0o555);
      const dataDir = path.join(parent, 'data');

      const outcome = await start(dataDir, { uid: 65534, gid: 65534 });

      expect(outcome.code).toBe(1);
      expect(outcome.lines).toEqual([
        `DATA_DIR ${dataDir} is not usable: permission denied: user 65534 cannot write there (EACCES)`,
      ]);
    },
    120_000,
  );

  it.runIf(mountable)(
    'exits 1 with one line when DATA_DIR is full, and starts once space is added',
    async () => {
      const disk = tmpfs('4m');
      const dataDir = path.join(disk.dir, 'data');

      const full = await start(dataDir);

      expect(full.code).toBe(1);
      expect(full.lines).toEqual([`DATA_DIR ${dataDir} is not usable: no space left on the device (ENOSPC)`]);
      // Nothing half-initialised is left behind for the next start to trip over.
      expect(await readdir(dataDir)).not.toContain('pglite');

      disk.resize('96m');
      const roomy = await start(dataDir);
      expect(roomy.ready).toBe(true);
      expect(roomy.code).toBe(0);
    },
    180_000,
  );
});
