import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_SECRET } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { runMain } from '../support/main-process.js';

interface Started {
  url: string;
  pid: number;
  stop(): Promise<number | null>;
}

/** Runs `src/main.ts` as `npm start` does, on port 0, and waits for its ready line. */
function start(env: Record<string, string>): Promise<Started> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        NODE_ENV: 'development',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`not ready in 60 s:\n${output}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const ready = /"url":"(http:\/\/[^"]+)".*boardroom is ready/.exec(output);
      if (ready?.[1]) {
        clearTimeout(timer);
        resolve({
          url: ready[1],
          pid: child.pid as number,
          stop: () =>
            new Promise((done) => {
              child.once('exit', (code) => done(code));
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}:\n${output}`)));
  });
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

// Start-up reads DATABASE_URL itself; the postgres project covers the same path through the test apps.
describe.runIf(databaseKind === 'pglite')('npm start on PGlite', () => {
  it('serves health, GraphiQL and OpenAPI, and keeps what was written across a restart', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-start-'));
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir, AUTH_JWT_SECRET: TEST_SECRET };
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

    const first = await start(env);
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${first.url}/api/v1/openapi.json`)).status).toBe(200);
    const graphiql = await fetch(`${first.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(await graphiql.text()).toContain('<html');
    await call(first.url, 'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }');
    expect(await first.stop()).toBe(0);

    const second = await start(env);
    const result = await call(
      second.url,
      'mutation { setDogfoodLiveMode(enabled: true) { dogfoodLiveMode } }',
    );
    expect(result.data.setDogfoodLiveMode?.dogfoodLiveMode).toBe(true);
    const { PGlite } = await import('@electric-sql/pglite');
    expect(await second.stop()).toBe(0);
    const pglite = await PGlite.create(path.join(dataDir, 'pglite'));
    const rows = await pglite.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM audit_entries WHERE action = 'tenant.dogfood_live_mode'",
    );
    await pglite.close();
    expect(rows.rows[0]?.n).toBe(2);
  }, 120_000);

  it('prints a chairman token and a sample curl without AUTH_JWT_SECRET in development', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-dev-'));
    dirs.push(dataDir);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: dataDir,
        NODE_ENV: 'development',
        AUTH_JWT_SECRET: '',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = await new Promise<string>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(text)), 60_000);
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        if (text.includes('More tokens')) {
          clearTimeout(timer);
          resolve(text);
        }
      });
    });
    child.kill('SIGTERM');
    expect(output).toMatch(/export TOKEN=ey/);
    expect(output).toMatch(/curl -s http:\/\/127\.0\.0\.1:\d+\/api\/v1\/agents\/ceo\/vitals/);
  }, 120_000);

  it('recovers a lock left by a killed process, then refuses a second process on the same DATA_DIR', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-lock-'));
    dirs.push(dataDir);
    const killed = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => killed.once('exit', resolve));
    await writeFile(path.join(dataDir, 'pglite.lock'), `${killed.pid}\n`);

    const first = await start({ DATA_DIR: dataDir, AUTH_JWT_SECRET: TEST_SECRET });
    expect(await readFile(path.join(dataDir, 'pglite.lock'), 'utf8')).toBe(`${first.pid}\n`);
    const second = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: {
        ...process.env,
        PORT: '0',
        DATA_DIR: dataDir,
        AUTH_JWT_SECRET: TEST_SECRET,
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    second.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
    expect(await first.stop()).toBe(0);
    expect(code).toBe(1);
    expect(stderr.trim()).toBe(
      `DATA_DIR ${dataDir} is in use by process ${first.pid} (lock file ${path.join(dataDir, 'pglite.lock')}); ` +
        'stop that process or choose another DATA_DIR.',
    );
  }, 120_000);

  it('refuses to start in production without a secret or JWKS URL', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, NODE_ENV: 'production', AUTH_JWT_SECRET: '', AUTH_JWKS_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('AUTH_JWT_SECRET or AUTH_JWKS_URL');
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
      const dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-port-'));
      dirs.push(dataDir);
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
