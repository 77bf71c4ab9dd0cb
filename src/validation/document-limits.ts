import type { EnvelopArmorPlugin } from '@escape.tech/graphql-armor';
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type OperationDefinitionNode,
  parse,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';
import { MAX_VARIABLES_DEPTH } from './input-rules.js';

/**
 * The bounds of every GraphQL document a client sends. yoga enforces them while it parses (nesting:
 * useInputDepthLimit, tokens: graphql-armor) and validates (depth, cost, aliases, directives: graphql-armor);
 * anything that reads a document before that (the response cache's key) parses it with
 * `parseWithinLimits`, which checks the two cheap ones first.
 */
export const DOCUMENT_LIMITS = {
  /** Lexical tokens in a document. */
  maxTokens: 5000,
  /** Nesting of brackets, braces and parentheses (selections and literal values). */
  maxNesting: MAX_VARIABLES_DEPTH,
  /** Depth of selections, fragments included. */
  maxDepth: 12,
  /** graphql-armor's cost of an operation (each fragment spread counts the fragment again). */
  maxCost: 5000,
  maxAliases: 40,
  maxDirectives: 20,
} as const;

const reportInValidation = [
  (context: ValidationContext | null, error: GraphQLError) => context?.reportError(error),
];

/**
 * graphql-armor's share of DOCUMENT_LIMITS. The token limit throws from the parser (400
 * GRAPHQL_PARSE_FAILED); the others are reported like any validation rule's error (400
 * GRAPHQL_VALIDATION_FAILED) instead of being thrown out of validation, which yoga would answer 200 with an
 * error that has no code.
 */
export const armorLimits = {
  maxTokens: { n: DOCUMENT_LIMITS.maxTokens },
  maxDepth: { n: DOCUMENT_LIMITS.maxDepth, propagateOnRejection: false, onReject: reportInValidation },
  costLimit: { maxCost: DOCUMENT_LIMITS.maxCost, propagateOnRejection: false, onReject: reportInValidation },
  maxAliases: { n: DOCUMENT_LIMITS.maxAliases, propagateOnRejection: false, onReject: reportInValidation },
  maxDirectives: {
    n: DOCUMENT_LIMITS.maxDirectives,
    propagateOnRejection: false,
    onReject: reportInValidation,
  },
} satisfies Parameters<typeof EnvelopArmorPlugin>[0];

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

/** The refusal of a document (or variables) nested deeper than `maxDepth`: 400 BAD_USER_INPUT. */
export function nestedTooDeep(what: string, maxDepth: number): GraphQLError {
  return new GraphQLError(`${what} nested deeper than ${maxDepth} levels`, {
    extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
  });
}

/**
 * Parses a client's document for a reader that runs before yoga's own parse and validation: the nesting is
 * counted first without recursion, then the parser stops at the token limit, so the work is linear in the
 * document's size and bounded. Throws a GraphQLError (the nesting refusal or a syntax error).
 */
export function parseWithinLimits(source: string): DocumentNode {
  if (documentDepthOf(source, DOCUMENT_LIMITS.maxNesting) > DOCUMENT_LIMITS.maxNesting) {
    throw nestedTooDeep('The document is', DOCUMENT_LIMITS.maxNesting);
  }
  return parse(source, { noLocation: true, maxTokens: DOCUMENT_LIMITS.maxTokens });
}

/** The operation a request runs: the one named, or the only one. Undefined when none can be picked. */
export function operationOf(
  document: DocumentNode,
  operationName: string | null | undefined,
): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  if (operationName) return operations.find((operation) => operation.name?.value === operationName);
  return operations.length === 1 ? operations[0] : undefined;
}

/**
 * Names of the root fields an operation selects, through inline fragments and fragment spreads, of a
 * document that has not been validated. Each fragment is entered once, however often it is spread, so the
 * walk is linear in the document's size and ends on a cycle (validation refuses the cycle later).
 */
export function rootFieldNamesOf(document: DocumentNode, operation: OperationDefinitionNode): Set<string> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(definition.name.value)) {
      fragments.set(definition.name.value, definition);
    }
  }
  const names = new Set<string>();
  const entered = new Set<string>();
  const pending: SelectionSetNode[] = [operation.selectionSet];
  for (let selectionSet = pending.pop(); selectionSet; selectionSet = pending.pop()) {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) pending.push(selection.selectionSet);
      else if (!entered.has(selection.name.value)) {
        entered.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) pending.push(fragment.selectionSet);
      }
    }
  }
  return names;
}
