import type { PrismaClient } from './db/client.js';
import { C_SUITE_ROLES, TOP_ROLE } from './domain/agents/roles.js';

/**
 * Creates the tenant row (and its built-in C-suite agent roles) the first time a valid token names it.
 * Known tenants are remembered so the common path costs no query.
 */
export function createTenantRegistry(prisma: PrismaClient) {
  const known = new Set<string>();
  const pending = new Map<string, Promise<void>>();

  async function create(tenantId: string) {
    await prisma.tenant.upsert({ where: { id: tenantId }, create: { id: tenantId }, update: {} });
    await prisma.agentRole.createMany({
      data: C_SUITE_ROLES.map((role) => ({
        tenantId,
        role,
        builtIn: true,
        reportsTo: role === TOP_ROLE ? null : TOP_ROLE,
      })),
      skipDuplicates: true,
    });
    known.add(tenantId);
  }

  return {
    async ensure(tenantId: string): Promise<void> {
      if (known.has(tenantId)) return;
      let creating = pending.get(tenantId);
      if (!creating) {
        creating = create(tenantId).finally(() => pending.delete(tenantId));
        pending.set(tenantId, creating);
      }
      await creating;
    },
  };
}

export type TenantRegistry = ReturnType<typeof createTenantRegistry>;
