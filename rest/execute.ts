import {
  type DocumentNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLSchema,
  Kind,
  type OperationDefinitionNode,
  print,
} from 'graphql';
import type { YogaServerInstance } from 'graphql-yoga';
import type { z } from 'zod';
import type { Viewer } from '../src/auth/viewer.js';
import { scopesOf } from '../src/builder.js';
import type { Context, ServerContext } from '../src/context.js';
import { statusOf } from '../src/errors.js';
import { isPayloadTooLarge, MAX_BODY_BYTES, readBodyText } from '../src/plugins/use-body-limit.js';
import { admitRequest } from '../src/plugins/use-load-shedding.js';
import { camelizeInput, snakePath, type ValidationDetail } from '../src/validation/index.js';
import { inspectArguments, inspectNesting } from '../src/validation/input-rules.js';
import { toValidationDetail } from '../src/validation/pydantic.js';
import { schemaAt } from '../src/validation/schema-walk.js';
import type { ArgSource, Route } from './route.js';

// Besides our codes, yoga's own body-size refusal.
const statusOfCode: Record<string, number> = { ...statusOf, REQUEST_ENTITY_TOO_LARGE: 413 };

export class RestError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string | ValidationDetail[],
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : 'validation failed');
  }
}

type ScopeMap = Record<string, unknown>;

/** A route with what is derived from its operation once: printed query, root field, rules and roles. */
export interface CompiledRoute {
  route: Route;
  pattern: RegExp;
  pathParams: string[];
  query: string;
  operationName: string;
  rootField: string;
  /** The root field's arguments, for the input rules every argument obeys. */
  args: readonly GraphQLArgument[];
  argsSchema: z.ZodType | undefined;
  authScopes: ScopeMap | undefined;
}

export function compileRoute(route: Route, schema: GraphQLSchema): CompiledRoute {
  if (!(route.document as DocumentNode | undefined)?.definitions) {
    throw new Error(
      `route ${route.method} ${route.path}: its document is not generated yet (run npm run codegen)`,
    );
  }
  const operation = (route.document as DocumentNode).definitions.find(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  const selection = operation?.selectionSet.selections[0];
  if (!operation?.name || selection?.kind !== Kind.FIELD) {
    throw new Error(`route ${route.method} ${route.path} needs a named operation with one root field`);
  }
  const rootType =
    operation.operation === 'mutation'
      ? schema.getMutationType()
      : operation.operation === 'query'
        ? schema.getQueryType()
        : undefined;
  const field = rootType?.getFields()[selection.name.value] as GraphQLField<unknown, unknown> | undefined;
  if (!rootType || !field)
    throw new Error(`route ${route.method} ${route.path}: no root field ${selection.name.value}`);
  const pathParams: string[] = [];
  const pattern = new RegExp(
    `^${route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_match, name: string) => {
      pathParams.push(name);
      return '([^/]+)';
    })}/?$`,
  );
  const extensions = field.extensions as { argsSchema?: z.ZodType; pothosOptions?: { authScopes?: unknown } };
  const typeScopes = (rootType.extensions as { pothosOptions?: { authScopes?: unknown } }).pothosOptions
    ?.authScopes;
  const fieldScopes = extensions.pothosOptions?.authScopes;
  return {
    route,
    pattern,
    pathParams,
    query: print(route.document as DocumentNode),
    operationName: operation.name.value,
    rootField: selection.alias?.value ?? selection.name.value,
    args: field.args,
    argsSchema: extensions.argsSchema,
    authScopes: (typeof fieldScopes === 'object'
      ? fieldScopes
      : typeof typeScopes === 'object'
        ? typeScopes
        : undefined) as ScopeMap | undefined,
  };
}

function scopesAllow(
  scopes: ScopeMap,
  granted: Record<string, boolean>,
  strategy: 'any' | 'all' = 'any',
): boolean {
  const results = Object.entries(scopes).map(([scope, wanted]) => {
    if (scope === '$any') return scopesAllow(wanted as ScopeMap, granted, 'any');
    if (scope === '$all') return scopesAllow(wanted as ScopeMap, granted, 'all');
    return wanted === true ? !!granted[scope] : true;
  });
  return strategy === 'any' ? results.some(Boolean) : results.every(Boolean);
}

/** 403 before the body is looked at, from the same auth scopes the GraphQL field enforces. */
export function assertAllowed(compiled: CompiledRoute, viewer: Viewer) {
  if (
    compiled.authScopes &&
    !scopesAllow(compiled.authScopes, scopesOf(viewer) as unknown as Record<string, boolean>)
  ) {
    throw new RestError(403, 'Not allowed for your role');
  }
}

async function readJsonBody(
  request: Request,
  maxBytes: number,
): Promise<{ present: boolean; value: unknown }> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw new RestError(413, `Request body exceeds ${maxBytes} bytes`);
  const text = await readBodyText(request, maxBytes).catch((error: unknown) => {
    throw isPayloadTooLarge(error) ? new RestError(413, error.message) : error;
  });
  if (text.trim() === '') return { present: false, value: undefined };
  try {
    return { present: true, value: JSON.parse(text) };
  } catch (error) {
    const offset = Number(/position (\d+)/.exec(String((error as Error).message))?.[1] ?? 0);
    throw new RestError(422, [
      {
        type: 'json_invalid',
        loc: ['body', offset],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: (error as Error).message },
      },
    ]);
  }
}

function locPrefix(source: ArgSource): (string | number)[] {
  if (source.from === 'body') return source.field ? ['body', source.field] : ['body'];
  return [source.from, source.name];
}

function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/** Re-locates detail items from GraphQL argument paths to REST locations (`body`, `path`, ...). */
function toRestDetail(
  compiled: CompiledRoute,
  detail: ValidationDetail[],
  rawBody: unknown,
): ValidationDetail[] {
  return detail.map((item) => {
    const [variable, ...rest] = item.loc;
    const source = compiled.route.variables[String(variable)];
    if (!source) return item;
    const argSchema = compiled.argsSchema ? schemaAt(compiled.argsSchema, [String(variable)]) : undefined;
    const loc = [...locPrefix(source), ...(argSchema ? snakePath(argSchema, rest) : rest)];
    const input =
      item.type === 'missing' && source.from === 'body'
        ? (valueAt(rawBody, loc.slice(1, -1)) ?? null)
        : item.input;
    return { ...item, loc, input };
  });
}

function fieldOf(body: unknown, field: string): unknown {
  return body !== null && typeof body === 'object' && !Array.isArray(body)
    ? (body as Record<string, unknown>)[field]
    : undefined;
}

function coerce(value: string | null, type: 'string' | 'int' | undefined): unknown {
  if (value === null) return undefined;
  // Integer headers may arrive as entity tags (`If-Match: "3"` or `W/"3"`).
  const bare = value
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
  if (type === 'int' && /^-?\d+$/.test(bare)) return Number(bare);
  return value;
}

export interface ExecuteOptions {
  yoga: YogaServerInstance<ServerContext, Context>;
  viewer: Viewer;
  requestId: string;
  /** Runs once the request is admitted into the database budget, before its operation. */
  admitted?: () => Promise<void>;
}

/** Runs one matched route: body, validation, the GraphQL operation, and the mapping of its result. */
export async function executeRoute(
  compiled: CompiledRoute,
  request: Request,
  params: Record<string, string>,
  { yoga, viewer, requestId, admitted }: ExecuteOptions,
): Promise<Response> {
  const { route } = compiled;
  assertAllowed(compiled, viewer);

  const url = new URL(request.url);
  const needsBody = Object.values(route.variables).some((source) => source.from === 'body');
  const body = needsBody
    ? await readJsonBody(request, route.maxBodyBytes ?? MAX_BODY_BYTES)
    : { present: false, value: undefined };
  // FastAPI reads a JSON `null` body as no body.
  if (needsBody && (!body.present || body.value === null)) {
    throw new RestError(422, [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]);
  }

  const variables: Record<string, unknown> = {};
  for (const [name, source] of Object.entries(route.variables)) {
    const argSchema = compiled.argsSchema ? schemaAt(compiled.argsSchema, [name]) : undefined;
    if (source.from === 'path') variables[name] = params[source.name];
    else if (source.from === 'query')
      variables[name] = coerce(url.searchParams.get(source.name), source.type);
    else if (source.from === 'header')
      variables[name] = coerce(request.headers.get(source.name), source.type);
    else {
      const value = source.field ? fieldOf(body.value, source.field) : body.value;
      variables[name] = argSchema ? camelizeInput(argSchema, value) : value;
    }
  }

  // The rules of every input first: the field's own rules may echo a value, and this one is bounded then.
  const unsafe = inspectArguments(compiled.args, variables);
  if (unsafe.length > 0) throw new RestError(422, toRestDetail(compiled, unsafe, body.value));
  // What no argument reads is dropped, but a refusal may echo it (Pydantic's `missing` shows its parent).
  const tooDeep = inspectNesting(body.value, ['body']);
  if (tooDeep.length > 0) throw new RestError(422, tooDeep);

  if (compiled.argsSchema) {
    const checked = compiled.argsSchema.safeParse(variables, { reportInput: true });
    if (!checked.success) {
      throw new RestError(
        422,
        toRestDetail(
          compiled,
          toValidationDetail(checked.error.issues, compiled.argsSchema, variables),
          body.value,
        ),
      );
    }
  }

  // The caller is authenticated and the body read and checked: only now does the request count against the
  // database budget, and only then is its tenant looked up.
  const refusal = admitRequest(request);
  if (refusal) throw new RestError(503, refusal.message, refusal.headers);
  await admitted?.();

  const response = await yoga.fetch(
    'http://yoga/graphql',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', 'x-request-id': requestId },
      body: JSON.stringify({ query: compiled.query, operationName: compiled.operationName, variables }),
    },
    { viewer, restRequest: request },
  );
  const result = (await response.json()) as {
    data?: Record<string, unknown> | null;
    errors?: { message: string; extensions?: Record<string, unknown> }[];
  };
  const error = result.errors?.[0];
  if (error) {
    const code = String(error.extensions?.code ?? '');
    const status = statusOfCode[code] ?? 500;
    if (code === 'BAD_USER_INPUT' && Array.isArray(error.extensions?.detail)) {
      throw new RestError(
        422,
        toRestDetail(compiled, error.extensions.detail as ValidationDetail[], body.value),
      );
    }
    // Retry-After (429, 503) travels in the inner response's headers, and a resolver's RATE_LIMITED in
    // its extensions as well.
    const retryAfter = response.headers.get('retry-after') ?? error.extensions?.retryAfter;
    throw new RestError(
      status,
      status === 500 ? 'Internal Server Error' : error.message,
      retryAfter !== undefined && retryAfter !== null ? { 'Retry-After': String(retryAfter) } : {},
    );
  }
  const data = result.data as never;
  if (route.alternative?.when(data)) {
    return Response.json(route.alternative.respond(data), { status: route.alternative.status });
  }
  return Response.json(route.respond(data, { requestId }), {
    status: route.status,
    headers: route.headers?.(data) ?? {},
  });
}
