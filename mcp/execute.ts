import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { type ExecutionResult, GraphQLError } from 'graphql';
import type { GraphQLParams, YogaServer } from 'graphql-yoga';
import type { Context, ServerContext } from '../src/context.js';
import { httpHeadersOf, httpStatusOf, isInputCoercionError } from '../src/errors.js';
import { IDEMPOTENT_REPLAYED_HEADER } from '../src/http/idempotency-key.js';
import type { ValidationDetail } from '../src/validation/index.js';
import { invalidParams, toToolDetail } from './arguments.js';

/** One MCP request's way into the one yoga server: its operations run as a REST route's do. */
export interface Execution {
  run(params: GraphQLParams<Record<string, unknown>>): Promise<ExecutionResult>;
  /**
   * Runs a subscription the same way: its stream of results, or the result that refused it (no stream slot
   * free, a bad argument). The stream holds what yoga's own subscriptions hold (a stream slot, the token's
   * expiry); returning it gives them back.
   */
  subscribe(
    params: GraphQLParams<Record<string, unknown>>,
  ): Promise<ExecutionResult | AsyncIterableIterator<ExecutionResult>>;
}

/**
 * Runs operations for one MCP HTTP request with yoga's `getResultForParams`: the onParams hooks (the
 * database budget admits the request; the response cache), the context (the caller verified once for the
 * request), scope-auth, the input rules, the field's zod rules and the resolver; no second request.
 */
export function executionOf(
  server: YogaServer<ServerContext, Context>,
  request: Request,
  serverContext: ServerContext,
): Execution {
  const resultOf = async (params: GraphQLParams<Record<string, unknown>>) => {
    try {
      return await server.getResultForParams({ params, request }, serverContext);
    } catch (error) {
      // An onParams hook's refusal (the database budget: 503), answered like the operation's own errors.
      if (!(error instanceof GraphQLError)) throw error;
      return { errors: [error] };
    }
  };
  return {
    run: async (params) => (await resultOf(params)) as ExecutionResult,
    subscribe: async (params) =>
      (await resultOf(params)) as ExecutionResult | AsyncIterableIterator<ExecutionResult>,
  };
}

/** Structured content must be an object: an operation's data is one. */
const toolResult = (structured: Record<string, unknown>): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(structured) }],
  structuredContent: structured,
});

/** What a client needs of a GraphQL error besides its message: code, status, facts, retryAfter (never `http`). */
function errorFacts(error: GraphQLError): Record<string, unknown> {
  const { http: _http, ...extensions } = error.extensions ?? {};
  const status = httpStatusOf(error);
  const retryAfter = httpHeadersOf(error)['Retry-After'];
  return {
    ...(retryAfter !== undefined ? { retryAfter: Number(retryAfter) } : {}),
    ...extensions,
    ...(status !== undefined ? { status } : {}),
  };
}

/**
 * The `_meta` key of a tool result that is the kept first answer of an earlier call with the same
 * `Idempotency-Key`, replayed: what `Idempotent-Replayed: true` says on REST and GraphQL (docs/idempotency.md).
 */
export const REPLAYED_META_KEY = 'boardroom/idempotentReplayed';

/**
 * The MCP answer of an operation's result. Input a rule refused (a BAD_USER_INPUT, a value GraphQL could
 * not coerce) is a JSON-RPC invalid-params error whose `data.detail` items are located at the tool's
 * arguments; any other GraphQL error is a tool result with `isError` and the error's own message (its code
 * and facts in `structuredContent.error`), so the model reads it; success is the operation's data. A
 * replayed answer carries `_meta` REPLAYED_META_KEY.
 */
export function toolResultOf(
  result: ExecutionResult,
  mapping: Record<string, string>,
  respond: (data: Record<string, unknown>) => Record<string, unknown> = (data) => data,
): CallToolResult {
  const http = result.extensions?.http as { headers?: Record<string, string> } | undefined;
  const answer = answerOf(result, mapping, respond);
  return http?.headers?.[IDEMPOTENT_REPLAYED_HEADER] === 'true'
    ? { ...answer, _meta: { ...answer._meta, [REPLAYED_META_KEY]: true } }
    : answer;
}

function answerOf(
  result: ExecutionResult,
  mapping: Record<string, string>,
  respond: (data: Record<string, unknown>) => Record<string, unknown>,
): CallToolResult {
  const error = result.errors?.[0];
  if (!error) return toolResult(respond((result.data ?? {}) as Record<string, unknown>));
  if (error.extensions?.code === 'BAD_USER_INPUT') {
    const detail = error.extensions.detail as ValidationDetail[] | undefined;
    const located = Array.isArray(detail) ? toToolDetail(mapping, detail) : undefined;
    throw invalidParams(
      located ? located.map((item) => `${item.loc.join('.')}: ${item.msg}`).join('; ') : error.message,
      located ? { detail: located } : undefined,
    );
  }
  if (isInputCoercionError(error)) {
    // Refused by GraphQL's own validation before anything ran (a wrong type the tool's schema forbids).
    throw invalidParams(error.message);
  }
  return {
    content: [{ type: 'text', text: error.message }],
    structuredContent: { error: { message: error.message, ...errorFacts(error) } },
    isError: true,
  };
}

/** An unexpected failure, told to the client as JSON-RPC's internal error without its details. */
export const internalError = () => new McpError(ErrorCode.InternalError, 'Internal error');
