import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';

/**
 * Logs unexpected resolver errors (those without a service error code) with the request id; clients only
 * see them masked.
 */
export function useErrorLog(): Plugin<Context> {
  const report = (context: Context, errors: readonly GraphQLError[] | undefined) => {
    for (const error of errors ?? []) {
      if (error.extensions?.code) continue;
      const cause = error.originalError ?? error;
      context.log.error({ err: cause, path: error.path }, 'unexpected error in resolver');
    }
  };
  return {
    onExecute() {
      return {
        onExecuteDone({ args, result }) {
          if ('errors' in result) report(args.contextValue as Context, result.errors);
        },
      };
    },
  };
}
