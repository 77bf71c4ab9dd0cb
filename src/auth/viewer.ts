export const ROLES = ['chairman', 'operator', 'member', 'agent'] as const;
export type Role = (typeof ROLES)[number];

/** The authenticated caller: a user or an agent acting for one tenant. */
export interface Viewer {
  sub: string;
  tenantId: string;
  roles: readonly Role[];
}

/**
 * The caller as one string: tenant, subject and roles (sorted). What may answer differently for another
 * caller is shared only between callers with the same identity (the response cache's session, one
 * execution of a subscription event).
 */
export function viewerIdentity(viewer: Viewer): string {
  return JSON.stringify([viewer.tenantId, viewer.sub, [...viewer.roles].sort()]);
}
