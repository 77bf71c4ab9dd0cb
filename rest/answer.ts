import type { ExecutionResult, GraphQLError } from 'graphql';
import { httpHeadersOf, restErrorResponse, statusOfCode } from '../src/errors.js';
import type { ValidationDetail } from '../src/validation/index.js';
import { inputRefusalOf, type ParsedRestRequest, RestError, toRestDetail } from './parse.js';

/** The Response class of the server that writes the answer (yoga's fetch API). */
export type ResponseClass = typeof Response;

/**
 * A JSON answer with exactly the bytes the platform's `Response.json` gives it (REST answers have always been
 * written that way): `content-type: application/json`, the platform's headers in their order, no reason
 * phrase, the body chunked. It is made with yoga's Response, whose string body the server writes at once:
 * the platform's makes a stream of the body, which the server then reads chunk by chunk.
 */
export function jsonAnswer(
  ResponseOf: ResponseClass,
  data: unknown,
  init: { status: number; headers?: Record<string, string> },
): Response {
  if (ResponseOf === globalThis.Response) return Response.json(data, init);
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  const response = new ResponseOf(JSON.stringify(data), { status: init.status, headers });
  // yoga's Response declares the length and names the status; the platform's did neither.
  headers.delete('content-length');
  (response as { statusText: string }).statusText = '';
  return response;
}

/** A refusal as REST answers it: `{"detail"}`, with its status and headers. */
export const restErrorAnswer = (error: RestError, ResponseOf: ResponseClass = Response): Response =>
  restErrorResponse(error.status, error.detail, error.headers, {
    Response: { json: (data: unknown, init?: ResponseInit) => jsonAnswer(ResponseOf, data, init as never) },
  });

/** Retry-After (429, 503) as the error's HTTP headers carry it, or a resolver's RATE_LIMITED its extensions. */
function retryAfterOf(errors: readonly GraphQLError[]): string | undefined {
  for (const error of errors) {
    const header = httpHeadersOf(error)['Retry-After'];
    if (header !== undefined) return header;
  }
  const seconds = errors[0]?.extensions?.retryAfter;
  return seconds !== undefined && seconds !== null ? String(seconds) : undefined;
}

/**
 * The REST refusal of a failed operation. A refusal of its input by the field's rules (BAD_USER_INPUT with
 * items), when they are the route's rules, is answered with the items that run located, re-located to REST
 * `loc`s: the rules are not run a second time. Any other failure (GraphQL may have refused the variables
 * before any rule ran; a field may check other rules than the ones its route documents, as chat does) is
 * checked against the route's rules, unless the parser checked them already; else it is its first error's.
 */
function refusalOf(parsed: ParsedRestRequest, errors: readonly GraphQLError[]): RestError {
  const error = errors[0] as GraphQLError;
  const code = error.extensions?.code;
  const detail =
    code === 'BAD_USER_INPUT' && Array.isArray(error.extensions?.detail)
      ? (error.extensions.detail as ValidationDetail[])
      : undefined;
  const relocated = (items: ValidationDetail[]) =>
    new RestError(422, toRestDetail(parsed.compiled, items, parsed.body));
  if (detail && parsed.compiled.refusesByArgsSchema) return relocated(detail);
  const refusal = parsed.inputChecked ? null : inputRefusalOf(parsed);
  if (refusal) return refusal;
  if (detail) return relocated(detail);
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
  ResponseOf: ResponseClass = Response,
): Response {
  const { route } = parsed.compiled;
  if (result.errors?.length) return restErrorAnswer(refusalOf(parsed, result.errors), ResponseOf);
  const data = result.data as never;
  const missing = route.missing?.(data, parsed.params.variables as never);
  if (missing) return restErrorAnswer(new RestError(404, missing), ResponseOf);
  if (route.alternative?.when(data)) {
    return jsonAnswer(ResponseOf, route.alternative.respond(data), { status: route.alternative.status });
  }
  return jsonAnswer(ResponseOf, route.respond(data, { requestId }), {
    status: route.status,
    headers: route.headers?.(data) ?? {},
  });
}
