export const CONNECTOR_HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type ConnectorHttpMethod = (typeof CONNECTOR_HTTP_METHODS)[number];

export const CONNECTOR_AUTH_TYPES = [
  'none',
  'api_key',
  'bearer',
  'basic',
  'oauth2_client_credentials',
] as const;
export type ConnectorAuthType = (typeof CONNECTOR_AUTH_TYPES)[number];

export const ENDPOINT_PATH_MAX_LENGTH = 2048;

const CONTROL_CHARACTER = /\p{Cc}/u;
const ENCODED_ASCII = /%([0-7][0-9a-f])/giu;

/**
 * Decodes percent-encoded ASCII until nothing changes, so double encoding (`%252e`) cannot hide a dot,
 * slash or backslash from a server that decodes more than once. Non-ASCII bytes stay encoded.
 */
function decodeAsciiRepeatedly(value: string): string {
  let current = value;
  for (;;) {
    const next = current.replace(ENCODED_ASCII, (_match, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
    if (next === current) return current;
    current = next;
  }
}

function isDotDotSegment(segment: string): boolean {
  // Some servers drop matrix parameters before resolving dot segments ("..;x" acts as "..").
  const withoutParameters = segment.split(';', 1)[0] ?? '';
  return withoutParameters === '..';
}

/**
 * Checks the `path` of a connector endpoint and returns the reason for the first problem, or null when it is
 * acceptable. The path must start with `/`, be at most 2048 characters, and contain no control characters,
 * backslashes, `..` segments, `://`, or leading `//` (which would make it a scheme-relative URL naming another
 * host). These are checked on the text and again after decoding percent-encoded ASCII repeatedly, so `%2e%2e`,
 * `%5c`, `%00` and their double encodings are refused too. A query string is allowed.
 */
export function checkEndpointPath(path: string): string | null {
  if (path.length === 0) return 'path must not be empty';
  if (path.length > ENDPOINT_PATH_MAX_LENGTH) {
    return `path must be at most ${ENDPOINT_PATH_MAX_LENGTH} characters`;
  }
  if (!path.startsWith('/')) return 'path must start with /';
  if (CONTROL_CHARACTER.test(path)) return 'path must not contain control characters';

  const decoded = decodeAsciiRepeatedly(path);
  if (CONTROL_CHARACTER.test(decoded)) return 'path must not contain encoded control characters';
  if (decoded.includes('\\')) return 'path must not contain backslashes';
  if (decoded.startsWith('//')) return 'path must not start with //';
  if (decoded.includes('://')) return 'path must not contain a scheme (://)';
  if (decoded.normalize('NFKC').split(/[/?#]/u).some(isDotDotSegment)) {
    return 'path must not contain .. segments';
  }
  return null;
}
