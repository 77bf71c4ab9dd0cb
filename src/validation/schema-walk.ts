import type { z } from 'zod';

type AnySchema = z.core.$ZodType;

interface Def {
  type: string;
  shape?: Record<string, AnySchema>;
  element?: AnySchema;
  innerType?: AnySchema;
  in?: AnySchema;
  out?: AnySchema;
  options?: AnySchema[];
  valueType?: AnySchema;
  getter?: () => AnySchema;
  format?: string;
}

const defOf = (schema: AnySchema) => (schema as unknown as { _zod: { def: Def } })._zod.def;

const wrappers = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** The schema with optional/nullable/default/pipe wrappers removed. */
export function unwrap(schema: AnySchema): AnySchema {
  let current = schema;
  for (;;) {
    const def = defOf(current);
    if (wrappers.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.in;
    else if (def.type === 'lazy' && def.getter) current = def.getter();
    else return current;
  }
}

export function kindOf(schema: AnySchema): { type: string; format?: string | undefined } {
  const def = defOf(unwrap(schema));
  return { type: def.type, format: def.format };
}

export function objectShape(schema: AnySchema): Record<string, AnySchema> | undefined {
  const def = defOf(unwrap(schema));
  if (def.type === 'object') return def.shape;
  if (def.type === 'union' || def.type === 'intersection') {
    const merged: Record<string, AnySchema> = {};
    for (const option of def.options ?? []) Object.assign(merged, objectShape(option) ?? {});
    return merged;
  }
  return undefined;
}

/** The schema found by following `path` (object keys and array indexes) from `schema`. */
export function schemaAt(schema: AnySchema, path: readonly PropertyKey[]): AnySchema | undefined {
  let current: AnySchema | undefined = schema;
  for (const segment of path) {
    if (!current) return undefined;
    const def = defOf(unwrap(current));
    if (def.type === 'array') current = def.element;
    else if (def.type === 'record') current = def.valueType;
    else current = objectShape(current)?.[String(segment)];
  }
  return current;
}

export const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/**
 * Renames the snake_case keys of a REST body to the camelCase keys of `schema`, only where the schema
 * declares an object with that key: free-form JSON fields (records, unknown) keep their keys as sent.
 */
export function camelizeInput(schema: AnySchema, value: unknown): unknown {
  const def = defOf(unwrap(schema));
  if (def.type === 'array' && def.element && Array.isArray(value)) {
    const element = def.element;
    return value.map((item) => camelizeInput(element, item));
  }
  const shape = objectShape(schema);
  if (!shape || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const bySnake = new Map(Object.keys(shape).map((key) => [snakeCase(key), key]));
  const result: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const camel = bySnake.get(key);
    if (camel === undefined) continue;
    result[camel] = camelizeInput(shape[camel] as AnySchema, item);
  }
  return result;
}

/** The REST spelling of a path into `schema`: object keys in snake_case, indexes and record keys as they are. */
export function snakePath(schema: AnySchema, path: readonly PropertyKey[]): (string | number)[] {
  const out: (string | number)[] = [];
  let current: AnySchema | undefined = schema;
  for (const segment of path) {
    const isObject = current ? !!objectShape(current) && kindOf(current).type !== 'record' : false;
    out.push(typeof segment === 'number' ? segment : isObject ? snakeCase(String(segment)) : String(segment));
    current = current ? schemaAt(current, [segment]) : undefined;
  }
  return out;
}
