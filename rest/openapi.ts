import { z } from 'zod';
import { MAX_BODY_BYTES } from '../src/http/body.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_REFUSALS,
  IDEMPOTENT_REPLAYED_HEADER,
  MAX_IDEMPOTENCY_KEY_LENGTH,
} from '../src/http/idempotency-key.js';
import { schemaAt, snakeCase } from '../src/validation/schema-walk.js';
import type { CompiledRoute } from './compile.js';
import {
  type ErrorExamples,
  payloadTooLargeExample,
  routeErrorExamples,
  sharedErrorExamples,
} from './examples.js';
import type { ArgSource } from './route.js';

type JsonSchema = Record<string, unknown>;

/** Renames object properties to their REST (snake_case) names, leaving free-form objects alone. */
function snakeSchema(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (schema.properties && typeof schema.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, JsonSchema>).map(([key, value]) => [
        snakeCase(key),
        snakeSchema(value),
      ]),
    );
    if (Array.isArray(schema.required)) {
      const required = (schema.required as string[]).map(snakeCase);
      // An empty list says nothing, and OpenAPI 3.0 readers (draft-04 schemas) refuse it.
      if (required.length > 0) out.required = required;
      else delete out.required;
    }
  }
  for (const key of ['items', 'additionalProperties'] as const) {
    if (schema[key] && typeof schema[key] === 'object') out[key] = snakeSchema(schema[key] as JsonSchema);
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (Array.isArray(schema[key])) out[key] = (schema[key] as JsonSchema[]).map(snakeSchema);
  }
  return out;
}

function jsonSchemaOf(schema: z.ZodType | undefined, io: 'input' | 'output'): JsonSchema {
  if (!schema) return {};
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as JsonSchema;
  return rest;
}

/** A path, query or header value is a string on the wire: it is absent, never null. */
function withoutNull(schema: JsonSchema): JsonSchema {
  if (Array.isArray(schema.anyOf)) {
    const rest = (schema.anyOf as JsonSchema[]).filter((option) => option.type !== 'null');
    if (rest.length === 1) {
      const { anyOf: _anyOf, ...others } = schema;
      return { ...others, ...rest[0] };
    }
  }
  if (Array.isArray(schema.type)) {
    const types = (schema.type as string[]).filter((type) => type !== 'null');
    return { ...schema, type: types.length === 1 ? types[0] : types };
  }
  return schema;
}

const headerName = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());

/** `SendChatMessage` → `sendChatMessage`: the GraphQL operation's name, as SDK generators expect. */
const operationIdOf = (operationName: string) =>
  operationName.charAt(0).toLowerCase() + operationName.slice(1);

const validationError: JsonSchema = {
  type: 'object',
  description: 'Pydantic-style validation errors, one per problem.',
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        required: ['loc', 'msg', 'type'],
        properties: {
          loc: {
            type: 'array',
            description: 'Where: starts with `body`, `path`, `query` or `header`.',
            items: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
          },
          msg: { type: 'string' },
          type: { type: 'string', description: 'Pydantic v2 error type, e.g. `missing`, `string_too_long`.' },
          input: { description: 'The offending value.' },
          ctx: { type: 'object', description: 'Details such as `max_length`.' },
        },
      },
    },
  },
  example: {
    detail: [{ type: 'missing', loc: ['body', 'message'], msg: 'Field required', input: {} }],
  },
};

const problem: JsonSchema = {
  type: 'object',
  required: ['detail'],
  properties: { detail: { type: 'string', description: 'A human-readable message.' } },
};

/** A `{"detail"}` body with the answers the service gives for it (rest/examples.ts). */
const problemContent = (examples: ErrorExamples = {}) => ({
  'application/json': {
    schema: { $ref: '#/components/schemas/Problem' },
    ...(Object.keys(examples).length > 0
      ? {
          examples: Object.fromEntries(
            Object.entries(examples).map(([name, detail]) => [name, { summary: detail, value: { detail } }]),
          ),
        }
      : {}),
  },
});

/** Error responses shared by the routes; each is referenced only where it can occur. */
const sharedResponses = {
  Unauthorized: {
    description: 'Missing, invalid or expired bearer token.',
    headers: {
      'WWW-Authenticate': { description: 'Always `Bearer`.', schema: { type: 'string', const: 'Bearer' } },
    },
    content: problemContent(sharedErrorExamples[401]),
  },
  MethodNotAllowed: {
    description: 'The path exists but not with this method; `Allow` lists the methods it accepts.',
    headers: {
      Allow: { description: 'The methods of this path, e.g. `GET, PUT`.', schema: { type: 'string' } },
    },
    content: problemContent(sharedErrorExamples[405]),
  },
  ValidationError: {
    description: 'Path, query, header or body does not satisfy the schema.',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ValidationError' } } },
  },
  ValidationErrorOrKeyReused: {
    description:
      'Path, query, header or body does not satisfy the schema (the items); or the Idempotency-Key was used for a different request (a message): nothing was run.',
    content: {
      'application/json': {
        schema: {
          anyOf: [{ $ref: '#/components/schemas/ValidationError' }, { $ref: '#/components/schemas/Problem' }],
          example: validationError.example,
        },
        examples: {
          validation: {
            summary: 'A field is missing',
            value: {
              detail: [{ type: 'missing', loc: ['body', 'message'], msg: 'Field required', input: {} }],
            },
          },
          idempotencyKeyReused: {
            summary: IDEMPOTENCY_REFUSALS.reused.message,
            value: { detail: IDEMPOTENCY_REFUSALS.reused.message },
          },
        },
      },
    },
  },
  TooManyRequests: {
    description: 'The caller’s rate limit is exhausted.',
    headers: {
      'Retry-After': {
        description: 'Seconds until the next request is admitted.',
        schema: { type: 'integer' },
      },
    },
    content: problemContent(sharedErrorExamples[429]),
  },
  ServiceUnavailable: {
    description:
      'The database is unreachable, overloaded or out of disk, or the instance already works on its maximum; nothing was written.',
    headers: {
      'Retry-After': {
        description: 'Seconds to wait before retrying.',
        schema: { type: 'integer' },
      },
    },
    content: problemContent(sharedErrorExamples[503]),
  },
};

/** The Idempotency-Key request header of every route that changes something (docs/idempotency.md). */
const idempotencyKeyParameter = {
  name: IDEMPOTENCY_KEY_HEADER,
  in: 'header',
  required: false,
  description:
    `A key of your choice for this request (draft-ietf-httpapi-idempotency-key-header): a quoted string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} ` +
    'printable ASCII characters (unquoted is accepted). For 24 hours, the same key with the same request replays ' +
    'the first answer (with `Idempotent-Replayed: true`) instead of running again; with another request it is ' +
    'refused (422); while the first still runs, 409. Keys are per tenant and caller. See docs/idempotency.md.',
  schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH + 2 },
  example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
};

const replayedHeader = {
  [IDEMPOTENT_REPLAYED_HEADER]: {
    description:
      '`true` when this is the first answer to an earlier request with the same Idempotency-Key, replayed.',
    schema: { type: 'string', const: 'true' },
  },
};

/** A state error of a route that takes an Idempotency-Key, with the key's own refusal beside the route's. */
function withKeyRefusal(
  route: { description: string; examples: ErrorExamples } | undefined,
  key: { description: string; name: string; detail: string },
) {
  return {
    description: route ? `${route.description} Also: ${key.description}` : key.description,
    content: problemContent({ ...route?.examples, [key.name]: key.detail }),
  };
}

const requestIdHeader = {
  'X-Request-ID': {
    description: 'The request id: the inbound one when valid, else a new uuid.',
    schema: { type: 'string' },
  },
};

function parameterOf(source: Exclude<ArgSource, { from: 'body' }>, schema: z.ZodType | undefined) {
  const json = withoutNull(jsonSchemaOf(schema, 'input'));
  const required = source.from === 'path' || !schema?.safeParse(undefined).success;
  if (source.from === 'header' && source.name.toLowerCase() === 'if-match') {
    // The version travels as an entity tag, as the ETag header gave it; a bare number is accepted too.
    return {
      name: 'If-Match',
      in: 'header',
      required,
      description:
        'The version you read (the ETag, e.g. `"3"`); 412 when it is no longer the current version.',
      schema: { type: 'string', pattern: '^(W/)?"?[0-9]+"?$' },
      example: '"3"',
    };
  }
  return {
    name: source.from === 'header' ? headerName(source.name) : source.name,
    in: source.from,
    required,
    ...(typeof json.description === 'string' ? { description: json.description } : {}),
    schema: json,
  };
}

/** Roles the route's GraphQL field is restricted to, or none when any authenticated caller may call it. */
function rolesOf(compiled: CompiledRoute): string[] {
  const scopes = Object.entries(compiled.authScopes ?? {})
    .filter(([scope, wanted]) => wanted === true && scope !== 'authenticated')
    .map(([scope]) => scope);
  return scopes;
}

function operationOf(compiled: CompiledRoute) {
  const { route, argsSchema } = compiled;
  const parameters: unknown[] = [];
  let requestBody: unknown;
  const bodyFields = { properties: {} as Record<string, unknown>, required: [] as string[] };
  for (const [variable, source] of Object.entries(route.variables)) {
    const schema = argsSchema ? (schemaAt(argsSchema, [variable]) as z.ZodType | undefined) : undefined;
    if (source.from === 'body' && source.field) {
      // Several arguments from fields of one body: an object with one property per argument.
      const fieldSchema = snakeSchema(jsonSchemaOf(schema, 'input'));
      bodyFields.properties[source.field] = fieldSchema;
      if (!schema?.safeParse(undefined).success) bodyFields.required.push(source.field);
      requestBody = {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: bodyFields.properties,
              // Left out when every field is optional: OpenAPI 3.0 readers refuse an empty list.
              ...(bodyFields.required.length > 0 ? { required: bodyFields.required } : {}),
            },
            ...(route.example ? { example: route.example } : {}),
          },
        },
      };
    } else if (source.from === 'body') {
      requestBody = {
        required: true,
        content: {
          'application/json': {
            schema: snakeSchema(jsonSchemaOf(schema, 'input')),
            ...(route.example ? { example: route.example } : {}),
          },
        },
      };
    } else {
      parameters.push(parameterOf(source, schema));
    }
  }
  const roles = rolesOf(compiled);
  const ref = (name: keyof typeof sharedResponses) => ({ $ref: `#/components/responses/${name}` });
  const examples = routeErrorExamples[operationIdOf(compiled.operationName)] ?? {};
  const stateError = (description: string, status: number) => ({
    description,
    content: problemContent(examples[status]),
  });
  const errors = route.errors ?? {};
  const routeError = (status: 400 | 409) =>
    errors[status] ? { description: errors[status], examples: examples[status] ?? {} } : undefined;
  const keyed = compiled.mutation;
  if (keyed) parameters.push(idempotencyKeyParameter);
  const responses: Record<string, unknown> = {
    [route.status]: {
      description: 'Success',
      headers: {
        ...requestIdHeader,
        ...(keyed ? replayedHeader : {}),
        ...Object.fromEntries(
          Object.entries(route.responseHeaders ?? {}).map(([name, description]) => [
            name,
            { description, schema: { type: 'string' } },
          ]),
        ),
      },
      content: {
        'application/json': {
          schema: route.responseSchema ? jsonSchemaOf(route.responseSchema, 'output') : {},
          ...(route.responseExample ? { example: route.responseExample } : {}),
        },
      },
    },
    ...(route.alternative
      ? {
          [route.alternative.status]: {
            description: route.alternative.description,
            headers: keyed ? { ...requestIdHeader, ...replayedHeader } : requestIdHeader,
            content: {
              'application/json': {
                schema: jsonSchemaOf(route.alternative.responseSchema, 'output'),
                example: route.alternative.responseExample,
              },
            },
          },
        }
      : {}),
    ...(keyed
      ? {
          400: withKeyRefusal(routeError(400), {
            description: 'the Idempotency-Key is not a valid key.',
            name: 'idempotencyKeyInvalid',
            detail: IDEMPOTENCY_REFUSALS.invalid.message,
          }),
        }
      : errors[400]
        ? { 400: stateError(errors[400], 400) }
        : {}),
    401: ref('Unauthorized'),
    ...(roles.length > 0
      ? {
          403: {
            description: `The caller has none of the roles: ${roles.join(', ')}.`,
            content: problemContent(sharedErrorExamples[403]),
          },
        }
      : errors[403]
        ? { 403: stateError(errors[403], 403) }
        : {}),
    ...(errors[404] ? { 404: stateError(errors[404], 404) } : {}),
    405: ref('MethodNotAllowed'),
    ...(keyed
      ? {
          409: {
            ...withKeyRefusal(routeError(409), {
              description:
                'a request with the same Idempotency-Key is still being processed (Retry-After); retry for its answer.',
              name: 'idempotencyKeyInFlight',
              detail: IDEMPOTENCY_REFUSALS.inFlight.message,
            }),
            headers: {
              'Retry-After': {
                description: 'Seconds to wait before retrying, when the Idempotency-Key is in flight.',
                schema: { type: 'integer' },
              },
            },
          },
        }
      : errors[409]
        ? { 409: stateError(errors[409], 409) }
        : {}),
    ...(errors[412] ? { 412: stateError(errors[412], 412) } : {}),
    ...(requestBody
      ? {
          413: {
            description: 'The request body exceeds the limit of this route.',
            content: problemContent(payloadTooLargeExample(route.maxBodyBytes ?? MAX_BODY_BYTES)),
          },
        }
      : {}),
    422: keyed ? ref('ValidationErrorOrKeyReused') : ref('ValidationError'),
    429: ref('TooManyRequests'),
    ...(errors[502] ? { 502: stateError(errors[502], 502) } : {}),
    // Every route answers 503 when the database is unavailable or overloaded; some also for a reason of
    // their own, which the route names.
    503: errors[503]
      ? stateError(
          `${errors[503]} Also when the database is unreachable, overloaded or out of disk (with Retry-After); nothing was written.`,
          503,
        )
      : ref('ServiceUnavailable'),
    ...(errors[504] ? { 504: stateError(errors[504], 504) } : {}),
  };
  const who = roles.length > 0 ? `Roles: ${roles.join(' or ')}.` : 'Any authenticated role.';
  return {
    operationId: operationIdOf(compiled.operationName),
    summary: route.summary,
    description: [who, route.description, `Runs the GraphQL operation \`${compiled.operationName}\`.`]
      .filter(Boolean)
      .join('\n\n'),
    tags: [route.tag],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

/** OpenAPI 3.1 from the route table and the same input rules the resolvers enforce. */
export function buildOpenApiDocument(routes: readonly CompiledRoute[]) {
  const paths: Record<string, Record<string, ReturnType<typeof operationOf>>> = {};
  for (const compiled of routes) {
    paths[compiled.route.path] ??= {};
    (paths[compiled.route.path] as Record<string, ReturnType<typeof operationOf>>)[
      compiled.route.method.toLowerCase()
    ] = operationOf(compiled);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Boardroom REST compatibility API',
      version: '1.0.0',
      description:
        'The /api/v1 routes, each served by running the GraphQL operation of the same name at /graphql. ' +
        'Send `Authorization: Bearer <JWT>`; in development `npm start` prints one and ' +
        '`npm run token -- --tenant <uuid> --sub <id> --roles chairman` signs one. Errors are ' +
        '`{"detail": "<message>"}`; 422 bodies list Pydantic-style `{type, loc, msg, input, ctx}` items. ' +
        'Every response carries `X-Request-ID`.',
    },
    servers: [{ url: '/', description: 'This server' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'agents', description: 'Chat tasks and vital signs of agent roles' },
      { name: 'experiments', description: 'Onboarding A/B tests' },
      { name: 'connectors', description: 'Forged connectors (outbound connector templates)' },
      { name: 'dogfood', description: 'Pausing and resuming C-suite agents' },
      { name: 'hiring', description: 'Onboarding packets for hired candidates' },
      { name: 'finetuning', description: 'Fine-tuned model versions' },
    ],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'Claims: `sub`, `tenant_id` (uuid), `roles` (chairman, operator, member, agent), `exp`.',
        },
      },
      schemas: { ValidationError: validationError, Problem: problem },
      responses: sharedResponses,
    },
  };
}
