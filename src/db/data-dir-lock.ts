import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Another live process (or this one) already owns the data directory. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(
      `DATA_DIR ${dataDir} is in use by process ${pid} (lock file ${path.join(dataDir, LOCK_FILE)}); ` +
        'stop that process or choose another DATA_DIR.',
    );
  }
}

export const LOCK_FILE = 'pglite.lock';

/** Lock files this process holds: a second open in the same process is refused like another process. */
const held = new Set<string>();

function alive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function holderOf(file: string): Promise<number | undefined> {
  const content = await readFile(file, 'utf8').catch(() => '');
  const pid = Number.parseInt(content, 10);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** True when `file` holds a live owner's PID; a PID equal to ours that we do not hold is a previous run's. */
async function ownedByOther(file: string): Promise<number | undefined> {
  const pid = await holderOf(file);
  if (pid === undefined) return undefined;
  if (pid === process.pid) return held.has(file) ? pid : undefined;
  return alive(pid) ? pid : undefined;
}

/** Creates `file` holding our PID, atomically: written aside, then hard-linked, so it is never empty. */
async function createExclusive(file: string): Promise<boolean> {
  const aside = `${file}.${process.pid}`;
  await writeFile(aside, `${process.pid}\n`);
  try {
    await link(aside, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await unlink(aside).catch(() => {});
  }
}

/**
 * Makes this process the one owner of `dataDir` (PGlite is a single-process database: two processes on
 * one directory would each keep their own view and silently diverge). The lock file holds the owner's
 * PID. A lock left by a process that no longer runs is removed, under a second short-lived lock so that
 * two processes recovering it at once cannot remove each other's fresh lock. Resolves with the release
 * function; throws DataDirLockedError when a live process owns the directory.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, LOCK_FILE);
  const recovery = `${file}.recovery`;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (await createExclusive(file)) {
      held.add(file);
      return async () => {
        held.delete(file);
        if ((await holderOf(file)) === process.pid) await unlink(file).catch(() => {});
      };
    }
    const owner = await ownedByOther(file);
    if (owner !== undefined) throw new DataDirLockedError(dataDir, owner);
    const stalePid = await holderOf(file);
    if (!(await createExclusive(recovery))) {
      const recovering = await ownedByOther(recovery);
      if (recovering !== undefined) throw new DataDirLockedError(dataDir, recovering);
      await unlink(recovery).catch(() => {});
      continue;
    }
    try {
      // Only remove the very lock judged stale: another process may have replaced it meanwhile.
      if ((await holderOf(file)) === stalePid && (await ownedByOther(file)) === undefined) {
        await unlink(file).catch(() => {});
      }
    } finally {
      await unlink(recovery).catch(() => {});
    }
  }
  const owner = (await holderOf(file)) ?? 0;
  throw new DataDirLockedError(dataDir, owner);
}
