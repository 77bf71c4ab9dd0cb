export { parseEgressAllowlist } from './allowlist.js';
export {
  createEgressClient,
  type EgressClient,
  type EgressClientOptions,
  type EgressDeadline,
  type EgressResponse,
} from './client.js';
export * from './errors.js';
