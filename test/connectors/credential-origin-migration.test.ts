import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { migrationsBefore } from './migrations-support.js';

const MIGRATION = '20261125170224_connector_credential_origin';

let database: TestDatabase | undefined;
let before: string | undefined;
afterAll(async () => {
  await database?.drop();
  if (before) await rm(before, { recursive: true, force: true });
});

describe(`migration ${MIGRATION}`, () => {
  it('binds every credential stored before it to the origin its connector calls', async () => {
    database = await createTestDatabase({ migrate: false });
    before = await migrationsBefore(MIGRATION);
    await database.db.migrate({ migrationsDir: before });
    const prisma = database.db.prisma;
    const tenantId = randomUUID();
    await prisma.$executeRawUnsafe(`INSERT INTO tenants (id, updated_at) VALUES ('${tenantId}', now())`);
    const stored: Record<string, string> = {
      'https://api.example.com/v1': 'https://api.example.com',
      'https://api.example.com:8443/v1': 'https://api.example.com:8443',
      'https://[2001:db8::1]:8443': 'https://[2001:db8::1]:8443',
      'https://API.Example.com:443/v1': 'https://api.example.com',
    };
    const ids: Record<string, string> = {};
    for (const [index, baseUrl] of Object.keys(stored).entries()) {
      const connectorId = randomUUID();
      ids[baseUrl] = connectorId;
      const template = JSON.stringify({ name: `c${index}`, base_url: baseUrl, auth_type: 'bearer' });
      await prisma.$executeRawUnsafe(
        `INSERT INTO connectors (id, tenant_id, name, name_key, template, created_by, updated_at)
         VALUES ('${connectorId}', '${tenantId}', 'c${index}', 'c${index}', '${template}'::jsonb, 'chair', now())`,
      );
      await prisma.$executeRawUnsafe(
        `INSERT INTO connector_credentials
           (id, tenant_id, connector_id, auth_type, key_id, sealed, fingerprint, created_by, updated_by, updated_at)
         VALUES ('${randomUUID()}', '${tenantId}', '${connectorId}', 'bearer', 'k1', '\\x00', 'hmac:0', 'chair', 'chair', now())`,
      );
    }

    expect(await database.db.migrate()).toContain(MIGRATION);

    const rows = await prisma.connectorCredential.findMany({ where: { tenantId } });
    expect(Object.fromEntries(rows.map((row) => [row.connectorId, [row.origin, row.unboundAt]]))).toEqual(
      Object.fromEntries(Object.entries(stored).map(([baseUrl, origin]) => [ids[baseUrl], [origin, null]])),
    );
  });
});
