import type { PrismaClient } from '../../db/client.js';
import type { Logger } from '../../logger.js';
import { BREAKER_DEFAULTS } from './breaker-policy.js';
import { sweepLongRunningTasks } from './breakers.js';
import { checkReapedTasks, reapExpiredLeases } from './queue.js';
import { wakeStrandedParents } from './task-tree.js';

/**
 * Returns lapsed leases to the queue for every tenant and role, so tasks of a role nobody claims from any
 * more do not stay `running` forever. Claims reap their own role as well; this covers the rest. Then wakes
 * the waiting tasks whose sub-tasks have all ended but whose wake was lost (the gateway stopped in between),
 * and runs the breakers: on the tasks whose lease lapsed, and on tasks running past their role's limit.
 */
export async function sweepExpiredLeases(prisma: PrismaClient, log?: Logger): Promise<number> {
  const groups = await prisma.$queryRaw<{ tenant_id: string; role: string }[]>`
    SELECT DISTINCT tenant_id::text, role FROM tasks WHERE status = 'running' AND lease_expires_at < now()`;
  let changed = 0;
  for (const group of groups) {
    const reaped = await prisma.$transaction((tx) => reapExpiredLeases(tx, group.tenant_id, group.role));
    changed += reaped.length;
    await checkReapedTasks({ prisma, log }, group.tenant_id, reaped);
  }
  await wakeStrandedParents(prisma);
  await sweepLongRunningTasks({ prisma, log }, BREAKER_DEFAULTS.maxDurationMinutes);
  return changed;
}
