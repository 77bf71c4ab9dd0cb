export const ROLES = ['chairman', 'operator', 'member', 'agent'] as const;
export type Role = (typeof ROLES)[number];

/** The authenticated caller: a user or an agent acting for one tenant. */
export interface Viewer {
  sub: string;
  tenantId: string;
  roles: readonly Role[];
}
