import type { GraphQLError } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { databaseUnavailableCause } from '../db/unavailable.js';

/**
 * Logs unexpected resolver errors (those without a service error code) with the request id; clients only
 * see them masked. A database that is unavailable (answered 503) is a warning naming the cause.
 */
export function useErrorLog(): Plugin<Context> {
  const report = (context: Context, errors: readonly GraphQLError[] | undefined) => {
    for (const error of errors ?? []) {
      if (error.extensions?.code) continue;
      const cause = error.originalError ?? error;
      const unavailable = databaseUnavailableCause(cause);
      if (unavailable) {
        context.log.warn(
          // The last line of a Prisma message is the driver's own; its stack would only repeat per request.
          { cause: unavailable, path: error.path, error: cause.message.trim().split('\n').at(-1) },
          'database unavailable: answered 503',
        );
        continue;
      }
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
