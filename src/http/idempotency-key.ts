import type { ExecutionResult } from 'graphql';

/** The request header that carries a key (draft-ietf-httpapi-idempotency-key-header). */
export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
/** The answer header of a replayed first answer. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';
/** The longest key accepted, in characters (printable ASCII). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * The refusals of a key (docs/idempotency.md): a reason (`extensions.reason` on GraphQL and MCP) and the
 * message every face answers (REST's `detail`), which names the reason too.
 */
export const IDEMPOTENCY_REFUSALS = {
  invalid: {
    reason: 'idempotency_key_invalid',
    message: `Idempotency-Key must be a quoted string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters (idempotency_key_invalid)`,
  },
  reused: {
    reason: 'idempotency_key_reused',
    message: 'This Idempotency-Key was used for a different request: send a new key (idempotency_key_reused)',
  },
  inFlight: {
    reason: 'idempotency_key_in_flight',
    message:
      'A request with this Idempotency-Key is still being processed: retry later for its answer (idempotency_key_in_flight)',
  },
} as const;

/** A key's characters: printable ASCII, space included inside a quoted key. */
const QUOTED = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
const BARE = /^[\x21\x23-\x2b\x2d-\x7e]+$/;

/**
 * The key a header value carries: the draft's form, a Structured Field String (`"8e03978e-…"`, with `\"`
 * and `\\` escapes), or the same characters unquoted (a token, as many clients send it). Null when it is
 * neither, is empty, is longer than the limit, or is a list (two header lines, or `"a", "b"`).
 */
export function idempotencyKeyOf(value: string): string | null {
  const trimmed = value.trim();
  const quoted = QUOTED.exec(trimmed);
  const key = quoted
    ? (quoted[1] as string).replace(/\\(["\\])/g, '$1')
    : BARE.test(trimmed)
      ? trimmed
      : null;
  if (key === null || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) return null;
  return key;
}

/** The headers a result asks its HTTP answer to carry for idempotency (REST writes its own answers). */
export function idempotencyHeadersOf(result: ExecutionResult): Record<string, string> {
  const headers = (result.extensions?.http as { headers?: Record<string, string> } | undefined)?.headers;
  const value = headers?.[IDEMPOTENT_REPLAYED_HEADER];
  return value === undefined ? {} : { [IDEMPOTENT_REPLAYED_HEADER]: value };
}
