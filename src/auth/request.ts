import { requestStateOf } from '../http/request-context.js';
import type { Authentication, TokenVerifier } from './tokens.js';
import { AuthenticationError } from './tokens.js';
import type { Viewer } from './viewer.js';

export type { Authentication } from './tokens.js';

/**
 * The one place a request's caller is asked, by every transport: the bearer credential verified once, or the
 * viewer a transport already verified (graphql-ws passes its socket's viewer as `context.viewer` for each
 * operation). `context` is the request's server context (the GraphQL context to be), where the outcome is
 * kept: the rate limit, the body limit, the response cache, REST, MCP and the context factory all see the
 * same outcome of one verification. useAuthentication asks first, as the request arrives.
 */
export function authenticate(
  request: Request,
  context: object,
  tokens: TokenVerifier,
): Promise<Authentication> {
  const state = requestStateOf(context);
  const passed = (context as { viewer?: Viewer | null }).viewer ?? undefined;
  state.authentication ??= decide(tokens, request, passed).then((outcome) => {
    state.authenticated = outcome;
    return outcome;
  });
  return state.authentication;
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

/** The outcome of a request's authentication once decided (undefined before), from its context. */
export function authenticationOf(context: object): Authentication | undefined {
  return requestStateOf(context).authenticated;
}

/** The verified caller of a request, or null (anonymous, refused, or not yet authenticated), from its context. */
export function verifiedViewerOf(context: object): Viewer | null {
  const outcome = authenticationOf(context);
  return outcome?.status === 'verified' ? outcome.viewer : null;
}
