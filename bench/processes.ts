// The processes, databases and directories a benchmark run owns, and how it gives every one of them back:
// at the end, on an error, and on SIGINT/SIGTERM/SIGHUP. Leftovers of a run that was killed outright
// (SIGKILL) are swept by the next run: their names carry the PID of the run that made them.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const root = fileURLToPath(new URL('..', import.meta.url));
const TEMP_PREFIX = 'boardroom-bench-';
const DATABASE_PREFIX = 'boardroom_bench_';

const cleanups: (() => Promise<void>)[] = [];
let cleaning: Promise<void> | undefined;

/** Registers something to give back; run in reverse order by `cleanUp`, or at once if that has begun. */
export function onCleanup(cleanup: () => Promise<void>): void {
  if (cleaning)
    void cleanup().catch((error: unknown) => console.error(`bench: cleanup failed: ${String(error)}`));
  else cleanups.push(cleanup);
}

/** Whether the run was interrupted (or is ending): no new case should start. */
export function interrupted(): boolean {
  return cleaning !== undefined;
}

export function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    while (cleanups.length > 0) {
      const cleanup = cleanups.pop();
      await cleanup?.().catch((error: unknown) => console.error(`bench: cleanup failed: ${String(error)}`));
    }
  })();
  return cleaning;
}

/** Gives everything back before exiting on a signal; a second signal while cleaning is ignored. */
export function cleanUpOnSignals(): void {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (cleaning) return;
      console.error(`\nbench: ${signal}, stopping servers and removing the run's databases and files`);
      void cleanUp().then(() => process.exit(130));
    });
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The run's own temporary directory (server data, logs), removed at clean-up. */
export async function runDirectory(): Promise<string> {
  for (const entry of readdirSync(tmpdir())) {
    const pid = Number(new RegExp(`^${TEMP_PREFIX}(\\d+)-`).exec(entry)?.[1]);
    if (pid && !alive(pid)) await rm(path.join(tmpdir(), entry), { recursive: true, force: true });
  }
  const directory = await mkdtemp(path.join(tmpdir(), `${TEMP_PREFIX}${process.pid}-`));
  onCleanup(() => rm(directory, { recursive: true, force: true }));
  return directory;
}

async function withAdmin<T>(adminUrl: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** `adminUrl` with another database name. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Drops databases of earlier runs whose process is gone. */
export async function sweepDatabases(adminUrl: string): Promise<void> {
  await withAdmin(adminUrl, async (client) => {
    const { rows } = await client.query<{ datname: string }>(
      'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
      [DATABASE_PREFIX],
    );
    for (const { datname } of rows) {
      const pid = Number(new RegExp(`^${DATABASE_PREFIX}(\\d+)_`).exec(datname)?.[1]);
      if (pid && !alive(pid)) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    }
  });
}

/** An empty database on the PostgreSQL server of `adminUrl`, dropped at clean-up; its URL. */
export async function createDatabase(adminUrl: string, label: string): Promise<string> {
  const name = `${DATABASE_PREFIX}${process.pid}_${label}_${randomBytes(3).toString('hex')}`;
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  onCleanup(() =>
    withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
      () => undefined,
    ),
  );
  return databaseUrl(adminUrl, name);
}

/** Process ids of the PostgreSQL backends serving `database` (their CPU is the database's share). */
export async function backendPids(adminUrl: string, database: string): Promise<number[]> {
  return withAdmin(adminUrl, async (client) => {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    return rows.map((row) => row.pid);
  });
}

/** A port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

let ticksPerSecond: number | undefined;

/**
 * CPU seconds (user + system) the process has used so far, every thread; of one thread only with `thread`
 * (its id: the process id is its main thread's). NaN once it is gone.
 */
export async function cpuSeconds(pid: number, thread?: number): Promise<number> {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  const file = thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`;
  const stat = await readFile(file, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line; fields[0] is field 3 (state).
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** Resident memory of the process in MB; NaN once it is gone. */
export async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

export interface ServerProcess {
  name: string;
  url: string;
  pid: number;
  /** Milliseconds from spawn until the readiness URL answered 200. */
  readyMs: number;
  /** CPU seconds the process used up to then. */
  readyCpuSeconds: number;
  logFile: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  name: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Where stdout and stderr go (production logging, one JSON line per request). */
  logFile: string;
  /** Path polled until it answers 200. */
  readyPath: string;
  timeoutMs?: number;
}

async function tail(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').slice(-15).join('\n');
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/** Starts `node <args>` on a free port, waits until `readyPath` answers 200; stopped at clean-up. */
export async function startProcess(options: StartOptions): Promise<ServerProcess> {
  const port = await freePort();
  const log = openSync(options.logFile, 'a');
  const started = performance.now();
  const child = spawn(process.execPath, options.args, {
    cwd: root,
    env: { ...options.env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const exited = exitOf(child);
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(killer);
      }
    })();
    return stopping;
  };
  onCleanup(stop);
  const url = `http://127.0.0.1:${port}`;
  const deadline = started + (options.timeoutMs ?? 180_000);
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  for (;;) {
    if (gone) {
      throw new Error(`${options.name} exited before it was ready:\n${await tail(options.logFile)}`);
    }
    if (performance.now() > deadline) {
      await stop();
      throw new Error(`${options.name} was not ready in time:\n${await tail(options.logFile)}`);
    }
    const status = await fetch(`${url}${options.readyPath}`).then(
      (response) => response.arrayBuffer().then(() => response.status),
      () => 0,
    );
    if (status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const readyMs = performance.now() - started;
  const pid = child.pid ?? 0;
  return {
    name: options.name,
    url,
    pid,
    readyMs,
    readyCpuSeconds: await cpuSeconds(pid),
    logFile: options.logFile,
    stop,
  };
}
