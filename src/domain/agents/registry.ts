import { recordAudit } from '../../audit.js';
import type { AgentRole } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { conflict, notFound } from '../errors.js';
import { normalizeRole, TOP_ROLE } from './roles.js';

/** The caller's agent role named `rawRole` (case-insensitive), or null. */
export function findAgentRole(context: Actor, rawRole: string): Promise<AgentRole | null> {
  return context.prisma.agentRole.findUnique({
    where: { tenantId_role: { tenantId: context.viewer.tenantId, role: normalizeRole(rawRole) } },
  });
}

/** The 404 of a role the caller's tenant does not have. */
export const unknownAgentRole = (rawRole: string) =>
  notFound(`Unknown agent role '${normalizeRole(rawRole)}'`);

/** The caller's agent role named `rawRole`; 404 when the tenant has no such role. */
export async function requireAgentRole(context: Actor, rawRole: string): Promise<AgentRole> {
  const role = await findAgentRole(context, rawRole);
  if (!role) throw unknownAgentRole(rawRole);
  return role;
}

export function listAgentRoles(context: Actor): Promise<AgentRole[]> {
  return context.prisma.agentRole.findMany({
    where: { tenantId: context.viewer.tenantId },
    orderBy: [{ builtIn: 'desc' }, { role: 'asc' }],
  });
}

export interface AgentRoleRegistration {
  /** Already a valid lower-case slug. */
  role: string;
  displayName?: string | null | undefined;
  /** The role it reports to; default the CEO. */
  reportsTo?: string | null | undefined;
}

/** Adds an agent role to the caller's tenant; 409 when the tenant already has it (built in or registered). */
export async function registerAgentRole(
  context: Actor,
  registration: AgentRoleRegistration,
): Promise<AgentRole> {
  const { tenantId } = context.viewer;
  const reportsTo = normalizeRole(registration.reportsTo ?? TOP_ROLE);
  return context.prisma.$transaction(async (tx) => {
    // Its manager is locked while it is added: a role cannot be removed from under it, nor loop back to it.
    const [manager] = await tx.$queryRaw<{ role: string }[]>`
      SELECT role FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${reportsTo} FOR SHARE`;
    if (!manager) throw unknownAgentRole(reportsTo);
    const inserted = await tx.agentRole.createManyAndReturn({
      data: [{ tenantId, role: registration.role, displayName: registration.displayName ?? null, reportsTo }],
      skipDuplicates: true,
    });
    const created = inserted[0];
    if (!created) throw conflict(`Agent role '${registration.role}' already exists`);
    await recordAudit(tx, context, {
      action: 'agent_role.register',
      targetType: 'agent_role',
      targetId: created.role,
      outcome: 'registered',
      details: { display_name: created.displayName, reports_to: created.reportsTo },
    });
    return created;
  });
}
