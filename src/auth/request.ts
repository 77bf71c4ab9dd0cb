import type { TokenVerifier } from './tokens.js';
import { AuthenticationError } from './tokens.js';
import type { Viewer } from './viewer.js';

/** What the credential of one request proved, decided once per request. */
export type Authentication =
  | { status: 'anonymous' }
  | { status: 'verified'; viewer: Viewer }
  | { status: 'failed'; error: AuthenticationError };

const pending = new WeakMap<Request, Promise<Authentication>>();
const settled = new WeakMap<Request, Authentication>();

/**
 * Verifies the request's bearer credential (or takes the viewer a transport already verified, as
 * graphql-ws does for each operation of a socket). Memoized per request: the rate limit, the body limit, the response cache and the
 * context all see the same outcome of one verification.
 */
export function authenticateRequest(
  tokens: TokenVerifier,
  request: Request,
  verifiedViewer?: Viewer,
): Promise<Authentication> {
  let outcome = pending.get(request);
  if (!outcome) {
    outcome = decide(tokens, request, verifiedViewer).then((result) => {
      settled.set(request, result);
      return result;
    });
    pending.set(request, outcome);
  }
  return outcome;
}

async function decide(
  tokens: TokenVerifier,
  request: Request,
  verifiedViewer?: Viewer,
): Promise<Authentication> {
  if (verifiedViewer) return { status: 'verified', viewer: verifiedViewer };
  const authorization = request.headers.get('authorization');
  if (!authorization) return { status: 'anonymous' };
  try {
    return { status: 'verified', viewer: await tokens.verify(authorization) };
  } catch (error) {
    if (error instanceof AuthenticationError) return { status: 'failed', error };
    throw error;
  }
}

/** The outcome of a request's authentication once decided (undefined before, e.g. for WebSocket operations). */
export function authenticationOf(request: Request): Authentication | undefined {
  return settled.get(request);
}

/** The verified caller of a request, or null (anonymous, refused, or not yet authenticated). */
export function verifiedViewerOf(request: Request): Viewer | null {
  const outcome = settled.get(request);
  return outcome?.status === 'verified' ? outcome.viewer : null;
}
