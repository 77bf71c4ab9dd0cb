import { z } from 'zod';
import { schemaAt, snakeCase } from '../src/validation/schema-walk.js';
import type { CompiledRoute } from './execute.js';

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
    if (Array.isArray(schema.required)) out.required = (schema.required as string[]).map(snakeCase);
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

const validationError: JsonSchema = {
  type: 'object',
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        required: ['loc', 'msg', 'type'],
        properties: {
          loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] } },
          msg: { type: 'string' },
          type: { type: 'string' },
          input: {},
          ctx: { type: 'object' },
        },
      },
    },
  },
};
const problem: JsonSchema = {
  type: 'object',
  required: ['detail'],
  properties: { detail: { type: 'string' } },
};
const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

/** OpenAPI 3.1 from the route table and the same input rules the resolvers enforce. */
export function buildOpenApiDocument(routes: readonly CompiledRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { route, argsSchema } of routes) {
    const parameters: unknown[] = [];
    let requestBody: unknown;
    for (const [variable, source] of Object.entries(route.variables)) {
      const schema = argsSchema ? (schemaAt(argsSchema, [variable]) as z.ZodType | undefined) : undefined;
      if (source.from === 'body') {
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
        const json = jsonSchemaOf(schema, 'input');
        parameters.push({
          name: source.name,
          in: source.from,
          required: source.from === 'path' || !schema?.safeParse(undefined).success,
          schema: json,
        });
      }
    }
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = {
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      security: [{ bearerAuth: [] }],
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: {
        [route.status]: {
          description: 'Success',
          content: {
            'application/json': {
              schema: route.responseSchema ? jsonSchemaOf(route.responseSchema, 'output') : {},
            },
          },
        },
        400: errorResponse('The request is well-formed but the resource is not in a state that allows it'),
        401: errorResponse('Missing, invalid or expired bearer token'),
        403: errorResponse('The token lacks the role this operation needs'),
        404: errorResponse('Not found in the caller’s tenant'),
        409: errorResponse('Conflicts with the current state'),
        422: {
          description: 'Validation error',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/ValidationError' } } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Boardroom REST compatibility API',
      version: '1.0.0',
      description:
        'The /api/v1 routes, each served by running the GraphQL operation of the same name at /graphql.',
    },
    paths,
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: { ValidationError: validationError, Problem: problem },
    },
  };
}
