import { ListTasksResponse } from '@a2a-js/sdk';
import type { ServerContext } from '../src/context.js';
import { A2A_JSON_CONTENT_TYPE } from '../src/errors.js';
import { A2A_ERRORS, A2aError } from './errors.js';
import { type MethodContext, methods, type Params } from './methods.js';
import { restErrorResponse } from './rest-errors.js';
import { paramsOf, type RestCall, type RestTarget, restRequestOf } from './rest-routes.js';
import { streamingMethods } from './stream.js';

/** What the binding shares with the JSON-RPC one (a2a/index.ts): its refusals, its failures, a request's method context. */
export interface RestBindingDeps {
  maxBodyBytes: number;
  /** The refusal of the request's A2A-Version, if it names one not served. */
  versionRefusal(request: Request): A2aError | undefined;
  /** The refusal of a caller who may not use the tenant's agents (401, 404). */
  callerRefusal(
    request: Request,
    serverContext: ServerContext,
    tenantId: string,
  ): Promise<A2aError | undefined>;
  /** An unexpected failure as its answer (503 while the database is away, else logged and 500). */
  failureOf(error: unknown, request: Request): A2aError;
  contextOf(request: Request, url: URL, target: RestTarget, serverContext: ServerContext): MethodContext;
}

/**
 * Answers a request of A2A's HTTP+JSON binding (rest-routes.ts): its path's call, for the path's tenant's
 * callers only (401 with a Bearer challenge without a token, 404 for another tenant's), run as the JSON-RPC
 * binding runs it, every refusal in the binding's error body (rest-errors.ts).
 */
export async function answerRestBinding(
  request: Request,
  url: URL,
  target: RestTarget,
  serverContext: ServerContext,
  deps: RestBindingDeps,
): Promise<Response> {
  try {
    const parsed = restRequestOf(request.method, target, url.searchParams);
    if (parsed.kind === 'refused') return parsed.response;
    const refusal = await deps.callerRefusal(request, serverContext, target.tenantId);
    if (refusal) return restErrorResponse(refusal);
    const versionError = deps.versionRefusal(request);
    if (versionError) return restErrorResponse(versionError);
    const { call, tenant } = parsed;
    const params = await paramsOf(request, call, deps.maxBodyBytes);
    const named = [tenant, url.searchParams.get('tenant'), params.tenant];
    if (
      named.some((name) => name !== undefined && name !== null && name !== '' && name !== target.tenantId)
    ) {
      throw new A2aError(A2A_ERRORS.INVALID_PARAMS, 'tenant must be the tenant of the path');
    }
    const context = deps.contextOf(request, url, target, serverContext);
    return await answerCall(context, call, params, request.signal);
  } catch (error) {
    return restErrorResponse(error instanceof A2aError ? error : deps.failureOf(error, request));
  }
}

const jsonAnswer = (body: unknown, status = 200) =>
  Response.json(body, { status, headers: { 'Content-Type': A2A_JSON_CONTENT_TYPE } });

/**
 * Runs a call's method and writes its answer: JSON with the SDK's status (201 for a created config, 204 and no
 * body for a deleted one), or the streams' server-sent events. ListTasks names every field, defaults
 * included, and each task's artifacts when they are asked for, as the SDK's server writes it.
 */
export async function answerCall(
  context: MethodContext,
  call: RestCall,
  params: Params,
  signal: AbortSignal,
): Promise<Response> {
  const streaming = streamingMethods[call.method];
  if (streaming) return streaming(context, params, { id: null, signal, binding: 'HTTP+JSON' });
  const method = methods[call.method];
  if (!method) throw new Error(`no A2A method ${call.method}`);
  const result = await method(context, params);
  if (call.status === 204) return new Response(null, { status: 204 });
  if (call.method === 'ListTasks') return jsonAnswer(listTasksBody(result, params.includeArtifacts === true));
  return jsonAnswer(result, call.status);
}

function listTasksBody(result: unknown, includeArtifacts: boolean): Record<string, unknown> {
  const { tasks, ...rest } = ListTasksResponse.toJSON(ListTasksResponse.fromJSON(result)) as {
    tasks?: Record<string, unknown>[];
  };
  return {
    tasks: (tasks ?? []).map((task) => (includeArtifacts ? { artifacts: [], ...task } : task)),
    nextPageToken: '',
    pageSize: 0,
    totalSize: 0,
    ...rest,
  };
}
