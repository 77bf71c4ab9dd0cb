import type { ExecutionResult, GraphQLError } from 'graphql';
import { createGraphQLError } from 'graphql-yoga';
import { DomainError, type ErrorCode } from './domain/errors.js';
import type { ValidationDetail } from './validation/pydantic.js';

export type { ErrorCode } from './domain/errors.js';

/** HTTP status of each error code: GraphQL over HTTP and REST answer with these. */
export const statusOf: Record<ErrorCode, number> = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  BAD_USER_INPUT: 422,
  BAD_REQUEST: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  RESUME_POINT_EXPIRED: 410,
  NOT_CONFIGURED: 503,
  /** A connector call the egress guard would not make (address, scheme or redirect). */
  EGRESS_REFUSED: 502,
  /** A connector's server could not be reached or answered unusably (DNS, TLS, connection, size cap). */
  UPSTREAM_FAILED: 502,
  /** A connector's server did not connect, answer or finish its body in time. */
  UPSTREAM_TIMEOUT: 504,
  SERVICE_UNAVAILABLE: 503,
};

export function serviceError(
  code: ErrorCode,
  message: string,
  extra: { headers?: Record<string, string>; extensions?: Record<string, unknown> } = {},
) {
  return createGraphQLError(message, {
    extensions: {
      code,
      ...extra.extensions,
      http: { status: statusOf[code], ...(extra.headers ? { headers: extra.headers } : {}) },
    },
  });
}

/**
 * The one mapping of a domain refusal to the GraphQL error clients get (and so to REST's and MCP's answers):
 * its code with that code's status, its reason and facts as extensions, its headers as HTTP headers; placed
 * where graphql-js located it (`located`: the field's error, for its path and locations).
 */
export function graphQLErrorOf(error: DomainError, located?: GraphQLError): GraphQLError {
  const headers = error.headers();
  const reason = error.reason === undefined ? {} : { reason: error.reason };
  const { extensions } = serviceError(error.code, error.message, {
    extensions: { ...reason, ...error.facts() },
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
  });
  return createGraphQLError(error.message, {
    nodes: located?.nodes,
    source: located?.source,
    positions: located?.positions,
    path: located?.path,
    extensions,
  });
}

/** A domain refusal anywhere an error is answered (a field's, or one raised outside execution), or null. */
export function domainRefusalOf(error: unknown): GraphQLError | null {
  if (error instanceof DomainError) return graphQLErrorOf(error);
  const original = (error as { originalError?: unknown } | null)?.originalError;
  if (original instanceof DomainError) return graphQLErrorOf(original, error as GraphQLError);
  return null;
}

// Refusals are DomainErrors, made by the helpers of src/domain/errors.ts (forbidden, badRequest,
// unauthenticated, rateLimited, invalidInput…); what follows are the transports' own protocol errors.

/**
 * 503 with Retry-After: the database is unreachable, overloaded or out of disk. Nothing of the request was
 * written (each write is one transaction, and this is raised before it commits).
 */
export const serviceUnavailable = (retryAfterSeconds: number, message = 'Service temporarily unavailable') =>
  serviceError('SERVICE_UNAVAILABLE', `${message}; retry in ${retryAfterSeconds} s`, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });

/**
 * What an unexpected error answers when `unavailableCause` recognises an unreachable, overloaded or full
 * database: 503 SERVICE_UNAVAILABLE with Retry-After (at `path`, for a field's error); null for any other
 * error, which stays masked (500).
 */
export function unavailableErrorOf(
  error: unknown,
  unavailableCause: (error: unknown) => unknown,
  retryAfterSeconds: number,
): GraphQLError | null {
  if (!unavailableCause(error)) return null;
  const unavailable = serviceUnavailable(retryAfterSeconds);
  return createGraphQLError(unavailable.message, {
    extensions: unavailable.extensions,
    path: (error as { path?: readonly (string | number)[] }).path,
  });
}

/**
 * graphql-js's error for a variable or an argument value it could not coerce (`Variable "$x" got invalid
 * value …`, `Variable "$x" of non-null type … must not be null`, `Argument "x" …`): the client's input,
 * even when a scalar threw a plain error on a hostile value.
 */
export function isInputCoercionError(error: GraphQLError): boolean {
  return /^(?:Variable "\$|Argument ")/.test(error.message);
}

/**
 * A result as a client receives it outside HTTP (graphql-ws): without the extensions meant for the HTTP
 * answer (the result's and each error's `http`, an error's `unexpected`), as yoga writes an HTTP body.
 */
export function withoutInternals(result: ExecutionResult): ExecutionResult {
  const { http: _http, ...extensions } = result.extensions ?? {};
  return {
    ...result,
    errors: result.errors?.map((error) => {
      const { http: _http, unexpected: _unexpected, ...rest } = error.extensions ?? {};
      return createGraphQLError(error.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        originalError: error.originalError,
        extensions: Object.keys(rest).length > 0 ? rest : undefined,
      });
    }),
    extensions: Object.keys(extensions).length > 0 ? extensions : undefined,
  };
}

/** The HTTP status an error answers with: its `extensions.http.status`, else its code's, if any. */
export function httpStatusOf(error: GraphQLError): number | undefined {
  const http = error.extensions?.http as { status?: unknown } | undefined;
  if (typeof http?.status === 'number') return http.status;
  const code = error.extensions?.code;
  return typeof code === 'string' && Object.hasOwn(statusOf, code) ? statusOf[code as ErrorCode] : undefined;
}

/** Besides our codes, yoga's own body-size refusal. */
const statusOfForeignCode: Record<string, number> = { REQUEST_ENTITY_TOO_LARGE: 413 };

/** The HTTP status of an error code, ours or yoga's; undefined for any other (or none). */
export function statusOfCode(code: unknown): number | undefined {
  if (typeof code !== 'string') return undefined;
  if (Object.hasOwn(statusOf, code)) return statusOf[code as ErrorCode];
  return Object.hasOwn(statusOfForeignCode, code) ? statusOfForeignCode[code] : undefined;
}

/** The REST routes (and the REST reference's assets) live under this prefix; their errors are `{"detail"}`. */
const REST_PREFIX = '/api/';

/** Whether a path answers errors the REST way (`{"detail"}`) rather than as GraphQL errors. */
export const isRestPath = (pathname: string): boolean => pathname.startsWith(REST_PREFIX);

/** The MCP endpoint (Streamable HTTP); its refusals are JSON-RPC error responses. */
export const MCP_PATH = '/mcp';

/**
 * JSON-RPC error codes of the MCP endpoint's HTTP-level refusals: the MCP SDK's transports use -32000 for
 * a request refused before any message is handled; the other codes are JSON-RPC's own.
 */
export const JSON_RPC = {
  SERVER_ERROR: -32000,
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  INVALID_PARAMS: -32602,
} as const;

/**
 * An MCP refusal answered before any JSON-RPC message is handled (authentication, role, rate limit, body
 * limit, load shedding): a JSON-RPC error response (id null) with the status of the refusal. A 401 names its
 * scheme, and the protected resource's metadata when an external identity provider is configured.
 */
export function mcpErrorResponse(
  status: number,
  message: string,
  headers: Record<string, string> = {},
  fetchAPI: ResponseMaker = globalThis,
  code: number = JSON_RPC.SERVER_ERROR,
): Response {
  return fetchAPI.Response.json(
    { jsonrpc: '2.0', id: null, error: { code, message } },
    {
      status,
      headers:
        status === 401 && !headers['WWW-Authenticate']
          ? { ...headers, 'WWW-Authenticate': 'Bearer' }
          : headers,
    },
  );
}

/** What a REST error says: a message, or Pydantic-style items (422). */
export type RestDetail = string | ValidationDetail[];

/**
 * Whose Response answers: the platform's, or its bytes (REST routes: rest/answer.ts jsonAnswer), or yoga's fetch
 * API (plugins), as each always did.
 */
type ResponseMaker = { Response: Pick<typeof Response, 'json'> };

/** A REST error answer: `{"detail"}` with its status; a 401 names its scheme (`WWW-Authenticate: Bearer`). */
export function restErrorResponse(
  status: number,
  detail: RestDetail,
  headers: Record<string, string> = {},
  fetchAPI: ResponseMaker = globalThis,
): Response {
  const all: Record<string, string> = { ...headers };
  if (status === 401) all['WWW-Authenticate'] = 'Bearer';
  return fetchAPI.Response.json({ detail }, { status, headers: all });
}

/** The paths of A2A's HTTP+JSON binding (`/a2a/{tenantId}/{role}/rest/…`): errors as google.rpc.Status. */
export const isA2aRestPath = (pathname: string): boolean =>
  /^\/a2a\/[^/]+\/[^/]+\/rest(?:\/|$)/.test(pathname);

/** The media type of every answer of A2A's HTTP+JSON binding but its streams (the SDK's REST server's). */
export const A2A_JSON_CONTENT_TYPE = 'application/a2a+json';

/**
 * The google.rpc.Code name of an HTTP status, as A2A's HTTP+JSON binding writes it in `error.status`: the SDK's
 * REST server names 400, 404 and 500 so, and everything else UNKNOWN; the statuses it never answers (ours:
 * authentication, rate limit, overload) take google's own mapping.
 */
const RPC_STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};
export const rpcStatusNameOf = (status: number): string => RPC_STATUS_NAMES[status] ?? 'UNKNOWN';

/**
 * An error of A2A's HTTP+JSON binding, as the SDK's REST server writes it: `{"error": {code, status, message,
 * details}}` with the HTTP status as `code`. A 401 names its scheme.
 */
export function a2aRestErrorResponse(
  status: number,
  message: string,
  headers: Record<string, string> = {},
  fetchAPI: ResponseMaker = globalThis,
  body: { status?: string; details?: unknown[] } = {},
): Response {
  const all: Record<string, string> = { ...headers, 'Content-Type': A2A_JSON_CONTENT_TYPE };
  if (status === 401 && !all['WWW-Authenticate']) all['WWW-Authenticate'] = 'Bearer';
  const error = {
    code: status,
    status: body.status ?? rpcStatusNameOf(status),
    message,
    details: body.details ?? [],
  };
  return fetchAPI.Response.json({ error }, { status, headers: all });
}

/**
 * A refusal written before any GraphQL runs (rate limit, load shedding, body limit): `{"detail"}` on REST
 * paths, A2A's error body on its HTTP+JSON binding, a JSON-RPC error on the MCP endpoint and A2A's JSON-RPC
 * one, a GraphQL error with its code elsewhere, with the code's status either way.
 */
export function refusalResponse(
  pathname: string,
  code: ErrorCode,
  message: string,
  headers: Record<string, string>,
  fetchAPI: ResponseMaker,
): Response {
  const status = statusOf[code];
  if (isRestPath(pathname)) return restErrorResponse(status, message, headers, fetchAPI);
  if (isA2aRestPath(pathname)) return a2aRestErrorResponse(status, message, headers, fetchAPI);
  // The MCP endpoint and the A2A endpoints (`/a2a/…`) speak JSON-RPC.
  if (pathname === MCP_PATH || pathname.startsWith('/a2a/')) {
    return mcpErrorResponse(status, message, headers, fetchAPI);
  }
  return fetchAPI.Response.json({ errors: [{ message, extensions: { code } }] }, { status, headers });
}

/** The headers an error asks its HTTP answer to carry (`extensions.http.headers`). */
export function httpHeadersOf(error: GraphQLError): Record<string, string> {
  const http = error.extensions?.http as { headers?: Record<string, string> } | undefined;
  return { ...http?.headers };
}

/**
 * A GraphQL error answered the REST way: its code's status, its message as `detail` (an error without a known
 * code is internal: 500, its message hidden), its HTTP headers.
 */
export function restErrorResponseOf(error: GraphQLError): Response {
  const status = statusOfCode(error.extensions?.code) ?? 500;
  const detail = status === 500 ? 'Internal Server Error' : error.message;
  return restErrorResponse(status, detail, withoutAuthenticate(httpHeadersOf(error)));
}

/** restErrorResponse adds the scheme of a 401 itself, after the other headers. */
function withoutAuthenticate(headers: Record<string, string>): Record<string, string> {
  const { 'WWW-Authenticate': _scheme, ...rest } = headers;
  return rest;
}
