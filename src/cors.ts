import type { CORSOptions } from 'graphql-yoga';

/**
 * Cross-origin access for the configured origins only, with credentials; no CORS headers at all for any
 * other origin (yoga's default would reflect every origin and allow credentials).
 */
export function corsPolicy(origins: readonly string[]): false | ((request: Request) => CORSOptions) {
  if (origins.length === 0) return false;
  const allowed: CORSOptions = {
    // The whole list: with more than one origin yoga answers the request's own and adds `Vary: Origin`.
    origin: [...origins],
    credentials: true,
    methods: ['GET', 'POST', 'PUT', 'OPTIONS'],
    allowedHeaders: ['authorization', 'content-type', 'accept', 'x-request-id', 'if-match', 'if-none-match'],
    exposedHeaders: ['X-Request-ID', 'ETag', 'Retry-After', 'WWW-Authenticate'],
    maxAge: 600,
  };
  return (request) => {
    const origin = request.headers.get('origin');
    return origin && origins.includes(origin) ? allowed : false;
  };
}
