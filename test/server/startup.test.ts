import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SECRET } from '../support/app.js';
import { copyMigratedPGliteDir, databaseKind } from '../support/database.js';
import { type Main, READY, runMain } from '../support/main-process.js';

/** The URL a started server prints in its ready line. */
async function readyUrl(main: Main): Promise<string> {
  const [, url] = await main.waitFor(READY);
  return url as string;
}

/** Stops a server with SIGTERM; resolves with its exit code. */
async function stop(main: Main): Promise<number | null> {
  main.child.kill('SIGTERM');
  return (await main.exited).code;
}

const dirs: string[] = [];
/**
 * A DATA_DIR for a test whose subject is not the first start: it holds a copy of the migrated template, as
 * a first start leaves it (the first test starts on an empty one).
 */
async function migratedDataDir(prefix: string): Promise<string> {
  const dataDir = await mkdtemp(path.join(tmpdir(), prefix));
  dirs.push(dataDir);
  await copyMigratedPGliteDir(path.join(dataDir, 'pglite'));
  return dataDir;
}

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

// Start-up reads DATABASE_URL itself; the postgres project covers the same path through the test apps.
describe.runIf(databaseKind === 'pglite')('npm start on PGlite', () => {
  it('serves health, GraphiQL and OpenAPI, and keeps what was written across a restart', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-start-'));
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir };
    const { signToken } = await import('../../src/auth/tokens.js');
    const token = await signToken(TEST_SECRET, {
      tenantId: '11111111-1111-4111-8111-111111111111',
      sub: 'c',
      roles: ['chairman'],
    });
    const call = (url: string, query: string) =>
      fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query }),
      }).then(
        (response) =>
          response.json() as Promise<{ data: { setDogfoodLiveMode?: { dogfoodLiveMode: boolean } } }>,
      );

    const first = runMain(env);
    const firstUrl = await readyUrl(first);
    expect((await fetch(`${firstUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${firstUrl}/readyz`)).status).toBe(200);
    expect((await fetch(`${firstUrl}/api/v1/openapi.json`)).status).toBe(200);
    const graphiql = await fetch(`${firstUrl}/graphql`, { headers: { accept: 'text/html' } });
    expect(await graphiql.text()).toContain('<html');
    await call(firstUrl, 'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }');
    expect(await stop(first)).toBe(0);

    const second = runMain(env);
    const result = await call(
      await readyUrl(second),
      'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }',
    );
    expect(result.data.setDogfoodLiveMode?.dogfoodLiveMode).toBe(true);
    const { PGlite } = await import('@electric-sql/pglite');
    expect(await stop(second)).toBe(0);
    const pglite = await PGlite.create(path.join(dataDir, 'pglite'));
    const rows = await pglite.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM audit_entries WHERE action = 'tenant.dogfood_live_mode'",
    );
    await pglite.close();
    expect(rows.rows[0]?.n).toBe(2);
  }, 120_000);

  it('prints a chairman token and a sample curl without AUTH_JWT_SECRET in development', async () => {
    const dataDir = await migratedDataDir('boardroom-dev-');
    const main = runMain({ DATA_DIR: dataDir, AUTH_JWT_SECRET: '', LOG_LEVEL: 'warn' });
    await main.waitFor(/More tokens/);
    const output = main.output();
    await stop(main);
    expect(output).toMatch(/export TOKEN=ey/);
    expect(output).toMatch(/curl -s http:\/\/127\.0\.0\.1:\d+\/api\/v1\/agents\/ceo\/vitals/);
  }, 120_000);

  it('recovers a lock left by a killed process, then refuses a second process on the same DATA_DIR', async () => {
    const dataDir = await migratedDataDir('boardroom-lock-');
    const killed = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => killed.once('exit', resolve));
    await writeFile(path.join(dataDir, 'pglite.lock'), `${killed.pid}\n`);

    const first = runMain({ DATA_DIR: dataDir });
    await first.waitFor(READY);
    const [holder] = (await readFile(path.join(dataDir, 'pglite.lock'), 'utf8')).split('\n');
    expect(holder).toBe(String(first.child.pid));
    const second = runMain({ DATA_DIR: dataDir, NODE_ENV: 'production' });
    const { code } = await second.exited;
    expect(await stop(first)).toBe(0);
    expect(code).toBe(1);
    expect(second.stderr().trim()).toBe(
      `DATA_DIR ${dataDir} is in use by process ${first.child.pid} (lock file ${path.join(dataDir, 'pglite.lock')}); ` +
        'stop that process or choose another DATA_DIR.',
    );
  }, 120_000);

  it('refuses to start in production without a secret or JWKS URL', async () => {
    const main = runMain({ NODE_ENV: 'production', AUTH_JWT_SECRET: '', AUTH_JWKS_URL: '' });
    expect((await main.exited).code).toBe(2);
    expect(main.stderr()).toContain('AUTH_JWT_SECRET or AUTH_JWKS_URL');
  }, 60_000);
});

describe.runIf(databaseKind === 'pglite')('npm start on a port that is taken', () => {
  it.each(['PORT', 'METRICS_PORT'])(
    'exits 1 with one line naming %s’s address, after closing the database',
    async (variable) => {
      const taken = createServer();
      const port = await new Promise<number>((resolve) =>
        taken.listen(0, '127.0.0.1', () => resolve((taken.address() as AddressInfo).port)),
      );
      const dataDir = await migratedDataDir('boardroom-port-');
      try {
        const main = runMain({ DATA_DIR: dataDir, [variable]: String(port), LOG_LEVEL: 'error' });
        const { code } = await main.exited;
        expect(code).toBe(1);
        expect(main.output().trim()).toBe(
          `cannot listen on 127.0.0.1:${port}: the address is already in use`,
        );
        // The database was closed: its lock is gone, so the next start on the directory is not refused.
        await expect(readFile(path.join(dataDir, 'pglite.lock'), 'utf8')).rejects.toMatchObject({
          code: 'ENOENT',
        });
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    },
    120_000,
  );
});
