import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
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

const holderScript = fileURLToPath(new URL('../support/data-dir-lock-holder.ts', import.meta.url));
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

interface Holder {
  /** The PID of the process that holds the lock. */
  pid: number;
  child: ChildProcess;
}

/**
 * Starts a process that takes the lock of `dir` and resolves once it holds it. `unreaped`: its parent
 * never waits for it (a shell that execs `sleep`), so once killed it stays a zombie, as under a
 * supervisor that has not reaped it yet.
 */
async function startHolder(dir: string, { unreaped = false } = {}): Promise<Holder> {
  const node = [process.execPath, '--import', tsxLoader, holderScript, dir];
  const child = unreaped
    ? spawn('sh', ['-c', '"$0" "$1" "$2" "$3" "$4" & exec sleep 600', ...node], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
    : spawn(node[0] as string, node.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  onTestFinished(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  const pid = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /locked (\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    });
    void exited.then(() => reject(new Error(`the lock holder exited:\n${output}`)));
  });
  if (unreaped) onTestFinished(() => void process.kill(pid, 'SIGKILL'));
  return { pid, child };
}

/** The state letter of a process in /proc (`Z` for a zombie), or `gone`. */
async function processState(pid: number): Promise<string> {
  const line = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return /\) (\S)/.exec(line)?.[1] ?? 'gone';
}

/** A lock file as another machine's process writes it. */
const foreignLock = `4242\n${JSON.stringify({ host: 'elsewhere', domain: 'another-boot net:[1]' })}\n`;

describe.runIf(databaseKind === 'pglite')('one owner per PGlite data directory', () => {
  it('refuses a second lock in the same process at once, naming the directory and the owner', async () => {
    const dir = await freshDir();
    const lock = await lockDataDir(dir);
    await expect(lockDataDir(dir)).rejects.toThrow(
      `DATA_DIR ${dir} is in use by process ${process.pid} (lock file ${path.join(dir, LOCK_FILE)}); ` +
        'stop that process or choose another DATA_DIR.',
    );
    await lock.release();
    expect(await exists(path.join(dir, LOCK_FILE))).toBe(false);
    const again = await lockDataDir(dir);
    await again.release();
  });

  it('writes the holder’s PID on the first line of the lock file', async () => {
    const dir = await freshDir();
    const lock = await lockDataDir(dir);
    const [first] = (await readFile(path.join(dir, LOCK_FILE), 'utf8')).split('\n');
    expect(first).toBe(String(process.pid));
    await lock.release();
  });

  it('refuses a lock held by another live process once the wait is over, naming it', async () => {
    const dir = await freshDir();
    const holder = await startHolder(dir);
    const before = await readFile(path.join(dir, LOCK_FILE), 'utf8');
    const refused = await lockDataDir(dir, { waitMs: 300 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect((refused as DataDirLockedError).message).toBe(
      `DATA_DIR ${dir} is in use by process ${holder.pid} (lock file ${path.join(dir, LOCK_FILE)}); ` +
        'stop that process or choose another DATA_DIR.',
    );
    expect(await readFile(path.join(dir, LOCK_FILE), 'utf8')).toBe(before);
  });

  it('takes the lock from a holder killed with SIGKILL that is not reaped yet (a zombie)', async () => {
    const dir = await freshDir();
    const holder = await startHolder(dir, { unreaped: true });
    process.kill(holder.pid, 'SIGKILL');
    await expect.poll(() => processState(holder.pid), { timeout: 10_000 }).toBe('Z');
    const lock = await lockDataDir(dir);
    expect((await readFile(path.join(dir, LOCK_FILE), 'utf8')).split('\n')[0]).toBe(String(process.pid));
    await lock.release();
  });

  it('waits for a holder that lets go while it waits, instead of refusing at once', async () => {
    const dir = await freshDir();
    const holder = await startHolder(dir);
    const waitedFor: (number | undefined)[] = [];
    const lock = await lockDataDir(dir, {
      waitMs: 20_000,
      onWait: ({ pid }) => {
        waitedFor.push(pid);
        holder.child.kill('SIGTERM');
      },
    });
    expect(waitedFor).toEqual([holder.pid]);
    await lock.release();
  });

  it('takes over a lock file of an earlier release (the PID alone) whose process no longer runs', async () => {
    const dir = await freshDir();
    await writeFile(path.join(dir, LOCK_FILE), `${await deadPid()}\n`);
    const lock = await lockDataDir(dir);
    expect((await readFile(path.join(dir, LOCK_FILE), 'utf8')).split('\n')[0]).toBe(String(process.pid));
    await lock.release();
  });

  it('takes over at once another machine’s lock file left untouched for longer than the stale time', async () => {
    const dir = await freshDir();
    const file = path.join(dir, LOCK_FILE);
    await writeFile(file, foreignLock);
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(file, longAgo, longAgo);
    const lock = await lockDataDir(dir, { staleMs: 10_000, waitMs: 0 });
    expect((await readFile(file, 'utf8')).split('\n')[0]).toBe(String(process.pid));
    await lock.release();
  });

  it('takes over another machine’s lock file that nobody touches while it waits for the stale time', async () => {
    const dir = await freshDir();
    await writeFile(path.join(dir, LOCK_FILE), foreignLock);
    const waitedFor: { pid: number | undefined; host: string | undefined }[] = [];
    const lock = await lockDataDir(dir, {
      staleMs: 500,
      refreshMs: 50,
      onWait: (who) => waitedFor.push(who),
    });
    expect(waitedFor).toEqual([{ pid: 4242, host: 'elsewhere' }]);
    await lock.release();
  });

  it('refuses another machine’s lock file that its holder keeps touching, naming the host', async () => {
    const dir = await freshDir();
    const file = path.join(dir, LOCK_FILE);
    await writeFile(file, foreignLock);
    const touching = setInterval(() => {
      const now = new Date();
      void utimes(file, now, now);
    }, 50);
    onTestFinished(() => clearInterval(touching));
    await expect(lockDataDir(dir, { staleMs: 5000, refreshMs: 50 })).rejects.toThrow(
      `DATA_DIR ${dir} is in use by process 4242 on host elsewhere (lock file ${file}); ` +
        'stop that process or choose another DATA_DIR.',
    );
    expect(await readFile(file, 'utf8')).toBe(foreignLock);
  });

  it('keeps touching its lock file while it holds it', async () => {
    const dir = await freshDir();
    const file = path.join(dir, LOCK_FILE);
    const lock = await lockDataDir(dir, { refreshMs: 50 });
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(file, longAgo, longAgo);
    await expect
      .poll(async () => (await stat(file)).mtimeMs, { timeout: 5000 })
      .toBeGreaterThan(Date.now() - 10_000);
    await lock.release();
  });

  it('reports the lock lost when another process replaces its lock file', async () => {
    const dir = await freshDir();
    const file = path.join(dir, LOCK_FILE);
    const lock = await lockDataDir(dir, { refreshMs: 50 });
    await writeFile(`${file}.other`, `4242\n${JSON.stringify({ host: hostname() })}\n`);
    await rename(`${file}.other`, file);
    const lost = await lock.lost;
    expect(lost.message).toBe(
      `DATA_DIR ${dir}: the lock file ${file} was removed or replaced by another process`,
    );
    await lock.release();
    expect(await readFile(file, 'utf8')).toContain('4242');
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
