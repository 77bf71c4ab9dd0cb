import type { Plugin, YogaServerInstance } from 'graphql-yoga';
import { authenticateRequest } from '../src/auth/request.js';
import type { Context, ServerContext } from '../src/context.js';
import { requestIdOf } from '../src/plugins/use-request-id.js';
import { schema } from '../src/schema/index.js';
import type { Services } from '../src/services.js';
import { renderDocsPage } from './docs-page.js';
import { type CompiledRoute, compileRoute, executeRoute, RestError } from './execute.js';
import { buildOpenApiDocument } from './openapi.js';
import { routes } from './routes.js';

const API_PREFIX = '/api/v1';

function errorResponse(error: RestError): Response {
  const headers: Record<string, string> = { ...error.headers };
  if (error.status === 401) headers['WWW-Authenticate'] = 'Bearer';
  return Response.json({ detail: error.detail }, { status: error.status, headers });
}

/** A path segment as text; null when its percent-encoding is broken (no route has such a path: 404). */
function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function match(compiled: readonly CompiledRoute[], method: string, pathname: string) {
  const allowed = new Set<string>();
  for (const candidate of compiled) {
    const found = candidate.pattern.exec(pathname);
    if (!found) continue;
    if (candidate.route.method === method) {
      const decoded = candidate.pathParams.map((name, index) => [
        name,
        decodeSegment(found[index + 1] ?? ''),
      ]);
      if (decoded.some(([, value]) => value === null)) return { allowed: [] };
      return { candidate, params: Object.fromEntries(decoded) as Record<string, string> };
    }
    allowed.add(candidate.route.method);
  }
  return { allowed: [...allowed] };
}

/** Serves the `/api/v1` compatibility routes, the OpenAPI document and `/docs`, by running GraphQL operations. */
export function useRest(
  services: Services,
  getYoga: () => YogaServerInstance<ServerContext, Context>,
): Plugin<Context> {
  const compiled = routes.map((route) => compileRoute(route, schema));
  // Built on first request, not at start: zod's JSON Schema conversion is a measurable part of a restart.
  let openApi: ReturnType<typeof buildOpenApiDocument> | undefined;
  let docsPage: string | undefined;
  const openApiDocument = () => {
    openApi ??= buildOpenApiDocument(compiled);
    return openApi;
  };

  return {
    async onRequest({ request, url, endResponse }) {
      if (url.pathname === '/docs' && request.method === 'GET') {
        docsPage ??= renderDocsPage(openApiDocument());
        endResponse(new Response(docsPage, { headers: { 'content-type': 'text/html; charset=utf-8' } }));
        return;
      }
      if (url.pathname !== API_PREFIX && !url.pathname.startsWith(`${API_PREFIX}/`)) return;
      if (url.pathname === `${API_PREFIX}/openapi.json` && request.method === 'GET') {
        endResponse(Response.json(openApiDocument()));
        return;
      }
      try {
        const found = match(compiled, request.method, url.pathname);
        if (!('candidate' in found) || !found.candidate) {
          throw found.allowed.length > 0
            ? new RestError(405, 'Method Not Allowed', { Allow: found.allowed.join(', ') })
            : new RestError(404, 'Not Found');
        }
        // The outcome use-authentication already decided for this request: one verification per request.
        const outcome = await authenticateRequest(services.tokens, request);
        if (outcome.status === 'failed') throw new RestError(401, outcome.error.message);
        if (outcome.status === 'anonymous') throw new RestError(401, 'Not authenticated');
        const { viewer } = outcome;
        endResponse(
          await executeRoute(found.candidate, request, found.params ?? {}, {
            yoga: getYoga(),
            viewer,
            requestId: requestIdOf(request),
            admitted: () => services.tenants.ensure(viewer.tenantId),
          }),
        );
      } catch (error) {
        if (error instanceof RestError) {
          endResponse(errorResponse(error));
          return;
        }
        if (services.unavailableCause(error)) {
          const retryAfter = services.config.retryAfterSeconds;
          endResponse(
            errorResponse(
              new RestError(503, `Service temporarily unavailable; retry in ${retryAfter} s`, {
                'Retry-After': String(retryAfter),
              }),
            ),
          );
          return;
        }
        services.logger.error(
          { err: error, requestId: requestIdOf(request) },
          'unexpected error in REST route',
        );
        endResponse(Response.json({ detail: 'Internal Server Error' }, { status: 500 }));
      }
    },
  };
}
