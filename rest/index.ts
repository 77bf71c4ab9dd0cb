import type { ExecutionResult } from 'graphql';
import { GraphQLError } from 'graphql';
import type { Plugin, YogaServer } from 'graphql-yoga';
import { authenticate } from '../src/auth/request.js';
import type { Context, ServerContext } from '../src/context.js';
import { restErrorResponse, restErrorResponseOf, unavailableErrorOf } from '../src/errors.js';
import { idempotencyHeadersOf } from '../src/http/idempotency-key.js';
import { requestIdOf } from '../src/http/request-id.js';
import { schema } from '../src/schema/index.js';
import type { Services } from '../src/services.js';
import { restErrorAnswer, writeRestAnswer } from './answer.js';
import { allows, compileRoute, matchRoute } from './compile.js';
import { renderDocsPage } from './docs-page.js';
import { buildOpenApiDocument } from './openapi.js';
import { parseRestRequest, RestError } from './parse.js';
import { routes } from './routes.js';

const API_PREFIX = '/api/v1';

/** The route table compiled once: each route's operation, roles, argument rules and path pattern. */
export const compiledRoutes = routes.map((route) => compileRoute(route, schema));

/**
 * The body limit the route a request goes to declares (`maxBodyBytes` beside the route), for the intake's
 * limit decided when the request arrives; undefined for a path and method no route takes.
 */
export function restBodyLimit(method: string, pathname: string): number | undefined {
  return compiledRoutes.find(({ route, pattern }) => route.method === method && pattern.test(pathname))?.route
    .maxBodyBytes;
}

/** Serves the `/api/v1` compatibility routes, the OpenAPI document and `/docs`, by running GraphQL operations. */
export function useRest(services: Services): Plugin<Context> {
  const compiled = compiledRoutes;
  // Built on first request, not at start: zod's JSON Schema conversion is a measurable part of a restart.
  let openApi: ReturnType<typeof buildOpenApiDocument> | undefined;
  let docsPage: string | undefined;
  const openApiDocument = () => {
    openApi ??= buildOpenApiDocument(compiled);
    return openApi;
  };
  let server: YogaServer<ServerContext, Context> | undefined;

  /**
   * One REST request, start to end, in yoga's own steps: the REST parser stands where yoga's GET, POST and
   * multipart parsers stand, `getResultForParams` runs the onParams hooks, the enveloped operation (context,
   * roles, input rules, resolver) and the onExecutionResult hooks, and the REST answer writer stands where
   * yoga's result processors stand. Not `yoga.handle`: yoga refuses PUT, PATCH and DELETE before parsing.
   */
  async function answer(request: Request, url: URL, serverContext: ServerContext): Promise<Response> {
    const found = matchRoute(compiled, request.method, url.pathname);
    if (!found.candidate) {
      throw found.allowed.length > 0
        ? new RestError(405, 'Method Not Allowed', { Allow: found.allowed.join(', ') })
        : new RestError(404, 'Not Found');
    }
    // The outcome use-authentication already decided for this request: one verification per request.
    const outcome = await authenticate(request, serverContext, services.tokens);
    if (outcome.status === 'failed') throw new RestError(401, outcome.error.message);
    if (outcome.status === 'anonymous') throw new RestError(401, 'Not authenticated');
    if (!allows(found.candidate, outcome.viewer)) throw new RestError(403, 'Not allowed for your role');
    const parsed = await parseRestRequest(found.candidate, request, url, found.params);
    if (!server) throw new Error('the REST transport runs inside a yoga server');
    let result: ExecutionResult;
    try {
      result = (await server.getResultForParams(
        { params: parsed.params, request },
        serverContext,
      )) as ExecutionResult;
    } catch (error) {
      // An onParams hook's refusal (the database budget: 503), answered like the operation's own errors.
      if (!(error instanceof GraphQLError)) throw error;
      result = { errors: [error] };
    }
    const response = writeRestAnswer(parsed, result, requestIdOf(request), server.fetchAPI.Response);
    for (const [name, value] of Object.entries(idempotencyHeadersOf(result)))
      response.headers.set(name, value);
    return response;
  }

  return {
    onYogaInit({ yoga }) {
      server = yoga as unknown as YogaServer<ServerContext, Context>;
    },
    async onRequest({ request, url, endResponse, serverContext, fetchAPI }) {
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
        endResponse(await answer(request, url, serverContext as ServerContext));
      } catch (error) {
        if (error instanceof RestError) {
          endResponse(restErrorAnswer(error, fetchAPI.Response));
          return;
        }
        const unavailable = unavailableErrorOf(
          error,
          services.unavailableCause,
          services.config.retryAfterSeconds,
        );
        if (unavailable) {
          endResponse(restErrorResponseOf(unavailable));
          return;
        }
        services.logger.error(
          { err: error, requestId: requestIdOf(request) },
          'unexpected error in REST route',
        );
        endResponse(restErrorResponse(500, 'Internal Server Error'));
      }
    },
  };
}
