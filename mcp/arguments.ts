import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { CompiledOperation } from '../rest/compile.js';
import type { ValidationDetail } from '../src/validation/index.js';

export type JsonSchema = Record<string, unknown>;

/** An MCP tool's arguments as JSON Schema: an object of the listed properties, nothing else. */
export interface ToolInputSchema {
  type: 'object';
  properties: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties: false;
  [key: string]: unknown;
}

function wholeSchemaOf(argsSchema: z.ZodType | undefined): JsonSchema {
  if (!argsSchema) return {};
  const { $schema: _ignored, ...rest } = z.toJSONSchema(argsSchema, {
    io: 'input',
    unrepresentable: 'any',
    target: 'draft-2020-12',
    // A named format says it all: the regular expression zod spells it with (about 200 tokens for an ISO
    // date-time) would be sent to the model with every tool list. The rule still checks it.
    override: ({ jsonSchema }) => {
      if (typeof jsonSchema.format === 'string') delete jsonSchema.pattern;
    },
  }) as JsonSchema;
  return rest;
}

/**
 * The JSON Schema of a tool whose arguments fill an operation's variables (`argument → dotted variable
 * path`): each argument's schema is the field's own zod rule at that path, required when every step of the
 * path is. The rules are still checked where they are defined, when the operation runs.
 */
export function inputSchemaOf(compiled: CompiledOperation, mapping: Record<string, string>): ToolInputSchema {
  const whole = wholeSchemaOf(compiled.argsSchema);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [argument, path] of Object.entries(mapping)) {
    let node: JsonSchema | undefined = whole;
    let isRequired = true;
    for (const segment of path.split('.')) {
      isRequired &&= Array.isArray(node?.required) && (node.required as string[]).includes(segment);
      node = (node?.properties as Record<string, JsonSchema> | undefined)?.[segment];
    }
    properties[argument] = node ?? {};
    if (isRequired) required.push(argument);
  }
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

/** JSON-RPC's invalid-params error: the call was refused before anything ran, or by an input rule. */
export const invalidParams = (message: string, data?: unknown) =>
  new McpError(ErrorCode.InvalidParams, message, data);

/**
 * Checks a call's arguments against the tool's shape (an object, no unknown argument, every required one),
 * then fills the operation's variables from them. Types and bounds are the operation's to check.
 */
export function variablesOf(
  schema: ToolInputSchema,
  mapping: Record<string, string>,
  args: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const given = args ?? {};
  const unknown = Object.keys(given).filter((name) => !Object.hasOwn(schema.properties, name));
  if (unknown.length > 0)
    throw invalidParams(`Unknown argument${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
  const missing = (schema.required ?? []).filter((name) => given[name] === undefined);
  if (missing.length > 0)
    throw invalidParams(`Missing required argument${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  const variables: Record<string, unknown> = {};
  for (const [argument, path] of Object.entries(mapping)) {
    const value = given[argument];
    if (value === undefined) continue;
    const segments = path.split('.');
    let target = variables;
    for (const segment of segments.slice(0, -1)) {
      target[segment] ??= {};
      target = target[segment] as Record<string, unknown>;
    }
    target[segments[segments.length - 1] as string] = value;
  }
  return variables;
}

/** Validation items located at a tool's arguments instead of the operation's variables. */
export function toToolDetail(
  mapping: Record<string, string>,
  detail: ValidationDetail[],
): ValidationDetail[] {
  const byPath = Object.entries(mapping)
    .map(([argument, path]) => ({ argument, path: path.split('.') }))
    .sort((a, b) => b.path.length - a.path.length);
  return detail.map((item) => {
    const found = byPath.find(({ path }) => path.every((segment, index) => item.loc[index] === segment));
    return found ? { ...item, loc: [found.argument, ...item.loc.slice(found.path.length)] } : item;
  });
}
