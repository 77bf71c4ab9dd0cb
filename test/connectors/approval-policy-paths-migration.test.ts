import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGated, type StoredApprovalPolicy } from '../../src/domain/connectors/approval-policy.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { migrationsBefore } from './migrations-support.js';

const MIGRATION = '20261130090000_approval_policy_request_paths';

let database: TestDatabase;
let before: string | undefined;
// Every migration up to this one, in the hook (the longest part): the test applies this one alone.
beforeAll(async () => {
  database = await createTestDatabase({ migrate: false });
  before = await migrationsBefore(MIGRATION);
  await database.db.migrate({ migrationsDir: before });
});
afterAll(async () => {
  await database?.drop();
  if (before) await rm(before, { recursive: true, force: true });
});

const policy = (...paths: string[]) => ({
  rules: paths.map((rulePath) => ({ methods: ['DELETE'], path: rulePath })),
  approver_roles: ['chairman'],
  expires_in_seconds: 86400,
});

describe(`migration ${MIGRATION}`, () => {
  it('keeps every rule and adds it under its connector’s base path: no call stored policies gated goes ungated', async () => {
    const prisma = database.db.prisma;
    const tenantId = randomUUID();
    await prisma.$executeRawUnsafe(`INSERT INTO tenants (id, updated_at) VALUES ('${tenantId}', now())`);
    // base_url, the policy stored before, the rules after.
    const cases: [string, ReturnType<typeof policy> | null, string[] | null][] = [
      [
        'https://api.example.com/v1',
        policy('/customers/*', '/**'),
        ['/customers/*', '/v1/customers/*', '/**'],
      ],
      ['https://api.example.com:8443/v1/', policy('/**/refunds', '/a'), ['/**/refunds', '/a', '/v1/a']],
      ['https://api.example.com', policy('/customers/*'), ['/customers/*']],
      ['https://api.example.com/', policy('/customers/*'), ['/customers/*']],
      ['https://api.example.com/v1', null, null],
    ];
    const ids: string[] = [];
    for (const [index, [baseUrl, stored]] of cases.entries()) {
      const connectorId = randomUUID();
      ids.push(connectorId);
      const template = JSON.stringify({ name: `c${index}`, base_url: baseUrl, auth_type: 'none' });
      const json = stored ? `'${JSON.stringify(stored)}'::jsonb` : 'NULL';
      await prisma.$executeRawUnsafe(
        `INSERT INTO connectors (id, tenant_id, name, name_key, template, approval_policy, version, created_by, updated_at)
         VALUES ('${connectorId}', '${tenantId}', 'c${index}', 'c${index}', '${template}'::jsonb, ${json}, 2, 'chair', now())`,
      );
      // The first version had another base path and no policy; the second is the current one.
      const first = JSON.stringify({
        name: `c${index}`,
        base_url: 'https://api.example.com/v0',
        auth_type: 'none',
      });
      await prisma.$executeRawUnsafe(
        `INSERT INTO connector_versions (id, connector_id, version, template, approval_policy, created_by)
         VALUES ('${randomUUID()}', '${connectorId}', 1, '${first}'::jsonb, NULL, 'chair'),
                ('${randomUUID()}', '${connectorId}', 2, '${template}'::jsonb, ${json}, 'chair')`,
      );
    }

    expect(await database.db.migrate()).toContain(MIGRATION);

    for (const [index, [baseUrl, stored, after]] of cases.entries()) {
      const connector = await prisma.connector.findUniqueOrThrow({ where: { id: ids[index] } });
      const migrated = connector.approvalPolicy as unknown as StoredApprovalPolicy | null;
      expect(migrated?.rules.map((rule) => rule.path) ?? null, baseUrl).toEqual(after);
      if (migrated && stored) {
        expect({ ...migrated, rules: [] }).toEqual({ ...stored, rules: [] });
        // Each endpoint path the old rules gated (relative to base_url) is gated as the request it sends.
        for (const rule of stored.rules.filter((old) => !old.path.includes('*'))) {
          const url = `${baseUrl.replace(/\/$/, '')}${rule.path}`;
          expect(isGated(migrated, { method: 'DELETE', url }), url).toBe(true);
        }
      }
      const versions = await prisma.connectorVersion.findMany({
        where: { connectorId: ids[index] },
        orderBy: { version: 'asc' },
      });
      expect(versions.map((version) => version.approvalPolicy)).toEqual([null, connector.approvalPolicy]);
    }
  });
});
