import type { ExecutionResult, GraphQLError } from 'graphql';
import { httpHeadersOf, restErrorResponse, statusOfCode } from '../src/errors.js';
import type { ValidationDetail } from '../src/validation/index.js';
import { inputRefusalOf, type ParsedRestRequest, RestError, toRestDetail } from './parse.js';

/** A refusal as REST answers it: `{"detail"}`, with its status and headers. */
export const restErrorAnswer = (error: RestError): Response =>
  restErrorResponse(error.status, error.detail, error.headers);

/** Retry-After (429, 503) as the error's HTTP headers carry it, or a resolver's RATE_LIMITED its extensions. */
function retryAfterOf(errors: readonly GraphQLError[]): string | undefined {
  for (const error of errors) {
    const header = httpHeadersOf(error)['Retry-After'];
    if (header !== undefined) return header;
  }
  const seconds = errors[0]?.extensions?.retryAfter;
  return seconds !== undefined && seconds !== null ? String(seconds) : undefined;
}

/** The REST refusal of a failed operation: its input's, if it has one, else its first error's. */
function refusalOf(parsed: ParsedRestRequest, errors: readonly GraphQLError[]): RestError {
  const refusal = inputRefusalOf(parsed);
  if (refusal) return refusal;
  const error = errors[0] as GraphQLError;
  const code = error.extensions?.code;
  if (code === 'BAD_USER_INPUT' && Array.isArray(error.extensions?.detail)) {
    return new RestError(
      422,
      toRestDetail(parsed.compiled, error.extensions.detail as ValidationDetail[], parsed.body),
    );
  }
  const status = statusOfCode(code) ?? 500;
  const retryAfter = retryAfterOf(errors);
  return new RestError(
    status,
    status === 500 ? 'Internal Server Error' : error.message,
    retryAfter !== undefined ? { 'Retry-After': retryAfter } : {},
  );
}

/**
 * The REST answer writer: the route's status, body (`respond`) and headers on success (or its
 * `alternative` answer, e.g. 202 for a call kept for approval); on failure the
 * status of the error's code, `{"detail"}` with its message, or Pydantic-style items with REST `loc`s.
 */
export function writeRestAnswer(
  parsed: ParsedRestRequest,
  result: ExecutionResult,
  requestId: string,
): Response {
  const { route } = parsed.compiled;
  if (result.errors?.length) return restErrorAnswer(refusalOf(parsed, result.errors));
  const data = result.data as never;
  if (route.alternative?.when(data)) {
    return Response.json(route.alternative.respond(data), { status: route.alternative.status });
  }
  return Response.json(route.respond(data, { requestId }), {
    status: route.status,
    headers: route.headers?.(data) ?? {},
  });
}
