export { compileAllowlist, type EgressAllowlist, parseEgressAllowlist } from './allowlist.js';
export {
  createEgressClient,
  EGRESS_DEFAULTS,
  type EgressClient,
  type EgressClientOptions,
  type EgressDeadline,
  type EgressLookup,
  type EgressRequest,
  type EgressResponse,
  type EgressSendOptions,
  type ResolvedAddress,
} from './client.js';
export * from './errors.js';
