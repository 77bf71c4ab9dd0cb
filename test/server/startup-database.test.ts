import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseKind } from '../support/database.js';
import { READY, runMain } from '../support/main-process.js';

interface Outcome {
  code: number | null;
  ready: boolean;
  /** Every line written to standard error. */
  errors: string[];
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Runs the built server on `databaseUrl` until it exits (or is ready, then it is stopped). */
async function start(databaseUrl: string): Promise<Outcome> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-database-url-'));
  dirs.push(dataDir);
  const main = runMain({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir });
  const ready = await main.waitFor(READY).then(
    () => true,
    () => false,
  );
  if (ready) main.child.kill('SIGTERM');
  const { code } = await main.exited;
  return {
    code,
    ready,
    errors: main
      .stderr()
      .split('\n')
      .filter((line) => line.trim() !== ''),
  };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// The server's own URL (trust authentication, user postgres), with another database or user.
const serverUrl = () => new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');

describe.runIf(databaseKind === 'postgresql')(
  'start-up on a PostgreSQL server that lacks what DATABASE_URL names',
  () => {
    it('exits 1 with one line naming a database that does not exist and how to create it', async () => {
      const url = serverUrl();
      const name = `boardroom_missing_${randomBytes(6).toString('hex')}`;
      url.pathname = `/${name}`;

      const outcome = await start(url.toString());

      expect(outcome.code).toBe(1);
      expect(outcome.errors).toEqual([
        `DATABASE_URL names database "${name}", which does not exist on the PostgreSQL server at ` +
          `${url.hostname}:${url.port || 5432}; create it (createdb -h ${url.hostname} -p ${url.port || 5432} ` +
          `-U ${url.username} ${name}, or CREATE DATABASE "${name}"; in psql) or correct DATABASE_URL.`,
      ]);
    }, 60_000);

    it('exits 1 with one line naming a user the server does not know', async () => {
      const url = serverUrl();
      const user = `nobody_${randomBytes(4).toString('hex')}`;
      url.username = user;

      const outcome = await start(url.toString());

      expect(outcome.code).toBe(1);
      expect(outcome.errors).toEqual([
        `DATABASE_URL: the PostgreSQL server at ${url.hostname}:${url.port || 5432} refused the connection: ` +
          `role "${user}" does not exist`,
      ]);
    }, 60_000);
  },
);

// No PostgreSQL server is needed to find nothing at an address.
describe.runIf(databaseKind === 'pglite')('start-up with a DATABASE_URL that reaches no server', () => {
  it('exits 1 with one line when nothing listens at the address', async () => {
    const port = await closedPort();

    const outcome = await start(`postgres://postgres:secret@127.0.0.1:${port}/boardroom`);

    expect(outcome.code).toBe(1);
    expect(outcome.errors).toEqual([
      `DATABASE_URL: no PostgreSQL server accepts connections at 127.0.0.1:${port} (connection refused); ` +
        'start it or correct DATABASE_URL.',
    ]);
  }, 60_000);

  it('exits 1 with one line when the host name does not resolve', async () => {
    const outcome = await start('postgres://postgres:secret@db.invalid:5432/boardroom');

    expect(outcome.code).toBe(1);
    expect(outcome.errors).toEqual([
      'DATABASE_URL: the host name db.invalid does not resolve (ENOTFOUND); correct DATABASE_URL.',
    ]);
  }, 60_000);
});
