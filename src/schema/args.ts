import type { ArgBuilder, InputFieldMap, InputType, SchemaTypes } from '@pothos/core';
import type { GraphQLResolveInfo } from 'graphql';
import { z } from 'zod';
import { builder } from '../builder.js';
import { parseArgs } from '../validation/index.js';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;

/** What a field's zod rule cannot say about its GraphQL argument. */
interface GraphqlArgMeta {
  /**
   * The GraphQL type, when the rule does not tell it: `'ID'` for an identifier (a uuid is a `String`
   * otherwise), a scalar such as `'SafeInt'`, the enum of a `z.enum`, the input type of a `z.object`.
   * On an array's element it types the items; on the array itself it is the whole list type (`[Ref]`).
   */
  type?: InputType<Types> | [InputType<Types>];
  /** The argument's description in the schema (zod's own `description` is not used: it would reach the OpenAPI document). */
  description?: string;
  /** The GraphQL default value, printed in the schema and applied by GraphQL before the rule runs. */
  defaultValue?: unknown;
  /**
   * Nullable in the schema although the rule requires a value: a missing value then reaches the rule and
   * is refused as a 422 with its detail, like any other broken rule, not by GraphQL's own validation.
   */
  nullable?: true;
}

/**
 * Where a zod rule keeps what its GraphQL argument needs beyond the rule. A registry of its own, not
 * zod's global one (`.meta()`), because `z.toJSONSchema` copies the global metadata into the OpenAPI
 * document and the MCP tool schemas.
 */
const graphqlArgs = z.registry<GraphqlArgMeta>();

/**
 * The rule `schema`, registered with what its GraphQL argument needs; returns the same schema. The
 * registry holds that very instance: a rule shared by several fields carries its metadata to all of them
 * (and, as in any zod registry, to rules refined from it), so register a field's own description on a
 * fresh rule or wrapper (`graphqlArg(shared.nullish(), …)`).
 */
export function graphqlArg<Schema extends z.ZodType>(schema: Schema, meta: GraphqlArgMeta): Schema {
  const rule: z.ZodType = schema;
  graphqlArgs.add(rule, meta);
  return schema;
}

/** A uuid argument, printed as GraphQL `ID`. */
export const idArg = () => graphqlArg(z.guid(), { type: 'ID' });

type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  shape?: Record<string, z.ZodType>;
};
const defOf = (schema: z.ZodType) => schema._zod.def as unknown as Def;

interface DerivedArg {
  type: InputType<Types> | [InputType<Types>];
  nullable: boolean;
  itemsNullable?: boolean;
  description?: string;
  defaultValue?: unknown;
}

/**
 * Reads one argument off its rule: wrappers (optional, nullable, default, pipe) make it nullable or are
 * looked through, and metadata registered on any layer counts, the outermost first.
 */
function deriveArg(schema: z.ZodType, where: string, given: GraphqlArgMeta = {}): DerivedArg {
  const meta: GraphqlArgMeta = { ...given };
  let nullable = false;
  let current = schema;
  for (;;) {
    for (const [key, value] of Object.entries(graphqlArgs.get(current) ?? {})) {
      if (!(key in meta)) Object.assign(meta, { [key]: value });
    }
    const def = defOf(current);
    if (
      def.type === 'optional' ||
      def.type === 'nullable' ||
      def.type === 'default' ||
      def.type === 'prefault'
    ) {
      nullable = true;
      current = def.innerType as z.ZodType;
    } else if (def.type === 'pipe') {
      // `z.preprocess` is a pipe out of a transform: the rule that types the value is the pipe's end.
      current = (defOf(def.in as z.ZodType).type === 'transform' ? def.out : def.in) as z.ZodType;
    } else break;
  }
  const described = {
    ...(meta.description === undefined ? {} : { description: meta.description }),
    ...(meta.defaultValue === undefined ? {} : { defaultValue: meta.defaultValue }),
  };
  // A GraphQL default makes the argument optional, whatever the rule says of a missing value.
  if (meta.defaultValue !== undefined || meta.nullable) nullable = true;
  if (meta.type) return { type: meta.type, nullable, ...described };
  const def = defOf(current);
  if (def.type === 'array') {
    const item = deriveArg(def.element as z.ZodType, `${where}[]`);
    if (Array.isArray(item.type)) throw new Error(`${where}: a list of lists has no GraphQL argument type`);
    return { type: [item.type], nullable, itemsNullable: item.nullable, ...described };
  }
  const scalar = scalarOf(current, def);
  if (!scalar) {
    throw new Error(
      `${where}: a zod ${def.type} does not tell its GraphQL type; register it with graphqlArg(rule, { type })`,
    );
  }
  return { type: scalar, nullable, ...described };
}

function scalarOf(schema: z.ZodType, def: Def): InputType<Types> | undefined {
  if (def.type === 'string') return 'String';
  if (def.type === 'boolean') return 'Boolean';
  if (def.type === 'number') return (schema as z.ZodNumber).isInt ? 'Int' : 'Float';
  return undefined;
}

type LooseField = (options: Record<string, unknown>) => InputFieldMap[string];

/**
 * One Pothos argument or input field per key of the zod object `schema`, made with `field`; `overrides`
 * is each key's metadata given beside the rule, which wins over what is registered on the rule.
 */
function fieldsOf(
  field: LooseField,
  schema: z.ZodType,
  where: string,
  overrides: Partial<Record<string, GraphqlArgMeta>> = {},
): InputFieldMap {
  let object = schema;
  while (defOf(object).type === 'pipe') object = defOf(object).in as z.ZodType;
  const shape = defOf(object).shape;
  if (!shape) throw new Error(`${where}: the rules must be a zod object, one key per argument or field`);
  for (const name of Object.keys(overrides)) {
    if (!(name in shape))
      throw new Error(`${where}.${name}: metadata given for a field the rules do not have`);
  }
  const fields: InputFieldMap = {};
  for (const [name, rule] of Object.entries(shape)) {
    const { type, nullable, itemsNullable, ...described } = deriveArg(
      rule,
      `${where}.${name}`,
      overrides[name],
    );
    const required = Array.isArray(type) ? { list: !nullable, items: !itemsNullable } : !nullable;
    fields[name] = field({ type, required, ...described });
  }
  return fields;
}

/** The Pothos arguments of a field whose arguments are the keys of the zod object `schema`. */
function argsOf<T extends SchemaTypes>(t: { arg: ArgBuilder<T> }, schema: z.ZodType): InputFieldMap {
  return fieldsOf(t.arg as unknown as LooseField, schema, 'arguments');
}

/**
 * A GraphQL input type whose fields are read off the zod object `schema`, by the rules of `zodField`
 * (a field's description with `graphqlArg(rule, { description })`). The schema is registered with the
 * type, so an argument whose rule is `schema` (or wraps it, `.nullish()`) needs no `graphqlArg` of its own.
 *
 * `fields` gives a field's metadata beside the rule instead of on it, for rules the schema layer reads but
 * does not own: those of `src/domain/`, which knows nothing of GraphQL, and rules shared with REST whose
 * instances should not carry GraphQL's descriptions. It wins over metadata registered on the rule.
 *
 * ```ts
 * zodInputType('TokenUsageInput', tokenUsageRule, {
 *   fields: { inputTokens: { type: 'SafeInt', description: 'Prompt tokens, cached ones included.' }, … },
 * });
 * ```
 */
export function zodInputType<Schema extends z.ZodType>(
  name: string,
  schema: Schema,
  options: {
    description?: string;
    fields?: Partial<Record<keyof z.input<Schema> & string, GraphqlArgMeta>>;
  } = {},
) {
  const { fields, ...typeOptions } = options;
  const ref = builder.inputType(name, {
    ...typeOptions,
    fields: (t) => fieldsOf(t.field.bind(t) as unknown as LooseField, schema, name, fields),
  });
  graphqlArg(schema, { type: ref });
  return ref;
}

/**
 * A field whose arguments are declared once, as a zod object: its Pothos `args` are read off the rule, and
 * the resolver receives the parsed arguments (422 `BAD_USER_INPUT` otherwise). rest/ and mcp/ find the
 * same rule on the field's extensions to fill, check and document their own inputs.
 *
 * How an argument is read off its rule:
 * - `z.string()` (any format) is `String`, `z.boolean()` is `Boolean`, an integer `z.number()` (`z.int()`,
 *   `z.int32()`, `.int()`) is `Int`, any other number `Float`, `z.array(rule)` a list of the rule's type;
 * - `.optional()`, `.nullable()`, `.nullish()` and `.default()` make it nullable, otherwise it is required
 *   (non-null); a list's items are non-null unless the element rule accepts null; transforms and
 *   refinements are looked through;
 * - everything else says its type with `graphqlArg(rule, { type })`: `'ID'` (or `idArg()` for a uuid),
 *   `'SafeInt'`, `'DateTime'`, an enum ref for a `z.enum`, an input type ref for a `z.object` (none needed
 *   for an object made an input type with `zodInputType`); building the schema fails for a rule whose type
 *   cannot be read;
 * - `graphqlArg(rule, { description, defaultValue })` adds the argument's description and GraphQL default
 *   (an argument with a default is nullable in the schema, as GraphQL requires); `{ nullable: true }` keeps
 *   a required rule nullable in the schema, so that a missing value is the rule's 422, not GraphQL's error.
 *
 * ```ts
 * const abTestArgs = z.object({ id: idArg(), status: graphqlArg(z.enum(STATUSES), { type: AbTestStatus }).nullish() });
 * builder.queryField('abTest', (t) =>
 *   t.field({ type: AbTestRef, ...zodField(t, abTestArgs, (_root, { id, status }, context) => …) }),
 * );
 * ```
 */
export function zodField<T extends SchemaTypes, Schema extends z.ZodType, Parent, Ctx, Result>(
  t: { arg: ArgBuilder<T> },
  schema: Schema,
  resolve: (parent: Parent, args: z.output<Schema>, context: Ctx, info: GraphQLResolveInfo) => Result,
) {
  return {
    args: argsOf(t, schema),
    // `validatedBy` tells the faces that the field's refusals come from `argsSchema` itself (a field that
    // documents other rules for REST, such as chat's base64-only attachments, overrides `extensions` with
    // only `argsSchema`).
    extensions: { argsSchema: schema, validatedBy: schema },
    resolve: (parent: Parent, args: unknown, context: Ctx, info: GraphQLResolveInfo) =>
      resolve(parent, parseArgs(schema, args), context, info),
  };
}

/**
 * `zodField` for a subscription: its Pothos `args` are read off the zod object `schema`, and `subscribe`
 * receives the parsed arguments (422 `BAD_USER_INPUT` otherwise, before any event is read).
 *
 * ```ts
 * builder.subscriptionField('taskUpdated', (t) =>
 *   t.field({ type: TaskUpdatedEvent, ...zodSubscription(t, z.object({ after: afterArg }), (_root, { after }, context) => …), resolve }),
 * );
 * ```
 */
export function zodSubscription<T extends SchemaTypes, Schema extends z.ZodType, Parent, Ctx, Result>(
  t: { arg: ArgBuilder<T> },
  schema: Schema,
  subscribe: (parent: Parent, args: z.output<Schema>, context: Ctx, info: GraphQLResolveInfo) => Result,
) {
  return {
    args: argsOf(t, schema),
    extensions: { argsSchema: schema, validatedBy: schema },
    subscribe: (parent: Parent, args: unknown, context: Ctx, info: GraphQLResolveInfo) =>
      subscribe(parent, parseArgs(schema, args), context, info),
  };
}
