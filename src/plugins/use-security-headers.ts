import type { Plugin } from 'graphql-yoga';
import { pageSecurityHeaders } from '../pages/security.js';

/**
 * The one place browser protections are set: `X-Content-Type-Options: nosniff` on every response, and on
 * every HTML page (the landing page, `/docs`, GraphiQL, the dashboard, any other) its Content-Security-
 * Policy with `frame-ancestors 'none'`, `X-Frame-Options: DENY` and `Referrer-Policy: no-referrer`, as
 * src/pages/security.ts derives them for its path.
 */
export function useSecurityHeaders(): Plugin {
  return {
    onResponse({ request, response }) {
      response.headers.set('x-content-type-options', 'nosniff');
      if (!response.headers.get('content-type')?.startsWith('text/html')) return;
      for (const [name, value] of Object.entries(pageSecurityHeaders(new URL(request.url).pathname))) {
        response.headers.set(name, value);
      }
    },
  };
}
