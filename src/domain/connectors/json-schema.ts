import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { linearRegExp } from './schema-patterns.js';

type AddFormats = (ajv: Ajv) => Ajv;
// ajv-formats is CommonJS with a default export; under NodeNext it arrives as the module object.
const addFormats: AddFormats =
  (addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats);

/** How many compiled schemas are kept; the oldest is dropped beyond this. */
const CACHE_SIZE = 500;
const compiled = new Map<string, ValidateFunction | string>();

/** One schema problem: where in the value (JSON Pointer segments) and what. */
export interface SchemaProblem {
  path: (string | number)[];
  keyword: string;
  message: string;
  /** For `required`: the missing property; for `additionalProperties`: the extra one. */
  property?: string;
}

export type SchemaCheck = { valid: true } | { valid: false; problems: SchemaProblem[] };

/**
 * Compiles a tenant-supplied JSON Schema, or answers why it cannot be. Each schema gets its own Ajv instance,
 * so `$id`s of different tenants' schemas never meet; compiled schemas are cached by their text. Patterns
 * run on a linear-time engine (schema-patterns.ts): a pattern it cannot evaluate makes the schema refused.
 */
export function compileSchema(schema: Record<string, unknown>): ValidateFunction | string {
  const key = JSON.stringify(schema);
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  let result: ValidateFunction | string;
  try {
    const ajv = new Ajv({
      allErrors: true,
      strict: false,
      validateSchema: true,
      addUsedSchema: false,
      code: { regExp: linearRegExp },
    });
    addFormats(ajv);
    result = ajv.compile(schema);
  } catch (error) {
    result = (error as Error).message;
  }
  if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value as string);
  compiled.set(key, result);
  return result;
}

function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment));
}

function toProblem(error: ErrorObject): SchemaProblem {
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  const property = params.missingProperty ?? params.additionalProperty;
  return {
    path: pointerSegments(error.instancePath),
    keyword: error.keyword,
    message: error.message ?? `fails ${error.keyword}`,
    ...(property !== undefined ? { property } : {}),
  };
}

/** Checks a value against a compiled schema. */
export function checkAgainst(validate: ValidateFunction, value: unknown): SchemaCheck {
  if (validate(value)) return { valid: true };
  return { valid: false, problems: (validate.errors ?? []).map(toProblem) };
}
