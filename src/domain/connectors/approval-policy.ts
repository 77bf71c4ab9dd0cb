import type { ConnectorHttpMethod } from './endpoint-path.js';
import { normalizedPath, pathReadings } from './request-path.js';

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
 * Why a path pattern is refused, or null. A pattern is a path of the connector's server (what a request
 * is sent to: base_url's path and the endpoint's together) whose segments may be `*` (any one segment) or
 * `**` (any number of segments, none included); nothing else is a wildcard, so matching stays linear and
 * a pattern reads like the paths it covers. It has no query string or fragment: a rule gates paths.
 */
export function checkPathPattern(pattern: string): string | null {
  if (!pattern.startsWith('/')) return 'a path pattern starts with /';
  if (/\p{Cc}/u.test(pattern)) return 'a path pattern must not contain control characters';
  if (/[?#]/u.test(pattern)) return 'a path pattern has no query string or fragment';
  for (const segment of pattern.split('/').slice(1)) {
    if (segment.includes('*') && segment !== '*' && segment !== '**') {
      return 'a * stands for a whole segment: write /customers/* or /customers/**, not /cust*';
    }
  }
  return null;
}

/** Whether the pattern's segments `want` match the path's segments `have`. */
function segmentsMatch(want: string[], have: string[]): boolean {
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

/**
 * The segments of a pattern, normalised as a request's path is (`normalizedPath`): as written, and without
 * its empty segments (a trailing or repeated slash in a pattern gates the path without it too).
 */
function patternReadings(pattern: string): string[][] {
  const segments = normalizedPath(pattern).split('/').slice(1);
  const nonEmpty = segments.filter((segment) => segment !== '');
  return nonEmpty.length === segments.length ? [segments] : [segments, nonEmpty];
}

/** Whether one of the pattern's readings matches one of the path's. */
const anyMatch = (wants: string[][], haves: string[][]) =>
  wants.some((want) => haves.some((have) => segmentsMatch(want, have)));

/**
 * Whether `path` (the path of a request as sent) matches `pattern` (checkPathPattern accepted it) in any
 * way a server may read the path (`pathReadings`): ASCII case ignored, encoded slashes, matrix parameters,
 * repeated and trailing slashes, double encoding.
 */
export function pathMatches(pattern: string, path: string): boolean {
  return anyMatch(patternReadings(pattern), pathReadings(path));
}

/** Headers with which many servers take the method of a request from its sender (Google APIs, Rack, …). */
const METHOD_OVERRIDE_HEADERS: ReadonlySet<string> = new Set([
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
]);

/** The methods a server may read a request as: its own, and any a method override asks for. */
function methodReadings(request: GatedRequest): string[] {
  const methods = [request.method];
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (METHOD_OVERRIDE_HEADERS.has(name.toLowerCase())) methods.push(value.trim().toUpperCase());
  }
  for (const value of new URL(request.url).searchParams.getAll('_method')) methods.push(value.toUpperCase());
  return methods;
}

/** What a policy reads of a request: its method, the URL sent and the caller's headers. */
export interface GatedRequest {
  method: string;
  url: string;
  headers?: Record<string, string> | null | undefined;
}

/**
 * Whether a request waits for a decision under `policy`: a rule names its method (or one a method
 * override asks the server for) and matches the path of its URL, the one that is sent (`buildRequest`).
 * What the template spells (dot segments, escapes, a segment moved into base_url) does not matter: only
 * where the call goes and what it asks there.
 */
export function isGated(policy: StoredApprovalPolicy | null | undefined, request: GatedRequest): boolean {
  if (!policy) return false;
  const methods = methodReadings(request);
  const readings = pathReadings(new URL(request.url).pathname);
  return policy.rules.some(
    (rule) =>
      methods.some((method) => rule.methods.includes(method as ConnectorHttpMethod)) &&
      anyMatch(patternReadings(rule.path), readings),
  );
}
