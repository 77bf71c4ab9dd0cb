import { randomBytes } from 'node:crypto';
import { mkdir, open, stat, statfs, unlink } from 'node:fs/promises';
import path from 'node:path';

/** DATA_DIR cannot be used: start-up prints this one line (directory and cause) and exits 1. */
export class DataDirError extends Error {
  override name = 'DataDirError';
  constructor(
    readonly dataDir: string,
    readonly reason: string,
  ) {
    super(`DATA_DIR ${dataDir} is not usable: ${reason}`);
  }
}

// Emscripten's errno numbers, which PGlite's file system layer throws (`ErrnoError { errno }`).
const emscriptenErrno: Record<number, string> = { 2: 'EACCES', 51: 'ENOSPC', 63: 'EPERM', 69: 'EROFS' };

/** The errno code of a Node.js or PGlite (Emscripten) file-system error, or of a PostgreSQL disk-full. */
export function errnoCodeOf(error: unknown): string | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const { code, errno, message } = error as { code?: unknown; errno?: unknown; message?: unknown };
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  if (code === '53100') return 'ENOSPC';
  if ((error as { name?: unknown }).name === 'ErrnoError' && typeof errno === 'number') {
    return emscriptenErrno[errno] ?? `errno ${errno}`;
  }
  if (typeof message === 'string' && /No space left on device/i.test(message)) return 'ENOSPC';
  return undefined;
}

function reasonOf(code: string): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied: user ${process.getuid?.() ?? '?'} cannot write there (${code})`;
    case 'EROFS':
      return 'the file system is read-only (EROFS)';
    case 'ENOSPC':
    case 'EDQUOT':
      return `no space left on the device (${code})`;
    case 'ENOTDIR':
    case 'EEXIST':
      return `a path component is a file, not a directory (${code})`;
    default:
      return code;
  }
}

/** A DataDirError for a file-system failure under `dataDir`, or undefined when `error` is not one. */
export function dataDirErrorOf(dataDir: string, error: unknown): DataDirError | undefined {
  const code = errnoCodeOf(error);
  return code ? new DataDirError(dataDir, reasonOf(code)) : undefined;
}

/**
 * Creates `dataDir` when missing and proves it writable with a small file written and synced, so a
 * read-only, unwritable or full directory stops start-up with one line naming it and the cause.
 */
export async function checkDataDir(dataDir: string): Promise<void> {
  try {
    // Component by component: a recursive mkdir reports ENOENT where the real cause is EROFS or EACCES.
    const missing: string[] = [];
    for (let dir = dataDir; ; dir = path.dirname(dir)) {
      const found = await stat(dir).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        throw error;
      });
      if (found) {
        if (!found.isDirectory()) throw Object.assign(new Error(`${dir} is a file`), { code: 'ENOTDIR' });
        break;
      }
      missing.unshift(dir);
      if (path.dirname(dir) === dir) break;
    }
    for (const dir of missing) await mkdir(dir);
    const probe = path.join(dataDir, `.write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
    const handle = await open(probe, 'w');
    try {
      await handle.write(randomBytes(64 * 1024));
      await handle.sync();
    } finally {
      await handle.close();
      await unlink(probe).catch(() => {});
    }
  } catch (error) {
    throw dataDirErrorOf(dataDir, error) ?? error;
  }
}

/** Bytes available to this process on the file system holding `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const figures = await statfs(dir);
  return figures.bavail * figures.bsize;
}
