import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConnector } from '../rest/connectors-support.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { built } from '../support/built.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';

const KEY_1 = `k1:${randomBytes(32).toString('base64')}`;
const KEY_2 = `k2:${randomBytes(32).toString('base64')}`;

/** Runs dist/reseal-credentials.js as `npm run credentials:reseal` does. */
function reseal(
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [built.resealCredentials], {
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// Configuration refusals need no database: one project is enough.
describe.runIf(databaseKind === 'pglite')('npm run credentials:reseal without a usable key', () => {
  it('exits 2 when CONNECTOR_SECRETS_KEY is not set', async () => {
    const result = await reseal({ CONNECTOR_SECRETS_KEY: '' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('CONNECTOR_SECRETS_KEY is not set');
  });

  it('exits 2 for a malformed key, without echoing it or a stack trace', async () => {
    const result = await reseal({ CONNECTOR_SECRETS_KEY: 'k1:c2hvcnQ=' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("CONNECTOR_SECRETS_KEY: key 'k1' must be 32 bytes");
    expect(result.stderr).not.toContain('c2hvcnQ=');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});

// A second process reaches the database only on PostgreSQL (PGlite has one process per directory).
describe.runIf(databaseKind === 'postgresql')('npm run credentials:reseal', () => {
  let database: TestDatabase;
  let t: TestApp;

  beforeAll(async () => {
    database = await createTestDatabase();
    t = await createTestApp({ database, env: { CONNECTOR_SECRETS_KEY: KEY_1 } });
  });

  afterAll(async () => {
    await t?.close();
    await database?.drop();
  });

  async function credentialUnderKey1() {
    const chairman = await t.caller(['chairman']);
    const connector = await createConnector(t, chairman, `Resealed ${randomBytes(4).toString('hex')}`);
    const put = await t.rest('PUT', `/api/v1/forge/connectors/${connector.id}/credential`, {
      caller: chairman,
      body: { bearer: { token: 'token' } },
    });
    expect(put.status).toBe(200);
    return connector.id;
  }

  it('re-seals secrets of the old key under the new one and exits 0', async () => {
    const connectorId = await credentialUnderKey1();
    const result = await reseal({
      DATABASE_URL: database.url as string,
      CONNECTOR_SECRETS_KEY: `${KEY_2},${KEY_1}`,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^re-sealed 1 under key 'k2'; 0 already were; 0 unreadable$/m);
    const row = await t.db.prisma.connectorCredential.findUniqueOrThrow({ where: { connectorId } });
    expect(row.keyId).toBe('k2');
  });

  it('exits 1 and names the connectors whose key is missing', async () => {
    const connectorId = await credentialUnderKey1();
    const result = await reseal({ DATABASE_URL: database.url as string, CONNECTOR_SECRETS_KEY: KEY_2 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`connector ${connectorId}: sealed under 'k1', unknown key`);
  });
});
