import { createGraphQLError, type Plugin } from 'graphql-yoga';
import { depthOf, MAX_VARIABLES_DEPTH } from '../validation/input-rules.js';

export interface UseInputDepthLimitOptions {
  /**
   * Deepest accepted nesting of `variables` and `extensions`, and of brackets and braces in the document.
   * Default 128 (`MAX_VARIABLES_DEPTH`).
   */
  maxDepth?: number;
}

/**
 * Deepest nesting of brackets and braces in a GraphQL document, outside strings and comments, without
 * parsing it (the parser recurses once per level); stops counting past `limit`.
 */
export function documentDepthOf(source: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let index = 0;
  while (index < source.length) {
    const char = source[index];
    if (char === '#') {
      while (index < source.length && source[index] !== '\n' && source[index] !== '\r') index++;
    } else if (char === '"') {
      const block = source.startsWith('"""', index);
      index += block ? 3 : 1;
      while (index < source.length) {
        if (block ? source.startsWith('"""', index) : source[index] === '"') break;
        if (!block && (source[index] === '\n' || source[index] === '\r')) break;
        if (source[index] !== '\\') index += 1;
        // In a string a backslash escapes the next character; in a block string only \""" is an escape.
        else if (!block) index += 2;
        else index += source.startsWith('\\"""', index) ? 4 : 1;
      }
      index += block ? 3 : 1;
      continue;
    } else if (char === '[' || char === '{' || char === '(') {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if (char === ']' || char === '}' || char === ')') {
      depth--;
    }
    index++;
  }
  return deepest;
}

function tooDeep(what: string, maxDepth: number) {
  return createGraphQLError(`${what} nested deeper than ${maxDepth} levels`, {
    extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
  });
}

/**
 * Refuses variables, and documents (literal values), nested deeper than any input needs before anything
 * walks them recursively (the parser, the response cache key, variable coercion, logging): a 400
 * `BAD_USER_INPUT` over HTTP, an error result over graphql-ws, never a stack overflow. The fields' own
 * input rules then bound each JSON value.
 */
export function useInputDepthLimit({
  maxDepth = MAX_VARIABLES_DEPTH,
}: UseInputDepthLimitOptions = {}): Plugin {
  const exceeds = (variables: unknown, extensions: unknown) =>
    depthOf(variables, maxDepth) > maxDepth || depthOf(extensions, maxDepth) > maxDepth;
  return {
    onParams({ params }) {
      if (exceeds(params.variables, params.extensions)) throw tooDeep('Variables are', maxDepth);
    },
    onParse({ params }) {
      const source = typeof params.source === 'string' ? params.source : params.source.body;
      if (documentDepthOf(source, maxDepth) > maxDepth) throw tooDeep('The document is', maxDepth);
    },
    // graphql-ws queries and mutations do not pass through onParams; the response cache keys them in
    // onExecute. (Subscriptions have no such walk: coercion refuses a deep value at its first level.)
    onExecute({ args, setResultAndStopExecution }) {
      if (exceeds(args.variableValues, undefined)) {
        setResultAndStopExecution({ errors: [tooDeep('Variables are', maxDepth)] });
      }
    },
  };
}
