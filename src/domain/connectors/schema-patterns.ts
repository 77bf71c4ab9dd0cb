import { RE2JS } from 're2js';
import { DomainError } from '../errors.js';

/**
 * Regular expressions of tenant JSON Schemas (`pattern`, the keys of `patternProperties`) run on RE2JS, a
 * port of RE2: matching is linear in the input, so neither a caller's body nor an upstream's response can
 * hold the event loop with a pattern such as `^(a+)+$`. RE2 has no backreferences and no lookaround;
 * such patterns are refused when a template is saved.
 */

/** Why a pattern cannot be evaluated here; thrown by the engine ajv uses, so ajv refuses the schema. */
export class PatternRefusedError extends DomainError {
  override name = 'PatternRefusedError';
  readonly code = 'BAD_USER_INPUT';
  constructor(
    readonly pattern: string,
    readonly why: string,
  ) {
    super(`the pattern ${JSON.stringify(pattern)} ${why}`);
  }
}

const NO_LINEAR_TIME = 'cannot be evaluated in linear time (backreferences and lookaround are not supported)';

/** ECMAScript's white space and line terminators (`\s`), which RE2 reduces to ASCII. */
const WHITE_SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * An ECMAScript pattern (valid with the `u` flag) rewritten where RE2 would read it otherwise, in one pass:
 * `.` and `\s`/`\S` outside a class and `\s` and `[` inside one get ECMAScript's meaning (RE2's `.` matches
 * `\r`, its `\s` is ASCII only, `[:alpha:]` is a class to it); a backreference (`\1`…`\9`, `\k<name>`), which RE2 cannot evaluate and
 * RE2JS.translateRegExp would turn into a literal, is refused.
 */
function withEcmaScriptMeaning(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let index = 0; index < pattern.length; index += 1) {
    const char = pattern[index] as string;
    if (char === '\\') {
      const next = pattern[index + 1] ?? '';
      index += 1;
      if (/[1-9k]/u.test(next)) {
        throw new PatternRefusedError(pattern, `${NO_LINEAR_TIME}: \\${next} is a backreference`);
      }
      if (next === 's') out += inClass ? WHITE_SPACE : `[${WHITE_SPACE}]`;
      else if (next === 'S' && !inClass) out += `[^${WHITE_SPACE}]`;
      else out += `\\${next}`;
    } else if (inClass) {
      if (char === ']') inClass = false;
      // A `[` in a class is itself (`[[:alpha:]]` is no POSIX class in ECMAScript).
      out += char === '[' ? '\\[' : char;
    } else if (char === '[') {
      inClass = true;
      out += char;
    } else {
      out += char === '.' ? '[^\\n\\r\\u2028\\u2029]' : char;
    }
  }
  return out;
}

function compileLinear(pattern: string): RE2JS {
  // JSON Schema patterns are ECMAScript regular expressions: one the language refuses is refused here too.
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    throw new PatternRefusedError(pattern, `is not a valid regular expression: ${(error as Error).message}`);
  }
  const rewritten = withEcmaScriptMeaning(pattern);
  try {
    return RE2JS.compile(RE2JS.translateRegExp(rewritten));
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /u, '');
    throw new PatternRefusedError(pattern, `${NO_LINEAR_TIME}: ${reason}`);
  }
}

/**
 * The regular expression engine ajv is given (its `code.regExp` option): a pattern tests as ECMAScript's
 * `RegExp#test` does (a match anywhere), on RE2JS. `code` names it in ajv's standalone code, which this
 * service does not generate.
 */
export const linearRegExp = Object.assign(
  (pattern: string) => {
    const compiled = compileLinear(pattern);
    // ajv keys its compiled patterns by their text: each must print as its own.
    return { test: (input: string) => compiled.test(input), toString: () => pattern };
  },
  { code: 're2js' },
);

/** Why `pattern` is refused, or null when the engine evaluates it. */
export function checkPattern(pattern: string): string | null {
  try {
    compileLinear(pattern);
    return null;
  } catch (error) {
    if (error instanceof PatternRefusedError) return `the pattern ${error.why}`;
    throw error;
  }
}

type Path = (string | number)[];
type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keywords whose value is one schema, an array of schemas, or a map of name → schema. */
const ONE_SCHEMA = [
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
];
const SCHEMA_LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];
const SCHEMA_MAP = ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas'];

export interface PatternProblem {
  /** Where the pattern is, from the schema's root. */
  path: Path;
  pattern: string;
  message: string;
}

/**
 * Every pattern of a JSON Schema that the engine cannot evaluate, with its place: `pattern` in each
 * subschema and the keys of `patternProperties`. Only places that hold schemas are walked (`properties`
 * values, `items`, `allOf`, ...), never data (`const`, `enum`, `default`, `examples`). Linear in the
 * schema's size; a pattern only reachable through an unusual `$ref` is refused when the schema is used.
 */
export function findRefusedPatterns(schema: unknown, at: Path = []): PatternProblem[] {
  const problems: PatternProblem[] = [];
  const report = (pattern: string, path: Path) => {
    const reason = checkPattern(pattern);
    if (reason !== null) problems.push({ path, pattern, message: reason });
  };
  const walk = (node: unknown, path: Path): void => {
    if (!isObject(node)) return;
    if (typeof node.pattern === 'string') report(node.pattern, [...path, 'pattern']);
    if (isObject(node.patternProperties)) {
      for (const key of Object.keys(node.patternProperties)) report(key, [...path, 'patternProperties', key]);
    }
    for (const keyword of ONE_SCHEMA) walk(node[keyword], [...path, keyword]);
    for (const keyword of SCHEMA_LIST) {
      const list = node[keyword];
      if (Array.isArray(list)) {
        for (const [index, item] of list.entries()) walk(item, [...path, keyword, index]);
      }
    }
    for (const keyword of SCHEMA_MAP) {
      const map = node[keyword];
      if (isObject(map)) for (const [name, item] of Object.entries(map)) walk(item, [...path, keyword, name]);
    }
    if (Array.isArray(node.items)) {
      for (const [index, item] of node.items.entries()) walk(item, [...path, 'items', index]);
    } else walk(node.items, [...path, 'items']);
    // draft-07 `dependencies`: a list of property names, or a schema.
    if (isObject(node.dependencies)) {
      for (const [name, item] of Object.entries(node.dependencies))
        walk(item, [...path, 'dependencies', name]);
    }
  };
  walk(schema, at);
  return problems;
}
