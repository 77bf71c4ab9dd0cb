import type { ValidationDetail } from '../validation/pydantic.js';

/**
 * The codes of expected refusals. The domain throws them as DomainErrors; src/errors.ts alone knows each
 * code's HTTP status and turns a DomainError into the GraphQL error (and so the REST or MCP answer).
 */
export type ErrorCode =
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'BAD_USER_INPUT'
  | 'BAD_REQUEST'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'RESUME_POINT_EXPIRED'
  | 'NOT_CONFIGURED'
  | 'EGRESS_REFUSED'
  | 'UPSTREAM_FAILED'
  | 'UPSTREAM_TIMEOUT'
  | 'SERVICE_UNAVAILABLE';

/**
 * An expected refusal of a domain operation: a stable `code`, a message for people (never a secret), and the
 * facts a client may read beside it. Knows nothing of GraphQL or HTTP; `headers` are what the refusal asks
 * any answer to carry (`Retry-After`).
 */
export abstract class DomainError extends Error {
  abstract readonly code: ErrorCode;
  /** A stable name of the refusal where a code has several (`extensions.reason` for GraphQL clients). */
  declare readonly reason?: string;
  /** What a client may read beside the message and the reason. */
  facts(): Record<string, unknown> {
    return {};
  }
  /** Headers of the answer (`Retry-After`). */
  headers(): Record<string, string> {
    return {};
  }
  /** The code, the reason and the facts in one record: what a client reads beside the message. */
  get extensions(): Record<string, unknown> {
    return {
      code: this.code,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      ...this.facts(),
    };
  }
}

/** A refusal made on the spot: its code, its message and, where there is one, its reason and facts. */
export class Refusal extends DomainError {
  override name = 'Refusal';
  override readonly reason: string | undefined;
  readonly #facts: Record<string, unknown>;
  readonly #headers: Record<string, string>;
  constructor(
    readonly code: ErrorCode,
    message: string,
    options: { reason?: string; facts?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.reason = options.reason;
    this.#facts = options.facts ?? {};
    this.#headers = options.headers ?? {};
  }
  override facts() {
    return this.#facts;
  }
  override headers() {
    return this.#headers;
  }
}

/**
 * The refusals, one helper each, for the domain and every layer above it alike. A resolver throws them as
 * they are; a transport that answers outside execution turns one into its GraphQL error with
 * `graphQLErrorOf` (src/errors.ts).
 */
/** Not authenticated (401); the answer names the scheme (`WWW-Authenticate: Bearer`). */
export const unauthenticated = (message = 'Not authenticated') =>
  new Refusal('UNAUTHENTICATED', message, { headers: { 'WWW-Authenticate': 'Bearer' } });
export const forbidden = (message = 'Not allowed for your role') => new Refusal('FORBIDDEN', message);
export const notFound = (message: string) => new Refusal('NOT_FOUND', message);
export const badRequest = (message: string) => new Refusal('BAD_REQUEST', message);
export const conflict = (message: string) => new Refusal('CONFLICT', message);
export const preconditionFailed = (message: string) => new Refusal('PRECONDITION_FAILED', message);
/** A connector's server (or its token endpoint) could not be reached or answered nothing usable. */
export const upstreamFailed = (message: string) => new Refusal('UPSTREAM_FAILED', message);
/** A feature the deployment has not configured (e.g. a missing key); the message names the setting. */
export const notConfigured = (message: string) => new Refusal('NOT_CONFIGURED', message);

/**
 * Whoever asked for a decision never makes it (a connector call's approval, an agent's question), whatever
 * roles their token carries: the requester is the tenant and subject that asked.
 */
export const ownRequest = (what: string, sub: string) =>
  new Refusal('FORBIDDEN', `${what} was requested by you (${sub}): someone else decides it`, {
    reason: 'own_request',
  });

/** Too many calls: `retryAfter` seconds, also as the answer's `Retry-After`. */
export const rateLimited = (message: string, retryAfter: number) =>
  new Refusal('RATE_LIMITED', message, {
    facts: { retryAfter },
    headers: { 'Retry-After': String(retryAfter) },
  });

/** Invalid input, with Pydantic-style items; `loc` is relative to the operation's arguments. */
export const invalidInput = (detail: ValidationDetail[]) =>
  new Refusal('BAD_USER_INPUT', detail.map((item) => `${item.loc.join('.')}: ${item.msg}`).join('; '), {
    facts: { detail },
  });
