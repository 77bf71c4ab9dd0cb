import { A2A_JSON_CONTENT_TYPE, isA2aRestPath } from '../src/errors.js';
import { isPayloadTooLarge, withBody } from '../src/http/body.js';
import { parseJsonBody } from '../src/http/json-body.js';
import { A2A_ERRORS, A2aError } from './errors.js';
import type { Params } from './methods.js';
import { restErrorResponse } from './rest-errors.js';

/**
 * A2A's HTTP+JSON binding (protocol 1.0), at `/a2a/{tenantId}/{role}/rest`: a parser of its paths into the
 * methods the JSON-RPC binding runs (methods.ts, stream.ts), with the params those take, and a writer of their
 * answers with the binding's statuses and error body. Paths, query parameters, statuses and bodies are the
 * SDK's REST server's (`restHandler`) and what its client (`RestTransport`) sends: each path also with the
 * tenant before it (`…/rest/{tenant}/message:send`), as the SDK's client writes it when the card's interface
 * names a tenant.
 */

/** The segment after a role's path under which its HTTP+JSON binding lives. */
export const REST_SEGMENT = 'rest';

/** A request of the binding: its role and the path after `rest`, its segments still encoded. */
export interface RestTarget {
  tenantId: string;
  role: string;
  segments: string[];
}

/** The binding's tenant and role a path names, or null for no path of the binding. */
export function restTargetOf(pathname: string): RestTarget | null {
  if (!isA2aRestPath(pathname)) return null;
  const [tenant, role, , ...segments] = pathname.split('/').slice(2);
  try {
    return {
      tenantId: decodeURIComponent(tenant as string),
      role: decodeURIComponent(role as string),
      segments: segments.length === 1 && segments[0] === '' ? [] : segments,
    };
  } catch {
    return null;
  }
}

type Verb = 'GET' | 'POST' | 'DELETE';

/** What a path and verb ask for: a method, its params from the path and query, what the body carries. */
export interface RestCall {
  /** A key of `methods` or `streamingMethods`. */
  method: string;
  params: Params;
  /** The body: the method's params (a message), or a config whose task is the path's. */
  body?: 'params' | 'config';
  /** The status of a success: 200 unless the SDK answers another. */
  status?: 201 | 204;
}

type Build = (ids: string[], query: URLSearchParams) => RestCall;

interface Route {
  /** Literal segments, `{id}` for a path parameter, `{id}:verb` for a parameter with a custom verb after it. */
  path: string[];
  verbs: Partial<Record<Verb, Build>>;
}

const malformed = (message: string) => new A2aError(A2A_ERRORS.INVALID_PARAMS, message);

/** A non-negative historyLength, as the SDK's REST server reads it. */
function historyLengthOf(value: string): number {
  const parsed = Number.parseInt(value, 10);
  if (Number.isNaN(parsed)) throw malformed('historyLength must be a valid integer');
  if (parsed < 0) throw malformed('historyLength must be non-negative');
  return parsed;
}

/** ListTasks' query parameters as its params, read as the SDK's REST server reads them. */
function listTasksParams(query: URLSearchParams): Params {
  const params: Params = {};
  const contextId = query.get('contextId');
  if (contextId) params.contextId = contextId;
  const status = query.get('status');
  if (status) params.status = Number.isNaN(Number(status)) ? status : Number(status);
  const pageSize = query.get('pageSize');
  if (pageSize !== null && pageSize !== '') {
    const parsed = Number.parseInt(pageSize, 10);
    if (Number.isNaN(parsed) || String(parsed) !== pageSize.trim()) {
      throw malformed('pageSize must be a valid integer');
    }
    params.pageSize = parsed;
  }
  const pageToken = query.get('pageToken');
  if (pageToken) params.pageToken = pageToken;
  const historyLength = query.get('historyLength');
  if (historyLength !== null && historyLength !== '') params.historyLength = historyLengthOf(historyLength);
  const after = query.get('statusTimestampAfter');
  if (after) params.statusTimestampAfter = after;
  params.includeArtifacts = query.get('includeArtifacts') === 'true';
  return params;
}

const ROUTES: Route[] = [
  { path: ['extendedAgentCard'], verbs: { GET: () => ({ method: 'GetExtendedAgentCard', params: {} }) } },
  { path: ['message:send'], verbs: { POST: () => ({ method: 'SendMessage', params: {}, body: 'params' }) } },
  {
    path: ['message:stream'],
    verbs: { POST: () => ({ method: 'SendStreamingMessage', params: {}, body: 'params' }) },
  },
  {
    path: ['tasks'],
    verbs: { GET: (_ids, query) => ({ method: 'ListTasks', params: listTasksParams(query) }) },
  },
  { path: ['tasks', '{id}:cancel'], verbs: { POST: ([id]) => ({ method: 'CancelTask', params: { id } }) } },
  {
    path: ['tasks', '{id}:subscribe'],
    verbs: {
      GET: ([id]) => ({ method: 'SubscribeToTask', params: { id } }),
      POST: ([id]) => ({ method: 'SubscribeToTask', params: { id } }),
    },
  },
  {
    path: ['tasks', '{id}'],
    verbs: {
      GET: ([id], query) => {
        const historyLength = query.get('historyLength');
        return {
          method: 'GetTask',
          params: {
            id,
            ...(historyLength !== null ? { historyLength: historyLengthOf(historyLength) } : {}),
          },
        };
      },
    },
  },
  {
    path: ['tasks', '{id}', 'pushNotificationConfigs'],
    verbs: {
      POST: ([taskId]) => ({
        method: 'CreateTaskPushNotificationConfig',
        params: { taskId },
        body: 'config',
        status: 201,
      }),
      GET: ([taskId]) => ({ method: 'ListTaskPushNotificationConfigs', params: { taskId } }),
    },
  },
  {
    path: ['tasks', '{id}', 'pushNotificationConfigs', '{id}'],
    verbs: {
      GET: ([taskId, id]) => ({ method: 'GetTaskPushNotificationConfig', params: { taskId, id } }),
      DELETE: ([taskId, id]) => ({
        method: 'DeleteTaskPushNotificationConfig',
        params: { taskId, id },
        status: 204,
      }),
    },
  },
];

/** The path parameters of a route the segments match (decoded), or null. */
function idsOf(route: Route, segments: string[]): string[] | null {
  if (route.path.length !== segments.length) return null;
  const ids: string[] = [];
  for (const [index, part] of route.path.entries()) {
    const segment = segments[index] as string;
    if (!part.startsWith('{id}')) {
      if (segment !== part) return null;
      continue;
    }
    const suffix = part.slice('{id}'.length);
    if (!segment.endsWith(suffix) || segment.length === suffix.length) return null;
    const id = segment.slice(0, segment.length - suffix.length);
    // A plain `{id}` takes no custom verb: `tasks/x:cancel` is CancelTask's, `tasks/x:other` no path.
    if (suffix === '' && /:[A-Za-z]+$/.test(id)) return null;
    try {
      ids.push(decodeURIComponent(id));
    } catch {
      return null;
    }
  }
  return ids;
}

function matchOf(segments: string[]): { route: Route; ids: string[] } | null {
  for (const route of ROUTES) {
    const ids = idsOf(route, segments);
    if (ids) return { route, ids };
  }
  return null;
}

/** A request the binding understood: its call, and the tenant its path named (undefined: none). */
export type RestRequest =
  | { kind: 'call'; call: RestCall; tenant: string | undefined }
  | { kind: 'refused'; response: Response };

const notFound = (message: string, headers: Record<string, string> = {}) =>
  restErrorResponse(new A2aError(A2A_ERRORS.SERVER_ERROR, message, undefined, { status: 404, headers }));

/**
 * The call a request's path and verb make, or its refusal: 404 for no path of the binding, 405 with `Allow` for
 * a path that takes other verbs, 400 for a query parameter the SDK refuses. A path may begin with the tenant
 * (the SDK client's form when the card names one): the path's own tenant first, then the path without it.
 */
export function restRequestOf(method: string, target: RestTarget, query: URLSearchParams): RestRequest {
  const { segments } = target;
  const [first, ...rest] = segments;
  let match = null as ReturnType<typeof matchOf>;
  let tenant: string | undefined;
  if (first !== undefined && safeDecode(first) === target.tenantId) {
    match = matchOf(rest);
    if (match) tenant = target.tenantId;
  }
  match ??= matchOf(segments);
  if (!match && first !== undefined) {
    match = matchOf(rest);
    if (match) tenant = safeDecode(first) ?? first;
  }
  if (!match) return { kind: 'refused', response: notFound('Not found: no path of A2A’s HTTP+JSON binding') };
  const build = match.route.verbs[method as Verb];
  if (!build) {
    const allow = Object.keys(match.route.verbs).join(', ');
    return {
      kind: 'refused',
      response: restErrorResponse(
        new A2aError(A2A_ERRORS.SERVER_ERROR, `Method ${method} not allowed: ${allow}`, undefined, {
          status: 405,
          headers: { Allow: allow },
        }),
      ),
    };
  }
  try {
    return { kind: 'call', call: build(match.ids, query), tenant };
  } catch (error) {
    if (error instanceof A2aError) return { kind: 'refused', response: restErrorResponse(error) };
    throw error;
  }
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The media types a body may declare, as the SDK's REST server takes them. */
const JSON_MEDIA_TYPES = ['application/json', A2A_JSON_CONTENT_TYPE];

/**
 * The params of a call, with its body read (within `maxBytes`) where the path takes one: a JSON object, none
 * read as `{}` as the SDK's server does. A declared media type other than JSON's is ContentTypeNotSupported,
 * malformed JSON or another value than an object RequestMalformed; over the limit 413.
 */
export async function paramsOf(request: Request, call: RestCall, maxBytes: number): Promise<Params> {
  if (!call.body) return call.params;
  const contentType = request.headers.get('content-type');
  if (contentType) {
    const mediaType = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
    if (!JSON_MEDIA_TYPES.includes(mediaType)) {
      throw new A2aError(
        A2A_ERRORS.CONTENT_TYPE_NOT_SUPPORTED,
        `Unsupported Content-Type "${contentType}"; expected application/json or application/a2a+json.`,
      );
    }
  }
  let body: unknown;
  try {
    body = await withBody(request, maxBytes, (bytes) => (bytes.byteLength === 0 ? {} : parseJsonBody(bytes)));
  } catch (error) {
    if (isPayloadTooLarge(error)) {
      // As the body limit refuses a declared length (src/errors.ts refusalResponse): no A2A error of the SDK's.
      throw new A2aError(A2A_ERRORS.SERVER_ERROR, error.message, undefined, { status: 413 });
    }
    if (error instanceof SyntaxError) throw malformed('Invalid JSON payload.');
    throw error;
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw malformed('The body must be a JSON object');
  }
  // A config's task is the path's, whatever the body says (as the SDK's server has it).
  return { ...(body as Params), ...call.params };
}
