import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { readMigrations } from '../../src/db/migrate.js';
import { TEST_SECRET } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';

interface Main {
  child: ChildProcess;
  /** Resolves when the output matches; rejects when the process exits first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** Runs `src/main.ts` as `npm start` does, on port 0, logging at info. */
function runMain(env: Record<string, string>): Main {
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

interface Target {
  env: Record<string, string>;
  /** Rows of `_prisma_migrations` by name: how many finished and how many did not. */
  bookkeeping(): Promise<{ migration_name: string; finished: number; unfinished: number }[]>;
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const bookkeepingSql = `SELECT migration_name,
    count(*) FILTER (WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL)::int AS finished,
    count(*) FILTER (WHERE finished_at IS NULL AND rolled_back_at IS NULL)::int AS unfinished
  FROM _prisma_migrations GROUP BY migration_name ORDER BY migration_name`;

/** A fresh, empty database for the child: a new DATA_DIR, or a new PostgreSQL database. */
async function freshTarget(): Promise<Target> {
  if (databaseKind === 'pglite') {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-interrupted-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    return {
      env: { DATA_DIR: dataDir, DATABASE_URL: '' },
      async bookkeeping() {
        const pglite = await PGlite.create(path.join(dataDir, 'pglite'));
        try {
          return (await pglite.query<Awaited<ReturnType<Target['bookkeeping']>>[number]>(bookkeepingSql))
            .rows;
        } finally {
          await pglite.close();
        }
      },
    };
  }
  const database: TestDatabase = await createTestDatabase({ migrate: false });
  cleanups.push(() => database.drop());
  const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-interrupted-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: database.url as string },
    bookkeeping: () => database.db.prisma.$queryRawUnsafe(bookkeepingSql),
  };
}

const names = (await readMigrations()).migrationDirectories.map((dir) => dir.path);
const applying = (name: string) => new RegExp(`"migration":"${name}".*applying migration`);

/** Starts again on the same database, checks it serves, stops it; then every migration is there once. */
async function expectCleanRestart(target: Target): Promise<void> {
  const main = runMain(target.env);
  const [, url] = await main.waitFor(/"url":"(http:\/\/[^"]+)".*boardroom is ready/);
  expect((await fetch(`${url}/readyz`)).status).toBe(200);
  main.child.kill('SIGTERM');
  expect((await main.exited).code).toBe(0);
  expect(await target.bookkeeping()).toEqual(
    names.map((migration_name) => ({ migration_name, finished: 1, unfinished: 0 })),
  );
}

describe('a first start interrupted during its migrations', () => {
  // Where exactly the kill lands inside the named migration varies from run to run; every place must
  // leave a database the next start completes.
  for (const name of [names[0], names[Math.floor(names.length / 2)], names.at(-1)] as string[]) {
    it(`is killed (SIGKILL) while applying ${name}; the next start completes`, async () => {
      const target = await freshTarget();
      const main = runMain(target.env);
      await main.waitFor(applying(name));
      main.child.kill('SIGKILL');
      expect((await main.exited).signal).toBe('SIGKILL');

      await expectCleanRestart(target);
    }, 120_000);
  }

  it('stops on SIGTERM between two migrations and exits 0; the next start completes', async () => {
    const target = await freshTarget();
    const main = runMain(target.env);
    await main.waitFor(applying(names[1] as string));
    main.child.kill('SIGTERM');

    expect((await main.exited).code).toBe(0);
    expect(main.output()).toContain('stopping during start-up');
    expect(main.output()).not.toContain('boardroom is ready');
    await expectCleanRestart(target);
  }, 120_000);
});
