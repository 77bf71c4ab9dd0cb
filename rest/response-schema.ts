/**
 * A REST route's response body, derived from its GraphQL operation the way SOFA derives it: the selection
 * set walked against the schema. The aliases the selection gives are the REST names, so the shape is
 * written once, in the operation; a route declares only what the schema cannot say (a uuid, a literal, a
 * field its `respond` reshapes) as overrides.
 *
 * | GraphQL                  | zod                                               |
 * | ------------------------ | ------------------------------------------------- |
 * | `String`, `ID`           | `z.string()` (a `'uuid'` or `'guid'` format says more) |
 * | `Int`, `SafeInt`         | `z.int()`                                         |
 * | `Float`                  | `z.number()`                                      |
 * | `Boolean`                | `z.boolean()`                                     |
 * | `DateTime`               | `z.iso.datetime()`                                |
 * | `JSON`                   | `z.unknown()` (which admits null already)         |
 * | an enum                  | `z.enum` of its values, in the order declared     |
 * | an object                | `z.object` of its selection, keys by alias, in selection order |
 * | `__typename`             | `z.literal` of the type's name                    |
 * | `[T]`, nullable `T`      | `z.array(T)`, `.nullable()`                       |
 *
 * Fragment spreads and inline fragments are merged in where they stand, as GraphQL collects fields.
 */
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLEnumType,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  isAbstractType,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import { z } from 'zod';
import { schema as appSchema } from '../src/schema/index.js';

/** A scalar's documented format, standing for the scalar's own mapping; nullability and lists still apply. */
export type ResponseFormat = 'uuid' | 'guid' | 'date-time';

/**
 * What a route says differs from the derived schema, by response path: the keys from the root field's value
 * down, joined with dots, lists passed through (`variants.variant_id`). A format refines the field's scalar;
 * a zod schema stands for the field as it is, nullability included.
 */
export type ResponseOverrides = Record<string, ResponseFormat | z.ZodType>;

export interface ResponseSchemaOptions {
  /** The concrete type to derive for a root field of a union or interface type (one answer's shape). */
  on?: string;
  /** The GraphQL schema the selection is walked against. Default: the service's schema. */
  schema?: GraphQLSchema;
}

const formats: Record<ResponseFormat, () => z.ZodType> = {
  uuid: () => z.uuid(),
  guid: () => z.guid(),
  'date-time': () => z.iso.datetime(),
};

const scalars: Record<string, () => z.ZodType> = {
  String: () => z.string(),
  ID: () => z.string(),
  Int: () => z.int(),
  SafeInt: () => z.int(),
  Float: () => z.number(),
  Boolean: () => z.boolean(),
  DateTime: () => z.iso.datetime(),
  JSON: () => z.unknown(),
};

interface Walk {
  schema: GraphQLSchema;
  fragments: Record<string, FragmentDefinitionNode>;
  overrides: ResponseOverrides;
  /** The override paths met, so that one naming no field is refused rather than ignored. */
  used: Set<string>;
}

/** Whether a fragment's type condition applies to a value of `type`. */
function applies(walk: Walk, condition: string | undefined, type: GraphQLObjectType): boolean {
  if (!condition || condition === type.name) return true;
  const conditionType = walk.schema.getType(condition);
  return !!conditionType && isAbstractType(conditionType) && walk.schema.isSubType(conditionType, type);
}

/** The fields a selection set selects on a value of `type`, by response key, in order (GraphQL's CollectFields). */
function collectFields(
  walk: Walk,
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  fields = new Map<string, FieldNode[]>(),
): Map<string, FieldNode[]> {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value;
      fields.set(key, [...(fields.get(key) ?? []), selection]);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (applies(walk, selection.typeCondition?.name.value, type)) {
        collectFields(walk, type, selection.selectionSet, fields);
      }
    } else {
      const fragment = walk.fragments[selection.name.value];
      if (!fragment)
        throw new Error(`response schema: fragment ${selection.name.value} is not in the document`);
      if (applies(walk, fragment.typeCondition.name.value, type)) {
        collectFields(walk, type, fragment.selectionSet, fields);
      }
    }
  }
  return fields;
}

/** The concrete type a selection is derived for: the type itself, or `on` for a union or interface. */
function concreteType(walk: Walk, type: GraphQLCompositeType, on: string | undefined, path: string) {
  if (isObjectType(type)) return type;
  const named = on ? walk.schema.getType(on) : undefined;
  if (!named || !isObjectType(named) || !walk.schema.isSubType(type, named)) {
    throw new Error(
      `response schema: ${path || 'the root field'} is a ${type.name}; name one of its types as \`on\``,
    );
  }
  return named;
}

function objectSchema(walk: Walk, type: GraphQLObjectType, selectionSet: SelectionSetNode, path: string) {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, nodes] of collectFields(walk, type, selectionSet)) {
    const fieldPath = path ? `${path}.${key}` : key;
    const name = (nodes[0] as FieldNode).name.value;
    if (name === '__typename') {
      shape[key] = overrideOf(walk, fieldPath) ?? z.literal(type.name);
      continue;
    }
    const field = type.getFields()[name] as GraphQLField<unknown, unknown> | undefined;
    if (!field) throw new Error(`response schema: ${type.name} has no field ${name}`);
    const selections = nodes.flatMap((node) => node.selectionSet?.selections ?? []);
    const selectionSet: SelectionSetNode | undefined =
      selections.length > 0 ? { kind: Kind.SELECTION_SET, selections } : undefined;
    shape[key] = overrideOf(walk, fieldPath) ?? valueSchema(walk, field.type, selectionSet, fieldPath);
  }
  return z.object(shape);
}

/** The override of a path given as a zod schema; a format is applied where the scalar is derived. */
function overrideOf(walk: Walk, path: string): z.ZodType | undefined {
  const override = walk.overrides[path];
  if (override === undefined || typeof override === 'string') return undefined;
  walk.used.add(path);
  return override;
}

function valueSchema(
  walk: Walk,
  type: GraphQLOutputType,
  selectionSet: SelectionSetNode | undefined,
  path: string,
): z.ZodType {
  if (isNonNullType(type)) return nonNullSchema(walk, type.ofType, selectionSet, path);
  const schema = nonNullSchema(walk, type, selectionSet, path);
  // `z.unknown()` admits null already; `.nullable()` would only add a branch to the document.
  return isScalarType(type) && type.name === 'JSON' && !isFormatted(walk, path) ? schema : schema.nullable();
}

const isFormatted = (walk: Walk, path: string) => typeof walk.overrides[path] === 'string';

/**
 * An enum's values in the order its definition declares them (`draft`, `running`, `completed`), as the
 * builder recorded them: the served schema sorts them, an order that says nothing of their meaning.
 */
function enumValuesOf(type: GraphQLEnumType): [string, ...string[]] {
  const declared = (type.extensions as { pothosOptions?: { values?: unknown } }).pothosOptions?.values;
  const names = Array.isArray(declared)
    ? declared.map(String)
    : declared && typeof declared === 'object'
      ? Object.keys(declared)
      : type.getValues().map((value) => value.name);
  return names as [string, ...string[]];
}

/** The schema of a value of `type` that is not null. */
function nonNullSchema(
  walk: Walk,
  type: GraphQLOutputType,
  selectionSet: SelectionSetNode | undefined,
  path: string,
): z.ZodType {
  if (isListType(type)) return z.array(valueSchema(walk, type.ofType, selectionSet, path));
  const named = getNamedType(type);
  const format = walk.overrides[path];
  if (typeof format === 'string') {
    if (!isScalarType(named)) throw new Error(`response schema: ${path} is not a scalar; it has no format`);
    walk.used.add(path);
    return formats[format]();
  }
  if (isScalarType(named)) {
    const scalar = scalars[named.name];
    if (!scalar) throw new Error(`response schema: no mapping for the scalar ${named.name} (at ${path})`);
    return scalar();
  }
  if (isEnumType(named)) return z.enum(enumValuesOf(named));
  if (!selectionSet) throw new Error(`response schema: ${path} selects no fields of ${named.name}`);
  return objectSchema(
    walk,
    concreteType(walk, named as GraphQLCompositeType, undefined, path),
    selectionSet,
    path,
  );
}

/**
 * The schema of the value of the operation's root field: the body of a route whose `respond` returns that
 * value, or the part of one it wraps. A nullable root field's null is the route's error (404), not a body,
 * so the root value is never null.
 */
export function responseSchemaOf(
  // biome-ignore lint/suspicious/noExplicitAny: any operation's document
  document: TypedDocumentNode<any, any>,
  overrides: ResponseOverrides = {},
  options: ResponseSchemaOptions = {},
): z.ZodObject {
  const definitions = (document as DocumentNode).definitions;
  const operation = definitions.find(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  const root = operation?.selectionSet.selections[0];
  if (!operation || root?.kind !== Kind.FIELD || !root.selectionSet) {
    throw new Error('response schema: the operation needs one root field with a selection');
  }
  const schema = options.schema ?? appSchema;
  const walk: Walk = {
    schema,
    fragments: Object.fromEntries(
      definitions
        .filter(
          (definition): definition is FragmentDefinitionNode => definition.kind === Kind.FRAGMENT_DEFINITION,
        )
        .map((fragment) => [fragment.name.value, fragment]),
    ),
    overrides,
    used: new Set(),
  };
  const rootType = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  const field = rootType?.getFields()[root.name.value];
  if (!field) throw new Error(`response schema: no root field ${root.name.value}`);
  const named = getNamedType(field.type);
  const listed = isListType(isNonNullType(field.type) ? field.type.ofType : field.type);
  if (listed || !(isObjectType(named) || isAbstractType(named))) {
    throw new Error(`response schema: the root field ${root.name.value} must be of one object type`);
  }
  const type = concreteType(walk, named, options.on, '');
  const result = objectSchema(walk, type, root.selectionSet, '');
  const unused = Object.keys(overrides).filter((path) => !walk.used.has(path));
  if (unused.length > 0)
    throw new Error(`response schema: overrides name no selected field: ${unused.join(', ')}`);
  return result;
}

/** `schema` with keys renamed where they stand: a body whose `respond` renames a field of the operation's. */
export function renamed(schema: z.ZodObject, names: Record<string, string>): z.ZodObject {
  return z.object(
    Object.fromEntries(Object.entries(schema.shape).map(([key, value]) => [names[key] ?? key, value])),
  );
}
