import type { PrismaClient } from '../../db/client.js';
import { reapExpiredLeases } from './queue.js';
import { wakeStrandedParents } from './task-tree.js';

/**
 * Returns lapsed leases to the queue for every tenant and role, so tasks of a role nobody claims from any
 * more do not stay `running` forever. Claims reap their own role as well; this covers the rest. Then wakes
 * the waiting tasks whose sub-tasks have all ended but whose wake was lost (the gateway stopped in between).
 */
export async function sweepExpiredLeases(prisma: PrismaClient): Promise<number> {
  const groups = await prisma.$queryRaw<{ tenant_id: string; role: string }[]>`
    SELECT DISTINCT tenant_id::text, role FROM tasks WHERE status = 'running' AND lease_expires_at < now()`;
  let changed = 0;
  for (const group of groups) {
    changed += await prisma.$transaction((tx) => reapExpiredLeases(tx, group.tenant_id, group.role));
  }
  await wakeStrandedParents(prisma);
  return changed;
}
