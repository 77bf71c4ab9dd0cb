import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { onTestFinished } from 'vitest';
import { TEST_SECRET } from './app.js';
import { built } from './built.js';
import {
  copyMigratedPGliteDir,
  createMigratedPostgresDatabase,
  createTestDatabase,
  databaseKind,
  type TestDatabase,
} from './database.js';

/** How a process started by `runMain` ended. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running server process (dist/main.js). */
export interface Main {
  child: ChildProcess;
  /** Resolves with the first match in the output; rejects when the process exits first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** Resolves once the process has exited and all of its output has been read. */
  exited: Promise<Exit>;
  /** Standard output and standard error so far, interleaved as they arrived. */
  output(): string;
  /** Standard error alone so far. */
  stderr(): string;
}

/** Spawn options a test may set for the process: whose it is (`uid`, `gid`) and where it runs (`cwd`). */
export type MainOptions = Pick<SpawnOptions, 'cwd' | 'uid' | 'gid'>;

/**
 * Runs the built server (dist/main.js) as `npm start` does, in development, on 127.0.0.1
 * port 0, logging at info, with the tests' JWT secret and no Redis; `env` is laid over those and over the
 * test's own environment. Call it inside a test: a process still running when the test finishes, failed
 * or not, is killed (SIGKILL) and awaited, so none outlives its test.
 */
export function runMain(env: Record<string, string> = {}, options: MainOptions = {}): Main {
  const child = spawn(process.execPath, [built.main], {
    ...options,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      NODE_ENV: 'development',
      AUTH_JWT_SECRET: TEST_SECRET,
      REDIS_URL: '',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    collect(chunk);
  });
  // 'close' rather than 'exit': it comes once the output pipes are drained too. A process that could not be
  // spawned at all (EACCES, ENOENT) emits 'error' and may never emit 'close'; its error goes in the output.
  const exited = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => {
      collect(Buffer.from(`could not start ${process.execPath}: ${error.message}\n`));
      resolve({ code: null, signal: null });
    });
  });
  onTestFinished(async () => {
    child.kill('SIGKILL'); // does nothing once the process has exited
    await exited;
  });
  return {
    child,
    exited,
    output: () => output,
    stderr: () => stderr,
    waitFor(pattern) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (match) {
            listeners.delete(check);
            resolve(match);
          }
        };
        listeners.add(check);
        check();
        void exited.then(() => {
          listeners.delete(check);
          reject(new Error(`exited before ${pattern}:\n${output}`));
        });
      });
    },
  };
}

/** The log line a started server prints, with its URL. */
export const READY = /"url":"(http:\/\/[^"]+)".*boardroom is ready/;

export interface Target {
  env: Record<string, string>;
  /** Runs one query on the target's database (the server must not be running on a PGlite target). */
  query<Row>(sql: string): Promise<Row[]>;
  /** Removes the database and the data directory. */
  cleanup(): Promise<void>;
}

/** A fresh, empty database for the child: a new DATA_DIR, or a new PostgreSQL database. */
export async function freshTarget(prefix: string): Promise<Target> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `boardroom-${prefix}-`));
  const removeDir = () => rm(dataDir, { recursive: true, force: true });
  if (databaseKind === 'pglite') {
    return {
      env: { DATA_DIR: dataDir, DATABASE_URL: '' },
      query: (sql) => queryPGliteDir(dataDir, sql),
      cleanup: removeDir,
    };
  }
  const database: TestDatabase = await createTestDatabase({ migrate: false });
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: database.url as string },
    query: (sql) => database.db.prisma.$queryRawUnsafe(sql),
    async cleanup() {
      await database.drop();
      await removeDir();
    },
  };
}

/**
 * A database the server's first start has already migrated, for process tests whose subject is not that
 * first start: a new DATA_DIR holding a copy of the migrated PGlite template (seconds of initdb and
 * migrations saved per start), or a new PostgreSQL database copied from the migrated template.
 */
export async function migratedTarget(prefix: string): Promise<Target> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `boardroom-${prefix}-`));
  const removeDir = () => rm(dataDir, { recursive: true, force: true });
  if (databaseKind === 'pglite') {
    await copyMigratedPGliteDir(path.join(dataDir, 'pglite'));
    return {
      env: { DATA_DIR: dataDir, DATABASE_URL: '' },
      query: (sql) => queryPGliteDir(dataDir, sql),
      cleanup: removeDir,
    };
  }
  const database = await createMigratedPostgresDatabase();
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: database.url },
    async query<Row>(sql: string) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        return (await client.query(sql)).rows as Row[];
      } finally {
        await client.end();
      }
    },
    async cleanup() {
      await database.drop();
      await removeDir();
    },
  };
}

async function queryPGliteDir<Row>(dataDir: string, sql: string): Promise<Row[]> {
  const pglite = await PGlite.create(path.join(dataDir, 'pglite'));
  try {
    return (await pglite.query<Row>(sql)).rows;
  } finally {
    await pglite.close();
  }
}

const bookkeepingSql = `SELECT migration_name,
    count(*) FILTER (WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL)::int AS finished,
    count(*) FILTER (WHERE finished_at IS NULL AND rolled_back_at IS NULL)::int AS unfinished
  FROM _prisma_migrations GROUP BY migration_name ORDER BY migration_name`;

/** Rows of `_prisma_migrations` by name: how many finished and how many did not. */
export function bookkeeping(
  target: Target,
): Promise<{ migration_name: string; finished: number; unfinished: number }[]> {
  return target.query(bookkeepingSql);
}
