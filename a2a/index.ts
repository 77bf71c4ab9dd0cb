import type { Plugin, YogaServer } from 'graphql-yoga';
import { type Execution, executionOf } from '../mcp/execute.js';
import { authenticate } from '../src/auth/request.js';
import type { Context, ServerContext } from '../src/context.js';
import { unavailableErrorOf } from '../src/errors.js';
import { isPayloadTooLarge, MAX_BODY_BYTES, withBody } from '../src/http/body.js';
import { IDEMPOTENCY_KEY_HEADER } from '../src/http/idempotency-key.js';
import { parseJsonBody } from '../src/http/json-body.js';
import { requestIdOf } from '../src/http/request-id.js';
import type { Services } from '../src/services.js';
import { agentCardOf } from './card.js';
import { A2A_ERRORS, A2aError, compileA2aOperations, jsonRpcError } from './errors.js';
import { type MethodContext, methods } from './methods.js';
import { answerRestBinding } from './rest-binding.js';
import { restTargetOf } from './rest-routes.js';
import { streamingMethods } from './stream.js';

/** Where every role's A2A endpoint and card live: `/a2a/{tenantId}/{role}`. */
export const A2A_PREFIX = '/a2a/';
const CARD_SUFFIX = '/.well-known/agent-card.json';
/** The largest JSON-RPC message an A2A endpoint reads (a message's file parts included). */
const A2A_MAX_BODY_BYTES = MAX_BODY_BYTES;

/** The body limit the A2A endpoints declare, for the intake's limit decided when a request arrives. */
export function a2aBodyLimit(_method: string, pathname: string): number | undefined {
  return pathname.startsWith(A2A_PREFIX) ? A2A_MAX_BODY_BYTES : undefined;
}

/** Every operation the A2A methods run, for the metrics' operation names. */
export const a2aOperations = () => compileA2aOperations().operations;

interface Target {
  tenantId: string;
  role: string;
  card: boolean;
}

/** The tenant and role a path names, and whether it asks for the card; null for no A2A path. */
function targetOf(pathname: string): Target | null {
  const card = pathname.endsWith(CARD_SUFFIX);
  const rest = pathname.slice(A2A_PREFIX.length, card ? -CARD_SUFFIX.length : undefined);
  const segments = rest.split('/');
  if (segments.length !== 2 || segments.some((segment) => segment === '')) return null;
  try {
    const [tenantId, role] = segments.map(decodeURIComponent) as [string, string];
    return { tenantId, role, card };
  } catch {
    return null;
  }
}

/** Whether the request speaks a protocol version this endpoint serves (none named: the client's choice, 1.0). */
function versionRefusal(request: Request): A2aError | undefined {
  const version = request.headers.get('A2A-Version');
  if (version === null || version === '' || /^1(\.\d+)?$/.test(version.trim())) return undefined;
  return new A2aError(
    A2A_ERRORS.VERSION_NOT_SUPPORTED,
    `A2A protocol version ${version} is not supported: 1.0 is`,
  );
}

/**
 * Serves each agent role of each tenant as an A2A agent (docs/a2a.md): its Agent Card at
 * `/a2a/{tenantId}/{role}/.well-known/agent-card.json`, the JSON-RPC binding at `/a2a/{tenantId}/{role}` and
 * the HTTP+JSON binding under `/a2a/{tenantId}/{role}/rest` (rest-binding.ts).
 * Every method runs GraphQL operations through this yoga server, as REST routes and MCP tools do; the tenant in
 * the path must be the caller's (another tenant's path answers as a role that does not exist).
 */
export function useA2a(services: Services): Plugin<Context> {
  const compiled = compileA2aOperations();
  const auth = { issuer: services.config.auth.jwksUrl ? services.config.auth.issuer : undefined };
  let server: YogaServer<ServerContext, Context> | undefined;
  const challenge = { 'WWW-Authenticate': 'Bearer' };

  async function answerCard(request: Request, url: URL, target: Target, serverContext: ServerContext) {
    if (request.method !== 'GET') {
      return new Response(null, { status: 405, headers: { Allow: 'GET' } });
    }
    const outcome = await authenticate(request, serverContext, services.tokens);
    const publicCard = () => Response.json(agentCardOf(url.origin, target.tenantId, target.role, auth));
    // Anonymous callers and other tenants' get the public card: it is the same for any path.
    if (outcome.status !== 'verified' || outcome.viewer.tenantId !== target.tenantId) return publicCard();
    if (!server) throw new Error('the A2A face runs inside a yoga server');
    const result = await executionOf(server, request, serverContext).run({
      ...compiled.agentRole,
      variables: { role: target.role },
    });
    const agent = (result.data as { agent?: Parameters<typeof agentCardOf>[4] | null } | undefined)?.agent;
    if (result.errors?.length || !agent) return publicCard();
    return Response.json(agentCardOf(url.origin, target.tenantId, target.role, auth, agent));
  }

  /** What a method runs with, for one request of either binding. */
  function methodContextOf(
    request: Request,
    url: URL,
    target: Pick<Target, 'tenantId' | 'role'>,
    serverContext: ServerContext,
  ): MethodContext {
    if (!server) throw new Error('the A2A face runs inside a yoga server');
    const yoga = server;
    const execution = executionOf(yoga, request, serverContext);
    const keyedExecution = (key: string): Execution => {
      // The client's own Idempotency-Key wins; else the message's id keys it (docs/idempotency.md).
      if (request.headers.has(IDEMPOTENCY_KEY_HEADER)) return execution;
      const headers = new Headers(request.headers);
      headers.set(IDEMPOTENCY_KEY_HEADER, key);
      return executionOf(yoga, new Request(request.url, { method: 'POST', headers }), serverContext);
    };
    return {
      origin: url.origin,
      tenantId: target.tenantId,
      role: target.role,
      auth,
      execution,
      keyedExecution,
      compiled,
    };
  }

  /** Why a request's caller may not use the path's tenant's agents: 401 without a verified token, 404 for another tenant's. */
  async function callerRefusal(
    request: Request,
    serverContext: ServerContext,
    tenantId: string,
  ): Promise<A2aError | undefined> {
    const outcome = await authenticate(request, serverContext, services.tokens);
    if (outcome.status !== 'verified') {
      const message = outcome.status === 'failed' ? outcome.error.message : 'Not authenticated';
      return new A2aError(A2A_ERRORS.SERVER_ERROR, message, undefined, { status: 401, headers: challenge });
    }
    if (outcome.viewer.tenantId !== tenantId) {
      return new A2aError(A2A_ERRORS.SERVER_ERROR, 'No such agent', undefined, { status: 404 });
    }
    return undefined;
  }

  /** An unexpected failure of either binding as its answer: 503 with Retry-After while the database is away, else logged and 500. */
  function failureOf(error: unknown, request: Request): A2aError {
    const { retryAfterSeconds } = services.config;
    const unavailable = unavailableErrorOf(error, services.unavailableCause, retryAfterSeconds);
    if (unavailable) {
      return new A2aError(A2A_ERRORS.SERVER_ERROR, unavailable.message, undefined, {
        status: 503,
        headers: { 'Retry-After': String(retryAfterSeconds) },
      });
    }
    services.logger.error({ err: error, requestId: requestIdOf(request) }, 'unexpected error in A2A request');
    return new A2aError(A2A_ERRORS.INTERNAL_ERROR, 'Internal error', undefined, { status: 500 });
  }

  const restBinding = {
    maxBodyBytes: A2A_MAX_BODY_BYTES,
    versionRefusal,
    callerRefusal,
    failureOf,
    contextOf: methodContextOf,
  };

  async function answerRpc(request: Request, url: URL, target: Target, serverContext: ServerContext) {
    if (request.method !== 'POST') {
      return jsonRpcError(
        null,
        new A2aError(A2A_ERRORS.INVALID_REQUEST, 'The A2A endpoint takes POST (JSON-RPC)'),
        405,
        { Allow: 'POST' },
      );
    }
    const refusal = await callerRefusal(request, serverContext, target.tenantId);
    if (refusal) return jsonRpcError(null, refusal);
    let body: unknown;
    try {
      body = await withBody(request, A2A_MAX_BODY_BYTES, parseJsonBody);
    } catch (error) {
      if (isPayloadTooLarge(error)) {
        return jsonRpcError(null, new A2aError(A2A_ERRORS.INVALID_REQUEST, error.message), 413);
      }
      if (error instanceof SyntaxError) {
        return jsonRpcError(null, new A2aError(A2A_ERRORS.PARSE_ERROR, `Parse error: ${error.message}`), 400);
      }
      throw error;
    }
    const envelope = body as { jsonrpc?: unknown; method?: unknown; params?: unknown; id?: unknown };
    const id = envelope && typeof envelope === 'object' && 'id' in envelope ? envelope.id : null;
    const validId = id === null || typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
    if (
      Array.isArray(body) ||
      !body ||
      typeof body !== 'object' ||
      envelope.jsonrpc !== '2.0' ||
      typeof envelope.method !== 'string' ||
      !validId
    ) {
      return jsonRpcError(
        validId ? id : null,
        new A2aError(
          A2A_ERRORS.INVALID_REQUEST,
          'Invalid Request: one JSON-RPC 2.0 request object with a method and an id (no batch)',
        ),
        400,
      );
    }
    const versionError = versionRefusal(request);
    if (versionError) return jsonRpcError(id, versionError);
    const method = methods[envelope.method];
    const streamingMethod = streamingMethods[envelope.method];
    if (!method && !streamingMethod) {
      return jsonRpcError(
        id,
        new A2aError(A2A_ERRORS.METHOD_NOT_FOUND, `Method not found: ${envelope.method}`),
      );
    }
    const params = envelope.params ?? {};
    if (typeof params !== 'object' || Array.isArray(params)) {
      return jsonRpcError(id, new A2aError(A2A_ERRORS.INVALID_PARAMS, 'params must be an object'));
    }
    const tenant = (params as { tenant?: unknown }).tenant;
    if (tenant !== undefined && tenant !== '' && tenant !== target.tenantId) {
      return jsonRpcError(
        id,
        new A2aError(A2A_ERRORS.INVALID_PARAMS, 'tenant must be the tenant of the path'),
      );
    }
    const context = methodContextOf(request, url, target, serverContext);
    try {
      if (streamingMethod) {
        return await streamingMethod(context, params as Record<string, unknown>, {
          id,
          signal: request.signal,
        });
      }
      const result = await method?.(context, params as Record<string, unknown>);
      return Response.json({ jsonrpc: '2.0', id, result });
    } catch (error) {
      if (error instanceof A2aError) return jsonRpcError(id, error);
      throw error;
    }
  }

  return {
    onYogaInit({ yoga }) {
      server = yoga as unknown as YogaServer<ServerContext, Context>;
    },
    async onRequest({ request, url, endResponse, serverContext }) {
      if (!url.pathname.startsWith(A2A_PREFIX)) return;
      const restTarget = restTargetOf(url.pathname);
      if (restTarget) {
        const context = serverContext as ServerContext;
        endResponse(await answerRestBinding(request, url, restTarget, context, restBinding));
        return;
      }
      const target = targetOf(url.pathname);
      if (!target) {
        endResponse(jsonRpcError(null, new A2aError(A2A_ERRORS.SERVER_ERROR, 'Not found'), 404));
        return;
      }
      try {
        const context = serverContext as ServerContext;
        endResponse(
          target.card
            ? await answerCard(request, url, target, context)
            : await answerRpc(request, url, target, context),
        );
      } catch (error) {
        endResponse(jsonRpcError(null, failureOf(error, request)));
      }
    },
  };
}
