import type { Plugin } from 'graphql-yoga';
import { authenticate } from '../auth/request.js';
import type { TokenVerifier } from '../auth/tokens.js';

export interface UseAuthenticationOptions {
  /** Verifies bearer tokens (the instance's configured verifier). */
  tokens: TokenVerifier;
}

/**
 * Verifies the caller before anything else looks at the request, so the rate limit, the body limit and
 * the response cache are keyed by a verified credential and never by raw header text. A refused token
 * does not end the request here: the context answers it 401 (after the rate limit had its say).
 */
export function useAuthentication({ tokens }: UseAuthenticationOptions): Plugin {
  return {
    async onRequest({ request, serverContext }) {
      await authenticate(request, serverContext, tokens);
    },
  };
}
