import {
  type GraphQLInputType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
} from 'graphql';
import type { GraphQLParams } from 'graphql-yoga';
import type { RestDetail } from '../src/errors.js';
import { isPayloadTooLarge, MAX_BODY_BYTES, withBody } from '../src/http/body.js';
import { bodyText, parseJsonBody } from '../src/http/json-body.js';
import { camelizeInput, snakePath, type ValidationDetail } from '../src/validation/index.js';
import { inspectArguments, inspectNesting } from '../src/validation/input-rules.js';
import { toValidationDetail } from '../src/validation/pydantic.js';
import { schemaAt } from '../src/validation/schema-walk.js';
import type { CompiledRoute } from './compile.js';
import type { ArgSource } from './route.js';

/** A REST refusal decided before the operation runs (or rendered from its error): status, detail, headers. */
export class RestError extends Error {
  constructor(
    readonly status: number,
    readonly detail: RestDetail,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === 'string' ? detail : 'validation failed');
  }
}

/** What the REST request parser hands yoga (the route's operation and its variables), and what it read. */
export interface ParsedRestRequest {
  compiled: CompiledRoute;
  params: GraphQLParams<Record<string, unknown>>;
  /** The JSON body as sent (undefined for a route without one): REST `loc`s and `input`s point into it. */
  body: unknown;
  /** Whether the route's rules already passed the input (checked before it ran): not checked again. */
  inputChecked?: boolean;
}

async function readJsonBody(
  request: Request,
  maxBytes: number,
): Promise<{ present: boolean; value: unknown }> {
  const declared = Number(request.headers.get('content-length') ?? 0);
  if (declared > maxBytes) throw new RestError(413, `Request body exceeds ${maxBytes} bytes`);
  return withBody(request, maxBytes, (bytes) => {
    try {
      return { present: true, value: parseJsonBody(bytes) };
    } catch (error) {
      // No body, or only whitespace, is no body (FastAPI's reading); JSON.parse refuses both.
      if (bodyText(bytes).trim() === '') return { present: false, value: undefined };
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
  }).catch((error: unknown) => {
    throw isPayloadTooLarge(error) ? new RestError(413, error.message) : error;
  });
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
export function toRestDetail(
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

/** Scalars GraphQL takes exactly as JSON gives them (ID takes a number as text, DateTime makes a Date). */
const EXACT_SCALARS = new Set(['String', 'Int', 'Float', 'Boolean', 'JSON', 'SafeInt']);

/**
 * Whether GraphQL would accept `value` where REST (Pydantic's rules) does not necessarily: a single value
 * for a list (GraphQL wraps it), a number for an ID, an enum whose value is not its name, another scalar.
 * Such a variable is checked by the route's rules before it runs; any other is checked by GraphQL alone.
 */
function coercedLeniently(type: GraphQLInputType, value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (isNonNullType(type)) return coercedLeniently(type.ofType, value);
  if (isListType(type)) {
    if (!Array.isArray(value)) return true;
    return value.some((item) => coercedLeniently(type.ofType, item));
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object' || Array.isArray(value)) return false;
    const fields = type.getFields();
    return Object.entries(value).some(
      ([name, field]) => fields[name] !== undefined && coercedLeniently(fields[name].type, field),
    );
  }
  if (isEnumType(type)) return type.getValues().some((enumValue) => enumValue.value !== enumValue.name);
  if (!isScalarType(type) || EXACT_SCALARS.has(type.name)) return false;
  return type.name !== 'ID' || typeof value !== 'string';
}

/**
 * The REST request parser: reads the body once (bounded by the route), fills the operation's variables
 * from the path, the query, the headers and the body (snake_case fields become the schema's camelCase),
 * and refuses what GraphQL would never see: a missing or undecodable body, and nesting too deep in fields
 * no argument reads. Roles and every input rule are GraphQL's, as for any other transport.
 */
export async function parseRestRequest(
  compiled: CompiledRoute,
  request: Request,
  url: URL,
  pathParams: Record<string, string>,
): Promise<ParsedRestRequest> {
  const { route } = compiled;
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
    let value: unknown;
    if (source.from === 'path') value = pathParams[source.name];
    else if (source.from === 'query') value = coerce(url.searchParams.get(source.name), source.type);
    else if (source.from === 'header') value = coerce(request.headers.get(source.name), source.type);
    else {
      const raw = source.field ? fieldOf(body.value, source.field) : body.value;
      value = argSchema ? camelizeInput(argSchema, raw) : raw;
    }
    // An absent value is an absent variable (not null): the argument's default applies.
    if (value !== undefined) variables[name] = value;
  }
  const parsed: ParsedRestRequest = {
    compiled,
    params: { query: compiled.query, operationName: compiled.operationName, variables },
    body: body.value,
  };
  // What no argument reads is dropped, but a refusal may echo it (Pydantic's `missing` shows its parent).
  const tooDeep = inspectNesting(body.value, ['body']).length > 0;
  const lenient = Object.entries(variables).some(([name, value]) => {
    const type = compiled.variableTypes[name];
    return type !== undefined && coercedLeniently(type, value);
  });
  if (tooDeep || lenient) {
    const refusal = inputRefusalOf(parsed);
    if (refusal) throw refusal;
    parsed.inputChecked = true;
  }
  return parsed;
}

/**
 * The refusal of a REST request's input, in the order REST callers have always been answered: the rules
 * of every input (a field's own rules may echo a value, and this one is bounded then), nesting anywhere in
 * the body, then the field's own rules, each `loc` in REST terms. Null when the input is acceptable. Asked
 * only when the operation failed or the body nests too deep: on success GraphQL has applied every rule once.
 */
export function inputRefusalOf({ compiled, params, body }: ParsedRestRequest): RestError | null {
  const variables = params.variables ?? {};
  const unsafe = inspectArguments(compiled.args, variables);
  if (unsafe.length > 0) return new RestError(422, toRestDetail(compiled, unsafe, body));
  const tooDeep = inspectNesting(body, ['body']);
  if (tooDeep.length > 0) return new RestError(422, tooDeep);
  if (!compiled.argsSchema) return null;
  const checked = compiled.argsSchema.safeParse(variables, { reportInput: true });
  if (checked.success) return null;
  return new RestError(
    422,
    toRestDetail(compiled, toValidationDetail(checked.error.issues, compiled.argsSchema, variables), body),
  );
}
