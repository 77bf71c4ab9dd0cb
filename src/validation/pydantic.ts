import type { z } from 'zod';
import { kindOf, schemaAt } from './schema-walk.js';

/** One item of a FastAPI/Pydantic v2 `{"detail": [...]}` body. */
export interface ValidationDetail {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

type Issue = z.core.$ZodIssue;

/** Marks a refinement's issue with a Pydantic type; without it a custom issue is a `value_error`. */
export interface IssueParams {
  type?: string;
  ctx?: Record<string, unknown>;
}

const typeWords: Record<string, [string, string]> = {
  string: ['string_type', 'Input should be a valid string'],
  number: ['float_type', 'Input should be a valid number'],
  boolean: ['bool_type', 'Input should be a valid boolean'],
  // A nested model: FastAPI validates bodies with `from_attributes=True`, which words it so.
  object: ['model_attributes_type', 'Input should be a valid dictionary or object to extract fields from'],
  record: ['dict_type', 'Input should be a valid dictionary'],
  array: ['list_type', 'Input should be a valid list'],
};

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

function quoteList(values: readonly unknown[]): string {
  const quoted = values.map((value) => `'${String(value)}'`);
  return quoted.length <= 1 ? (quoted[0] ?? '') : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function uuidMessage(input: unknown): string {
  const text = String(input);
  const bad = /[^0-9a-fA-F-]/.exec(text);
  if (bad) {
    return `Input should be a valid UUID, invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${bad[0]}\` at ${bad.index + 1}`;
  }
  const groups = text.split('-').length;
  if (groups !== 5) return `Input should be a valid UUID, invalid group count: expected 5, found ${groups}`;
  return `Input should be a valid UUID, invalid length: expected 36 characters, found ${text.length}`;
}

const bounds = {
  min: {
    string: ['string_too_short', 'at least', 'min_length'],
    list: ['too_short', 'at least', 'min_length'],
    inclusive: ['greater_than_equal', 'greater than or equal to', 'ge'],
    exclusive: ['greater_than', 'greater than', 'gt'],
  },
  max: {
    string: ['string_too_long', 'at most', 'max_length'],
    list: ['too_long', 'at most', 'max_length'],
    inclusive: ['less_than_equal', 'less than or equal to', 'le'],
    exclusive: ['less_than', 'less than', 'lt'],
  },
} as const;

/** Length and range violations, worded as Pydantic words them for strings, lists and numbers. */
function sizeIssue(
  side: 'min' | 'max',
  limit: number,
  origin: string,
  inclusive: boolean,
  input: unknown,
): Omit<ValidationDetail, 'loc'> {
  const words = bounds[side];
  if (origin === 'string') {
    const [type, phrase, key] = words.string;
    return {
      type,
      msg: `String should have ${phrase} ${plural(limit, 'character')}`,
      input,
      ctx: { [key]: limit },
    };
  }
  if (origin === 'array' || origin === 'set') {
    const [type, phrase, key] = words.list;
    const actual = Array.isArray(input) ? input.length : 0;
    return {
      type,
      msg: `List should have ${phrase} ${plural(limit, 'item')} after validation, not ${actual}`,
      input,
      ctx: { field_type: 'List', [key]: limit, actual_length: actual },
    };
  }
  const [type, phrase, key] = inclusive ? words.inclusive : words.exclusive;
  return { type, msg: `Input should be ${phrase} ${limit}`, input, ctx: { [key]: limit } };
}

function describe(issue: Issue, schema: z.core.$ZodType, root: unknown): Omit<ValidationDetail, 'loc'> {
  const input = 'input' in issue ? issue.input : valueAt(root, issue.path);
  const target = schemaAt(schema, issue.path);
  const kind = target ? kindOf(target) : { type: 'unknown' };
  const integer = kind.format === 'safeint' || kind.format === 'int32' || kind.format === 'int64';
  switch (issue.code) {
    case 'invalid_type': {
      if (input === undefined) {
        return {
          type: 'missing',
          msg: 'Field required',
          input: valueAt(root, issue.path.slice(0, -1)) ?? null,
        };
      }
      if (integer || issue.expected === 'int') {
        if (typeof input === 'string') {
          return {
            type: 'int_parsing',
            msg: 'Input should be a valid integer, unable to parse string as an integer',
            input,
          };
        }
        if (typeof input === 'number' && Number.isFinite(input)) {
          return {
            type: 'int_from_float',
            msg: 'Input should be a valid integer, got a number with a fractional part',
            input,
          };
        }
        return { type: 'int_type', msg: 'Input should be a valid integer', input };
      }
      if (issue.expected === 'number' && typeof input === 'number') {
        // JSON such as 1e999 parses to infinity.
        return { type: 'finite_number', msg: 'Input should be a finite number', input };
      }
      if (issue.expected === 'boolean' && typeof input === 'string') {
        return {
          type: 'bool_parsing',
          msg: 'Input should be a valid boolean, unable to interpret input',
          input,
        };
      }
      const [type, msg] = typeWords[issue.expected] ?? ['value_error', `Value error, ${issue.message}`];
      return { type, msg, input };
    }
    case 'too_small':
      return sizeIssue('min', Number(issue.minimum), issue.origin, issue.inclusive ?? true, input);
    case 'too_big':
      return sizeIssue('max', Number(issue.maximum), issue.origin, issue.inclusive ?? true, input);
    case 'invalid_value': {
      // An enum or literal that is absent is missing, as in Pydantic, not a wrong choice.
      if (input === undefined) {
        return {
          type: 'missing',
          msg: 'Field required',
          input: valueAt(root, issue.path.slice(0, -1)) ?? null,
        };
      }
      const expected = quoteList(issue.values);
      return { type: 'enum', msg: `Input should be ${expected}`, input, ctx: { expected } };
    }
    case 'invalid_format': {
      if (issue.format === 'uuid' || issue.format === 'guid')
        return { type: 'uuid_parsing', msg: uuidMessage(input), input };
      if (issue.format === 'regex' && 'pattern' in issue) {
        const pattern = String(issue.pattern).replace(/^\/|\/[a-z]*$/g, '');
        return {
          type: 'string_pattern_mismatch',
          msg: `String should match pattern '${pattern}'`,
          input,
          ctx: { pattern },
        };
      }
      return {
        type: 'value_error',
        msg: `Value error, ${issue.message}`,
        input,
        ctx: { error: issue.message },
      };
    }
    case 'custom': {
      const params = (issue.params ?? {}) as IssueParams;
      if (params.type)
        return { type: params.type, msg: issue.message, input, ...(params.ctx ? { ctx: params.ctx } : {}) };
      return {
        type: 'value_error',
        msg: `Value error, ${issue.message}`,
        input,
        ctx: { error: issue.message },
      };
    }
    default:
      return {
        type: 'value_error',
        msg: `Value error, ${issue.message}`,
        input,
        ctx: { error: issue.message },
      };
  }
}

/** Turns zod issues into Pydantic v2 items with `loc` relative to the validated value. */
export function toValidationDetail(
  issues: readonly Issue[],
  schema: z.core.$ZodType,
  root: unknown,
): ValidationDetail[] {
  return issues.map((issue) => {
    const { type, msg, input, ctx } = describe(issue, schema, root);
    const loc = issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)));
    return ctx
      ? { type, loc, msg, input: input === undefined ? null : input, ctx }
      : { type, loc, msg, input: input === undefined ? null : input };
  });
}
