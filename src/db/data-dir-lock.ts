import { createHash, randomBytes } from 'node:crypto';
import { link, readFile, readlink, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { hostname } from 'node:os';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

export const LOCK_FILE = 'pglite.lock';
/** How often the holder touches its lock file. */
export const LOCK_REFRESH_MS = 1000;
/** A lock file of another machine left untouched this long belongs to a holder that is gone. */
export const LOCK_STALE_MS = 10_000;
/** How long a start waits for a holder on this machine that is going away before it refuses. */
export const LOCK_WAIT_MS = 5000;
const POLL_MS = 100;

/** Another live process (or this one) owns the data directory. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    /** The holder's PID, when its lock file names one. */
    readonly pid: number | undefined,
    /** The holder's host name, when it is another machine. */
    readonly host?: string | undefined,
  ) {
    const who = pid === undefined ? 'another process' : `process ${pid}${host ? ` on host ${host}` : ''}`;
    super(
      `DATA_DIR ${dataDir} is in use by ${who} (lock file ${path.join(dataDir, LOCK_FILE)}); ` +
        'stop that process or choose another DATA_DIR.',
    );
  }
}

export interface LockOptions {
  /** How long to wait for a holder on this machine that is going away. Default `LOCK_WAIT_MS`. */
  waitMs?: number;
  /** Age after which another machine's lock file counts as abandoned. Default `LOCK_STALE_MS`. */
  staleMs?: number;
  /** How often the holder touches its lock file. Default `LOCK_REFRESH_MS`. */
  refreshMs?: number;
  /** Called once when the start has to wait for the current holder. Default: nothing. */
  onWait?: (holder: { pid: number | undefined; host: string | undefined }) => void;
}

export interface DataDirLock {
  /** Removes the lock file (when it is still ours) and frees the directory. */
  release(): Promise<void>;
  /**
   * Settles when another process removed or replaced the lock file: this process no longer owns the
   * directory and must stop using it.
   */
  lost: Promise<Error>;
}

/** Lock files this process holds: a second lock in the same process is refused like another process. */
const held = new Set<string>();

/**
 * What a lock file says: the holder's PID on the first line (so that it reads as a plain PID file), then
 * its host, its kernel-lock domain (when it holds that lock too) and a token of its own.
 */
interface LockRecord {
  pid: number | undefined;
  host?: string | undefined;
  domain?: string | undefined;
  /** A lock file of an earlier release: the PID alone, never refreshed. */
  pidOnly: boolean;
}

function parseRecord(text: string): LockRecord {
  const [first = '', second = ''] = text.split('\n');
  const pid = Number.parseInt(first, 10);
  const known = Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  try {
    const { host, domain } = JSON.parse(second) as { host?: unknown; domain?: unknown };
    return {
      pid: known,
      host: typeof host === 'string' ? host : undefined,
      domain: typeof domain === 'string' ? domain : undefined,
      pidOnly: false,
    };
  } catch {
    return { pid: known, pidOnly: second === '' };
  }
}

/** The lock file as read once: its text and when it was last touched; undefined when there is none. */
interface Sighting {
  text: string;
  mtimeMs: number;
}

async function readLock(file: string): Promise<Sighting | undefined> {
  try {
    const [text, info] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
    return { text, mtimeMs: info.mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The holder as an error message names it: its host only when that is another machine. */
function holderOf(record: LockRecord | undefined) {
  const host = record?.host && record.host !== hostname() ? record.host : undefined;
  return { pid: record?.pid, host };
}

/** Creates `file` with `content`, atomically: written aside, then hard-linked, so it is never partial. */
async function createExclusive(file: string, content: string): Promise<{ ino: number } | undefined> {
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(aside, content);
  try {
    await link(aside, file);
    return { ino: (await stat(aside)).ino };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  } finally {
    await unlink(aside).catch(() => {});
  }
}

/**
 * The machine and network namespace this process lives in (boot id and namespace inode): two processes
 * with the same domain contend for the same abstract socket name. Undefined off Linux or without /proc.
 */
async function kernelDomain(): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    const [boot, namespace] = await Promise.all([
      readFile('/proc/sys/kernel/random/boot_id', 'utf8'),
      readlink('/proc/self/ns/net'),
    ]);
    return `${boot.trim()} ${namespace}`;
  } catch {
    return undefined;
  }
}

/** Binds the abstract socket `name`: the server, `busy` when a socket holds it, `unsupported` otherwise. */
function bindName(name: string): Promise<net.Server | 'busy' | 'unsupported'> {
  return new Promise((resolve) => {
    const server = net.createServer((socket) => socket.destroy());
    server.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EADDRINUSE' ? 'busy' : 'unsupported'),
    );
    server.listen(name, () => {
      // The lock must not keep the process alive.
      server.unref();
      resolve(server);
    });
  });
}

interface KernelLock {
  domain: string;
  close(): Promise<void>;
}

/**
 * The part of the lock the kernel keeps: a Linux abstract Unix socket named after the directory (device
 * and inode). The kernel frees the name the moment its holder dies, before the process is even reaped, so
 * a restart after `kill -9` finds it free. A live holder on this machine keeps it: the start waits up to
 * `waitMs` for it to go away, then refuses. Undefined where abstract sockets do not exist.
 */
async function takeKernelLock(
  dataDir: string,
  file: string,
  options: LockOptions,
): Promise<KernelLock | undefined> {
  const domain = await kernelDomain();
  if (!domain) return undefined;
  const directory = await stat(dataDir);
  const digest = createHash('sha256').update(`${directory.dev}:${directory.ino}`).digest('hex');
  const name = `\0boardroom-data-dir-${digest.slice(0, 32)}`;
  const deadline = Date.now() + (options.waitMs ?? LOCK_WAIT_MS);
  let waiting = false;
  for (;;) {
    const bound = await bindName(name);
    if (bound === 'unsupported') return undefined;
    if (bound !== 'busy') {
      return { domain, close: () => new Promise<void>((resolve) => bound.close(() => resolve())) };
    }
    const sighting = await readLock(file);
    const holder = holderOf(sighting && parseRecord(sighting.text));
    if (Date.now() >= deadline) throw new DataDirLockedError(dataDir, holder.pid, holder.host);
    if (!waiting) options.onWait?.(holder);
    waiting = true;
    await delay(POLL_MS);
  }
}

function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the lock file judged abandoned, under a second short-lived lock so that two processes taking it
 * over at once cannot remove each other's fresh lock; only the very file judged (same text, untouched
 * since) is removed. A second lock left by a process that died while holding it is removed once stale.
 */
async function removeAbandoned(file: string, judged: Sighting, staleMs: number): Promise<void> {
  const recovery = `${file}.recovery`;
  if (!(await createExclusive(recovery, `${process.pid}\n`))) {
    const other = await readLock(recovery);
    if (other && Date.now() - other.mtimeMs > staleMs) await unlink(recovery).catch(() => {});
    else await delay(POLL_MS);
    return;
  }
  try {
    const now = await readLock(file);
    if (now && now.text === judged.text && now.mtimeMs === judged.mtimeMs) await unlink(file).catch(() => {});
  } finally {
    await unlink(recovery).catch(() => {});
  }
}

/**
 * Creates the lock file, taking over one whose holder is gone: one of this machine's and namespace's when
 * we hold the kernel lock (its holder would hold it if it lived), a PID file of an earlier release whose
 * PID no longer runs, or one that has not been touched for `staleMs` (by its age, or while we watched it).
 * One that is touched while we watch belongs to a live holder: refused.
 */
async function takeLockFile(
  dataDir: string,
  file: string,
  domain: string | undefined,
  options: LockOptions,
): Promise<{ ino: number }> {
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const refreshMs = options.refreshMs ?? LOCK_REFRESH_MS;
  const content = `${process.pid}\n${JSON.stringify({ host: hostname(), domain })}\n`;
  // Longer than any wait below: a bound on the loop, whatever other processes do meanwhile.
  const giveUp = Date.now() + (options.waitMs ?? LOCK_WAIT_MS) + 2 * staleMs;
  let watched: (Sighting & { since: number }) | undefined;
  let waiting = false;
  for (;;) {
    const created = await createExclusive(file, content);
    if (created) return created;
    const sighting = await readLock(file);
    if (!sighting) continue;
    const record = parseRecord(sighting.text);
    if (watched?.text !== sighting.text) watched = { ...sighting, since: Date.now() };
    const touched = sighting.mtimeMs !== watched.mtimeMs;
    const abandoned = record.pidOnly
      ? // This process holds no lock on it (see `held`): a PID of ours is a previous run's.
        record.pid === undefined || record.pid === process.pid || !pidRuns(record.pid)
      : (domain !== undefined && record.domain === domain) ||
        Date.now() - sighting.mtimeMs > staleMs ||
        Date.now() - watched.since > staleMs;
    if (abandoned) {
      await removeAbandoned(file, sighting, staleMs);
      watched = undefined;
      continue;
    }
    const holder = holderOf(record);
    if (touched || record.pidOnly || Date.now() >= giveUp) {
      throw new DataDirLockedError(dataDir, holder.pid, holder.host);
    }
    if (!waiting) options.onWait?.(holder);
    waiting = true;
    await delay(Math.min(POLL_MS, refreshMs));
  }
}

/** Touches the lock file every `refreshMs` while held, and reports it lost when it is not ours any more. */
function holdLock(
  dataDir: string,
  file: string,
  ino: number,
  kernel: KernelLock | undefined,
  refreshMs: number,
): DataDirLock {
  let reportLost: (error: Error) => void = () => {};
  const lost = new Promise<Error>((resolve) => {
    reportLost = resolve;
  });
  let released = false;
  let refreshing = false;
  const refresh = async () => {
    if (refreshing || released) return;
    refreshing = true;
    try {
      const current = await stat(file).catch((error: NodeJS.ErrnoException) =>
        error.code === 'ENOENT' ? null : undefined,
      );
      if (current === null || (current && current.ino !== ino)) {
        clearInterval(timer);
        reportLost(
          new Error(`DATA_DIR ${dataDir}: the lock file ${file} was removed or replaced by another process`),
        );
        return;
      }
      const now = new Date();
      // A failure to touch it (a file system gone read-only) is retried at the next tick.
      await utimes(file, now, now).catch(() => {});
    } finally {
      refreshing = false;
    }
  };
  const timer = setInterval(() => void refresh(), refreshMs);
  timer.unref();
  return {
    lost,
    async release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      // The file first: a start waiting on the kernel lock then finds no file of ours to take over.
      const current = await stat(file).catch(() => undefined);
      if (current?.ino === ino) await unlink(file).catch(() => {});
      await kernel?.close();
      held.delete(file);
    },
  };
}

/**
 * Makes this process the one owner of `dataDir` (PGlite is a single-process database: two processes on
 * one directory would each keep their own view and silently diverge). Two locks together:
 * - on Linux, an abstract Unix socket named after the directory, which the kernel frees when its holder
 *   dies (a killed process that is not yet reaped included): on this machine and network namespace, a
 *   start after a crash takes over at once, and one beside a live holder waits `waitMs`, then refuses;
 * - the lock file `DATA_DIR/pglite.lock` (PID, host), touched every `refreshMs` while held, which also
 *   stops another machine or container sharing the volume: it is taken over when its holder's kernel lock
 *   proves it gone, or once nobody touched it for `staleMs`.
 * Throws DataDirLockedError when a live process owns the directory.
 */
export async function lockDataDir(dataDir: string, options: LockOptions = {}): Promise<DataDirLock> {
  const file = path.join(dataDir, LOCK_FILE);
  if (held.has(file)) throw new DataDirLockedError(dataDir, process.pid);
  held.add(file);
  try {
    const kernel = await takeKernelLock(dataDir, file, options);
    try {
      const { ino } = await takeLockFile(dataDir, file, kernel?.domain, options);
      return holdLock(dataDir, file, ino, kernel, options.refreshMs ?? LOCK_REFRESH_MS);
    } catch (error) {
      await kernel?.close();
      throw error;
    }
  } catch (error) {
    held.delete(file);
    throw error;
  }
}
