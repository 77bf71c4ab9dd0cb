import type { Plugin } from 'graphql-yoga';
import { documentDepthOf, nestedTooDeep as tooDeep } from '../validation/document-limits.js';
import { depthOf, MAX_VARIABLES_DEPTH } from '../validation/input-rules.js';

export interface UseInputDepthLimitOptions {
  /**
   * Deepest accepted nesting of `variables` and `extensions`, and of brackets and braces in the document.
   * Default 128 (`MAX_VARIABLES_DEPTH`).
   */
  maxDepth?: number;
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
