import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { TEST_SECRET } from './app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from './database.js';

export interface Main {
  child: ChildProcess;
  /** Resolves when the output matches; rejects when the process exits first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** Runs `src/main.ts` as `npm start` does, on port 0, logging at info. */
export function runMain(env: Record<string, string>): Main {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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
  const listeners = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    exited,
    output: () => output,
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
      async query<Row>(sql: string) {
        const pglite = await PGlite.create(path.join(dataDir, 'pglite'));
        try {
          return (await pglite.query<Row>(sql)).rows;
        } finally {
          await pglite.close();
        }
      },
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
