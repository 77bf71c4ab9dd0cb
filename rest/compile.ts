import {
  type DocumentNode,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
  getNamedType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  print,
  type SelectionSetNode,
  typeFromAST,
} from 'graphql';
import { z } from 'zod';
import type { Viewer } from '../src/auth/viewer.js';
import { scopesOf } from '../src/builder.js';
import type { Route } from './route.js';

type ScopeMap = Record<string, unknown>;

/** What is derived once from a named operation with one root field: printed query, root field, rules, roles. */
export interface CompiledOperation {
  query: string;
  operationName: string;
  /** Whether it is a mutation: a side effect, which takes an Idempotency-Key (docs/idempotency.md). */
  mutation: boolean;
  rootField: string;
  /** The root field's arguments, for the input rules every argument obeys. */
  args: readonly GraphQLArgument[];
  argsSchema: z.ZodType | undefined;
  /**
   * Whether the field refuses its input by exactly the rules the face checks (the input rules and
   * `argsSchema`): then a refusal's items, located by that one run, are the face's, and nothing is run again.
   */
  refusesByArgsSchema: boolean;
  /** Each variable's type, as GraphQL coerces it. */
  variableTypes: Record<string, GraphQLInputType>;
  authScopes: ScopeMap | undefined;
}

/** A route with what is derived from its operation once, and its path pattern. */
export interface CompiledRoute extends CompiledOperation {
  route: Route;
  pattern: RegExp;
  pathParams: string[];
}

/**
 * The arguments, and their rules, of the fields below the root that take an operation variable of the
 * argument's own name (`task(id: $id) { steps(first: $first) }`): the face fills those variables as it
 * fills the root field's, so their rules are the face's too (a REST `limit` beyond the field's maximum
 * is a 422 at `["query","limit"]`).
 */
function nestedArgsOf(
  type: GraphQLField<unknown, unknown>['type'],
  selectionSet: SelectionSetNode | undefined,
): { args: GraphQLArgument[]; shapes: z.ZodRawShape[] } {
  const found = { args: [] as GraphQLArgument[], shapes: [] as z.ZodRawShape[] };
  const named = getNamedType(type);
  if (!selectionSet || !isObjectType(named)) return found;
  for (const selection of selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    const field = named.getFields()[selection.name.value];
    if (!field) continue;
    const bound = (selection.arguments ?? []).some(
      (argument) =>
        argument.value.kind === Kind.VARIABLE && argument.value.name.value === argument.name.value,
    );
    if (bound) {
      found.args.push(...field.args);
      const schema = (field.extensions as { argsSchema?: z.ZodType }).argsSchema;
      if (schema instanceof z.ZodObject) found.shapes.push(schema.shape);
    }
    const below = nestedArgsOf(field.type, selection.selectionSet);
    found.args.push(...below.args);
    found.shapes.push(...below.shapes);
  }
  return found;
}

/**
 * Compiles a face's operation (a REST route's, an MCP tool's): it must be named and select one root field,
 * whose roles and rules then serve every face alike. `label` names the operation's user in errors.
 */
export function compileOperation(document: unknown, schema: GraphQLSchema, label: string): CompiledOperation {
  if (!(document as DocumentNode | undefined)?.definitions) {
    throw new Error(`${label}: its document is not generated yet (run npm run codegen)`);
  }
  const operation = (document as DocumentNode).definitions.find(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  const selection = operation?.selectionSet.selections[0];
  if (!operation?.name || selection?.kind !== Kind.FIELD) {
    throw new Error(`${label} needs a named operation with one root field`);
  }
  const rootType =
    operation.operation === 'mutation'
      ? schema.getMutationType()
      : operation.operation === 'query'
        ? schema.getQueryType()
        : schema.getSubscriptionType();
  const field = rootType?.getFields()[selection.name.value] as GraphQLField<unknown, unknown> | undefined;
  if (!rootType || !field) throw new Error(`${label}: no root field ${selection.name.value}`);
  const extensions = field.extensions as {
    argsSchema?: z.ZodType;
    validatedBy?: z.ZodType;
    pothosOptions?: { authScopes?: unknown };
  };
  const nested = nestedArgsOf(field.type, selection.selectionSet);
  const argsSchema =
    nested.shapes.length > 0 && extensions.argsSchema instanceof z.ZodObject
      ? extensions.argsSchema.extend(Object.assign({}, ...nested.shapes))
      : extensions.argsSchema;
  const typeScopes = (rootType.extensions as { pothosOptions?: { authScopes?: unknown } }).pothosOptions
    ?.authScopes;
  const fieldScopes = extensions.pothosOptions?.authScopes;
  return {
    query: print(document as DocumentNode),
    operationName: operation.name.value,
    mutation: operation.operation === 'mutation',
    rootField: selection.alias?.value ?? selection.name.value,
    args: [...field.args, ...nested.args],
    argsSchema,
    refusesByArgsSchema:
      extensions.argsSchema === undefined || extensions.validatedBy === extensions.argsSchema,
    variableTypes: Object.fromEntries(
      (operation.variableDefinitions ?? []).map((definition) => [
        definition.variable.name.value,
        typeFromAST(schema, definition.type as never) as GraphQLInputType,
      ]),
    ),
    authScopes: (typeof fieldScopes === 'object'
      ? fieldScopes
      : typeof typeScopes === 'object'
        ? typeScopes
        : undefined) as ScopeMap | undefined,
  };
}

export function compileRoute(route: Route, schema: GraphQLSchema): CompiledRoute {
  const operation = compileOperation(route.document, schema, `route ${route.method} ${route.path}`);
  const pathParams: string[] = [];
  const pattern = new RegExp(
    `^${route.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, (_match, name: string) => {
      pathParams.push(name);
      return '([^/]+)';
    })}/?$`,
  );
  return { ...operation, route, pattern, pathParams };
}

function scopesAllow(
  scopes: ScopeMap,
  granted: Record<string, boolean>,
  strategy: 'any' | 'all' = 'any',
): boolean {
  const results = Object.entries(scopes).map(([scope, wanted]) => {
    if (scope === '$any') return scopesAllow(wanted as ScopeMap, granted, 'any');
    if (scope === '$all') return scopesAllow(wanted as ScopeMap, granted, 'all');
    return wanted === true ? !!granted[scope] : true;
  });
  return strategy === 'any' ? results.some(Boolean) : results.every(Boolean);
}

/**
 * Whether the caller's roles allow the route, from the same auth scopes the GraphQL field enforces: asked
 * before the body is read, so a caller without the role learns nothing about what its body would answer.
 */
export function allows(compiled: Pick<CompiledOperation, 'authScopes'>, viewer: Viewer): boolean {
  return (
    !compiled.authScopes ||
    scopesAllow(compiled.authScopes, scopesOf(viewer) as unknown as Record<string, boolean>)
  );
}

/** A path segment as text; null when its percent-encoding is broken (no route has such a path: 404). */
function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

export type RouteMatch =
  | { candidate: CompiledRoute; params: Record<string, string> }
  | { candidate?: undefined; allowed: string[] };

/** The route a method and path name, with its path parameters; else the methods the path allows (405). */
export function matchRoute(compiled: readonly CompiledRoute[], method: string, pathname: string): RouteMatch {
  const allowed = new Set<string>();
  for (const candidate of compiled) {
    const found = candidate.pattern.exec(pathname);
    if (!found) continue;
    if (candidate.route.method === method) {
      const decoded = candidate.pathParams.map((name, index) => [
        name,
        decodeSegment(found[index + 1] ?? ''),
      ]);
      if (decoded.some(([, value]) => value === null)) return { allowed: [] };
      return { candidate, params: Object.fromEntries(decoded) as Record<string, string> };
    }
    allowed.add(candidate.route.method);
  }
  return { allowed: [...allowed] };
}
