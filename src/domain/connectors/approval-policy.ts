import type { ConnectorHttpMethod } from './endpoint-path.js';

/** Roles that may decide a gated call: the chairman always, the operator when the policy says so. */
export const APPROVER_ROLES = ['chairman', 'operator'] as const;
export type ApproverRole = (typeof APPROVER_ROLES)[number];

export const APPROVAL_MAX_RULES = 50;
export const APPROVAL_PATH_MAX_LENGTH = 2048;
export const APPROVAL_EXPIRY_MIN_SECONDS = 60;
export const APPROVAL_EXPIRY_MAX_SECONDS = 30 * 24 * 3600;
export const APPROVAL_EXPIRY_DEFAULT_SECONDS = 24 * 3600;

/** A policy as the API receives it (camelCase, optional parts absent or null). */
export interface ApprovalPolicyInput {
  rules: { methods: ConnectorHttpMethod[]; path?: string | null | undefined }[];
  approverRoles?: ApproverRole[] | null | undefined;
  expiresInSeconds?: number | null | undefined;
}

/** The policy as stored beside the template and shown to clients, in the REST spelling. */
export interface StoredApprovalPolicy {
  rules: { methods: ConnectorHttpMethod[]; path: string }[];
  approver_roles: ApproverRole[];
  expires_in_seconds: number;
}

export function toStoredPolicy(input: ApprovalPolicyInput): StoredApprovalPolicy {
  const roles = new Set<ApproverRole>(['chairman', ...(input.approverRoles ?? [])]);
  return {
    rules: input.rules.map((rule) => ({ methods: [...new Set(rule.methods)], path: rule.path ?? '/**' })),
    approver_roles: APPROVER_ROLES.filter((role) => roles.has(role)),
    expires_in_seconds: input.expiresInSeconds ?? APPROVAL_EXPIRY_DEFAULT_SECONDS,
  };
}

/**
 * Why a path pattern is refused, or null. A pattern is an endpoint path whose segments may be `*` (any
 * one segment) or `**` (any number of segments, none included); nothing else is a wildcard, so matching
 * stays linear and a pattern reads like the paths it covers.
 */
export function checkPathPattern(pattern: string): string | null {
  if (!pattern.startsWith('/')) return 'a path pattern starts with /';
  if (/\p{Cc}/u.test(pattern)) return 'a path pattern must not contain control characters';
  for (const segment of pattern.split('/').slice(1)) {
    if (segment.includes('*') && segment !== '*' && segment !== '**') {
      return 'a * stands for a whole segment: write /customers/* or /customers/**, not /cust*';
    }
  }
  return null;
}

/** Whether `path` (an endpoint path of the template) matches `pattern` (checkPathPattern accepted it). */
export function pathMatches(pattern: string, path: string): boolean {
  const want = pattern.split('/').slice(1);
  const have = path.split('/').slice(1);
  // matches[i][j]: want[i..] matches have[j..]; filled from the end, so O(|want| × |have|).
  let next: boolean[] = have.map(() => false).concat(true);
  for (let i = want.length - 1; i >= 0; i--) {
    const current: boolean[] = new Array(have.length + 1).fill(false);
    for (let j = have.length; j >= 0; j--) {
      const segment = want[i];
      if (segment === '**') current[j] = next[j] || (j < have.length && current[j + 1] === true);
      else current[j] = j < have.length && (segment === '*' || segment === have[j]) && next[j + 1] === true;
    }
    next = current;
  }
  return next[0] === true;
}

/** Whether a call of the endpoint `method path` waits for a decision under `policy`. */
export function isGated(
  policy: StoredApprovalPolicy | null | undefined,
  endpoint: { method: string; path: string },
): boolean {
  if (!policy) return false;
  return policy.rules.some(
    (rule) =>
      rule.methods.includes(endpoint.method as ConnectorHttpMethod) && pathMatches(rule.path, endpoint.path),
  );
}
