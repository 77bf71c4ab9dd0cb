/** The eight C-suite agent roles every tenant has. */
export const C_SUITE_ROLES = ['ceo', 'cfo', 'coo', 'cto', 'cmo', 'cpo', 'chro', 'clo'] as const;
export type CSuiteRole = (typeof C_SUITE_ROLES)[number];

export const AGENT_ROLE_PATTERN = /^[a-z][a-z0-9_-]{1,63}$/;

export function isCSuiteRole(role: string): role is CSuiteRole {
  return (C_SUITE_ROLES as readonly string[]).includes(role);
}

/** Path roles match case-insensitively and are answered in lower case. */
export const normalizeRole = (role: string) => role.trim().toLowerCase();

/** The role at the top of every tenant's org chart: it reports to the board. */
export const TOP_ROLE = 'ceo';
