export const ROLES = ['chairman', 'operator', 'member', 'agent'] as const;
export type Role = (typeof ROLES)[number];

/** The authenticated caller: a user or an agent acting for one tenant. */
export interface Viewer {
  sub: string;
  tenantId: string;
  roles: readonly Role[];
  /**
   * The agent roles an agent token works for (its `agent_roles` claim, lower case): such a caller claims,
   * ends, reads and hears of those roles' tasks only (src/domain/agents/role-binding.ts). Absent: every
   * role of the tenant, as for a token without the claim.
   */
  agentRoles?: readonly string[];
  /**
   * When the token that proved this caller expires (its `exp`, in milliseconds since the epoch): every
   * stream it opened ends then (src/auth/expiry.ts). Absent only for a viewer made without a token.
   */
  expiresAt?: number;
}

/**
 * The caller as one string: tenant, subject, roles and agent roles (sorted). What may answer differently for
 * another caller is shared only between callers with the same identity (the response cache's session, one
 * execution of a subscription event).
 */
export function viewerIdentity(viewer: Viewer): string {
  return JSON.stringify([
    viewer.tenantId,
    viewer.sub,
    [...viewer.roles].sort(),
    viewer.agentRoles ? [...viewer.agentRoles].sort() : null,
  ]);
}
