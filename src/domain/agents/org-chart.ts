import { recordAudit } from '../../audit.js';
import type { AgentRole, Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { Refusal } from '../errors.js';
import { requireAgentRole, unknownAgentRole } from './registry.js';
import { normalizeRole, TOP_ROLE } from './roles.js';

/** Who reports to whom: each role's manager (null for the CEO), the whole chart of one tenant. */
export type OrgChart = ReadonlyMap<string, { reportsTo: string | null; delegatesAcross: boolean }>;

export async function readOrgChart(db: Prisma.TransactionClient, tenantId: string): Promise<OrgChart> {
  const roles = await db.agentRole.findMany({
    where: { tenantId },
    select: { role: true, reportsTo: true, delegatesAcross: true },
  });
  return new Map(roles.map((role) => [role.role, role]));
}

/**
 * The managers of `role`, nearest first, up to the CEO. Bounded by the chart's size, so a chart that a
 * concurrent change left with a loop still ends.
 */
export function managersOf(chart: OrgChart, role: string): string[] {
  const chain: string[] = [];
  let current = chart.get(role)?.reportsTo ?? null;
  while (current !== null && chain.length <= chart.size && !chain.includes(current)) {
    chain.push(current);
    current = chart.get(current)?.reportsTo ?? null;
  }
  return chain;
}

/**
 * How a task of `from` may hand work to `to` along the chart: `down` when `to` is below `from` (directly or
 * not), `across` when both report to the same manager and the chairman let `from` delegate across, null
 * otherwise (up, or across without leave).
 */
export function delegationPath(chart: OrgChart, from: string, to: string): 'down' | 'across' | null {
  if (from === to) return null;
  if (managersOf(chart, to).includes(from)) return 'down';
  const source = chart.get(from);
  const target = chart.get(to);
  if (
    source?.delegatesAcross &&
    target &&
    source.reportsTo !== null &&
    source.reportsTo === target.reportsTo
  ) {
    return 'across';
  }
  return null;
}

/** The roles a task of `from` may delegate to, by the chart alone, in name order. */
export function delegationTargets(chart: OrgChart, from: string): string[] {
  return [...chart.keys()].filter((role) => delegationPath(chart, from, role) !== null).sort();
}

export interface ReportingChange {
  role: string;
  /** The new manager; kept when undefined. */
  reportsTo?: string | undefined;
  /** Whether the role may delegate across; kept when undefined. */
  delegatesAcross?: boolean | undefined;
}

const chartRefusal = (message: string, reason: string, facts: Record<string, unknown> = {}) =>
  new Refusal('BAD_USER_INPUT', message, { reason, facts });

/**
 * Changes where a role sits in its tenant's chart (the chairman's: the schema checks who calls). The CEO
 * reports to the board and nobody else; a role cannot report to itself or to a role below it (the chart
 * stays a tree: refused with the chain it would close). Locks the tenant's roles, so two changes that would
 * each be fine alone cannot close a loop together. Audited; a refusal writes nothing.
 */
export async function changeReporting(context: Actor, change: ReportingChange): Promise<AgentRole> {
  const { tenantId } = context.viewer;
  const role = normalizeRole(change.role);
  const reportsTo = change.reportsTo === undefined ? undefined : normalizeRole(change.reportsTo);
  await requireAgentRole(context, role);
  return context.prisma.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT 1 FROM agent_roles WHERE tenant_id = ${tenantId}::uuid ORDER BY id FOR UPDATE`;
    const chart = await readOrgChart(tx, tenantId);
    const current = chart.get(role);
    if (!current) throw unknownAgentRole(role);
    if (reportsTo !== undefined) {
      if (role === TOP_ROLE) {
        throw chartRefusal('The CEO reports to the board, not to another role', 'ceo_reports_to_board');
      }
      if (!chart.has(reportsTo)) throw unknownAgentRole(reportsTo);
      if (reportsTo === role) throw chartRefusal(`'${role}' cannot report to itself`, 'reporting_cycle');
      const above = managersOf(chart, reportsTo);
      if (above.includes(role)) {
        // The loop it would close: the role, its would-be manager, and that manager's chain back up to it.
        const chain = [role, reportsTo, ...above.slice(0, above.indexOf(role) + 1)];
        throw chartRefusal(
          `'${role}' cannot report to '${reportsTo}', who is below it (${chain.join(' → ')})`,
          'reporting_cycle',
          { chain },
        );
      }
    }
    const updated = await tx.agentRole.update({
      where: { tenantId_role: { tenantId, role } },
      data: {
        ...(reportsTo === undefined ? {} : { reportsTo }),
        ...(change.delegatesAcross === undefined ? {} : { delegatesAcross: change.delegatesAcross }),
      },
    });
    await recordAudit(tx, context, {
      action: 'agent_role.reporting',
      targetType: 'agent_role',
      targetId: role,
      outcome: 'changed',
      details: {
        reports_to: { from: current.reportsTo, to: updated.reportsTo },
        delegates_across: { from: current.delegatesAcross, to: updated.delegatesAcross },
      },
    });
    return updated;
  });
}
