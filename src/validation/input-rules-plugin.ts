import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';
import { invalidInput } from '../domain/errors.js';
import { inspectArguments } from './input-rules.js';

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      inputRules: PothosInputRulesPlugin<Types>;
    }
  }
}

function assertInputRules(args: object, info: GraphQLResolveInfo) {
  const field = info.parentType.getFields()[info.fieldName];
  if (!field) return;
  const detail = inspectArguments(field.args, args as Record<string, unknown>);
  if (detail.length > 0) throw invalidInput(detail);
}

/**
 * Applies the input rules every argument obeys (no NUL or unpaired surrogate in any text, bounded JSON)
 * to every field that takes arguments, whether or not it has zod rules of its own. Registered after the
 * auth-scope plugin, so that 401 and 403 still come before 422.
 */
export class PothosInputRulesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (Object.keys(fieldConfig.args).length === 0) return resolver;
    return (parent, args, context, info) => {
      assertInputRules(args, info);
      return resolver(parent, args, context, info);
    };
  }

  override wrapSubscribe(
    subscribe: GraphQLFieldResolver<unknown, Types['Context'], object> | undefined,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> | undefined {
    if (!subscribe || Object.keys(fieldConfig.args).length === 0) return subscribe;
    return (parent, args, context, info) => {
      assertInputRules(args, info);
      return subscribe(parent, args, context, info);
    };
  }
}

const pluginName = 'inputRules';
SchemaBuilder.registerPlugin(pluginName, PothosInputRulesPlugin);
export default pluginName;
