export { parseEgressAllowlist } from './allowlist.js';
export type { EgressClient, EgressDeadline, EgressResponse } from './client.js';
export * from './errors.js';
