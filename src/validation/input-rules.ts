import {
  type GraphQLArgument,
  type GraphQLInputObjectType,
  type GraphQLInputType,
  getNullableType,
  isInputObjectType,
  isListType,
  isScalarType,
} from 'graphql';
import type { ValidationDetail } from './pydantic.js';

/**
 * Rules every input obeys whatever its field, checked before a field's own zod rules, for GraphQL (every
 * field with arguments) and REST (the same arguments, located in path, query or body) alike:
 * - text (strings and the keys of JSON objects) holds neither NUL nor unpaired surrogates, which
 *   PostgreSQL cannot store;
 * - a free-form JSON value nests at most `JSON_MAX_DEPTH` levels and serializes to at most
 *   `JSON_MAX_BYTES` bytes; a value of the wrong shape (an object where text is expected) nests no
 *   deeper either, so that no error message has to echo an unbounded value.
 */
export const JSON_MAX_DEPTH = 64;
export const JSON_MAX_BYTES = 1024 * 1024;
/**
 * Deepest nesting of a whole request input (GraphQL variables, a REST body): a free-form JSON field may nest
 * `JSON_MAX_DEPTH` levels under input objects and lists that add a few more.
 */
export const MAX_VARIABLES_DEPTH = 2 * JSON_MAX_DEPTH;
/** More items than this in one answer say nothing more; the rest are left out. */
export const MAX_REPORTED_ITEMS = 100;

const NUL = '\u0000';
const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

type Loc = (string | number)[];

/** Why a text cannot be stored, worded as Pydantic words it; null for a text that can. */
export function textProblem(text: string): Omit<ValidationDetail, 'loc' | 'input'> | null {
  if (UNPAIRED_SURROGATE.test(text)) {
    // Pydantic's own type for text that is not valid Unicode.
    return {
      type: 'string_unicode',
      msg: 'Input should be a valid string, unable to parse raw data as a unicode string',
    };
  }
  if (text.includes(NUL)) {
    const error = 'NUL characters (U+0000) are not allowed';
    return { type: 'value_error', msg: `Value error, ${error}`, ctx: { error } };
  }
  return null;
}

function valueError(loc: Loc, error: string): ValidationDetail {
  // The value is not echoed: it may be as large or as deep as the rule refuses.
  return { type: 'value_error', loc, msg: `Value error, ${error}`, input: null, ctx: { error } };
}

/** Nesting depth of a parsed JSON value, without recursion; stops counting past `limit`. */
export function depthOf(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    const here = depth + 1;
    if (here > deepest) deepest = here;
    if (deepest > limit) return deepest;
    for (const item of Array.isArray(current) ? current : Object.values(current)) stack.push([item, here]);
  }
  return deepest;
}

/**
 * A whole request input, including what no argument reads (a REST body's unknown keys, which a refusal may
 * echo): nested at most `MAX_VARIABLES_DEPTH` levels. Empty when it is.
 */
export function inspectNesting(value: unknown, loc: Loc): ValidationDetail[] {
  if (depthOf(value, MAX_VARIABLES_DEPTH) <= MAX_VARIABLES_DEPTH) return [];
  return [valueError(loc, `JSON should be nested at most ${MAX_VARIABLES_DEPTH} levels deep`)];
}

const isContainer = (value: unknown): value is object => typeof value === 'object' && value !== null;

/**
 * A value without a declared shape (a JSON scalar, or a value where the schema expects something else):
 * its depth, its texts and keys and, for JSON fields, its serialized size. Iterative, so that no depth of
 * input can exhaust the stack.
 */
function inspectFreeForm(value: unknown, loc: Loc, maxBytes: number | null, out: ValidationDetail[]) {
  const found: ValidationDetail[] = [];
  const stack: { value: unknown; loc: Loc; depth: number }[] = [{ value, loc, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop() as { value: unknown; loc: Loc; depth: number };
    if (typeof frame.value === 'string') {
      const problem = textProblem(frame.value);
      if (problem) found.push({ ...problem, loc: frame.loc, input: frame.value });
      continue;
    }
    if (!isContainer(frame.value)) continue;
    const depth = frame.depth + 1;
    if (depth > JSON_MAX_DEPTH) {
      out.push(valueError(loc, `JSON should be nested at most ${JSON_MAX_DEPTH} levels deep`));
      return;
    }
    if (Array.isArray(frame.value)) {
      for (let index = frame.value.length - 1; index >= 0; index--) {
        stack.push({ value: frame.value[index], loc: [...frame.loc, index], depth });
      }
      continue;
    }
    const entries = Object.entries(frame.value);
    for (let index = entries.length - 1; index >= 0; index--) {
      const [key, item] = entries[index] as [string, unknown];
      const problem = textProblem(key);
      // Pydantic locates a bad dictionary key as `[..., key, "[key]"]`.
      if (problem) found.push({ ...problem, loc: [...frame.loc, key, '[key]'], input: key });
      stack.push({ value: item, loc: [...frame.loc, key], depth });
    }
  }
  out.push(...found);
  if (maxBytes !== null && found.length === 0 && isContainer(value)) {
    const bytes = Buffer.byteLength(JSON.stringify(value) ?? '');
    if (bytes > maxBytes) out.push(valueError(loc, `JSON should be at most ${maxBytes} bytes, got ${bytes}`));
  }
}

type Shape =
  | { kind: 'json' }
  | { kind: 'list'; item: GraphQLInputType }
  | { kind: 'object'; type: GraphQLInputObjectType }
  | { kind: 'other' };

const OTHER: Shape = { kind: 'other' };
const shapes = new WeakMap<GraphQLInputType, Shape>();

/** What the walk needs of a declared type, worked out once per type rather than once per value. */
function shapeOf(type: GraphQLInputType | undefined): Shape {
  if (!type) return OTHER;
  let shape = shapes.get(type);
  if (!shape) {
    const nullable = getNullableType(type);
    if (isScalarType(nullable) && nullable.toString() === 'JSON') shape = { kind: 'json' };
    else if (isListType(nullable)) shape = { kind: 'list', item: nullable.ofType as GraphQLInputType };
    else if (isInputObjectType(nullable)) shape = { kind: 'object', type: nullable };
    else shape = OTHER;
    shapes.set(type, shape);
  }
  return shape;
}

/** A value met while following the declared input types; its location is built only if it breaks a rule. */
interface TypedFrame {
  type: GraphQLInputType | undefined;
  value: unknown;
  parent: TypedFrame | undefined;
  key: string | number | undefined;
}

function locOf(root: Loc, frame: TypedFrame): Loc {
  const keys: (string | number)[] = [];
  for (let at: TypedFrame | undefined = frame; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return [...root, ...keys.reverse()];
}

/**
 * Follows the declared input types; anything off them is inspected as free-form. A list of a thousand
 * input objects is the common large input (a batch of events): text and scalars on the declared types are
 * checked in place, without the free-form walk.
 */
function inspectValue(type: GraphQLInputType | undefined, value: unknown, loc: Loc, out: ValidationDetail[]) {
  const stack: TypedFrame[] = [{ type, value, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const frame = stack.pop() as TypedFrame;
    const shape = shapeOf(frame.type);
    if (shape.kind === 'json') {
      inspectFreeForm(frame.value, locOf(loc, frame), JSON_MAX_BYTES, out);
    } else if (typeof frame.value === 'string') {
      const problem = textProblem(frame.value);
      if (problem) out.push({ ...problem, loc: locOf(loc, frame), input: frame.value });
    } else if (!isContainer(frame.value)) {
      // Numbers, booleans and null break no input rule.
    } else if (shape.kind === 'list' && Array.isArray(frame.value)) {
      for (let index = 0; index < frame.value.length; index++) {
        stack.push({ type: shape.item, value: frame.value[index], parent: frame, key: index });
      }
    } else if (shape.kind === 'object' && !Array.isArray(frame.value)) {
      const fields = shape.type.getFields();
      for (const key of Object.keys(frame.value)) {
        const item = (frame.value as Record<string, unknown>)[key];
        stack.push({ type: fields[key]?.type, value: item, parent: frame, key });
      }
    } else {
      inspectFreeForm(frame.value, locOf(loc, frame), null, out);
    }
  }
}

/**
 * The items of every input rule broken by `values`, the arguments of a field with declared `args`;
 * `loc` is relative to the arguments, as for the field's zod rules. Empty when every rule holds.
 */
export function inspectArguments(
  args: readonly GraphQLArgument[],
  values: Readonly<Record<string, unknown>>,
): ValidationDetail[] {
  const out: ValidationDetail[] = [];
  const declared = new Map(args.map((arg) => [arg.name, arg.type]));
  for (const [name, value] of Object.entries(values)) inspectValue(declared.get(name), value, [name], out);
  return out.slice(0, MAX_REPORTED_ITEMS);
}
