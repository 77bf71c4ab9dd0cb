import type { ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { Context } from '../context.js';
import { databaseUnavailableCause } from '../db/unavailable.js';
import { domainRefusalOf, httpStatusOf, isInputCoercionError } from '../errors.js';
import { requestIdOf } from '../http/request-id.js';
import type { Logger } from '../logger.js';

export interface UseErrorLogOptions {
  /** Where errors found before the context exists (validation) are logged, with the request id. */
  logger: Logger;
}

/** A coercion error's message without the value it refused (which may be anything the client sent). */
const withoutValue = (message: string) =>
  message.replace(/ (got|has) invalid value [\s\S]*$/, ' $1 an invalid value');

/**
 * The client's mistakes: graphql-js's coercion of variables and arguments, and every error whose code or
 * HTTP status is a 4xx (validation, BAD_USER_INPUT, NOT_FOUND, CONFLICT …). A code without a status is a
 * library's refusal of the request (e.g. an unknown operation name).
 */
function isClientError(error: GraphQLError): boolean {
  if (isInputCoercionError(error)) return true;
  const status = httpStatusOf(error);
  return status !== undefined ? status < 500 : error.extensions?.code !== undefined;
}

/**
 * Logs the errors of each result with the request id. A client's mistake is one `client error` line at
 * info, with its code, path and message (a coercion error's without the refused value), never a stack.
 * A database that is unavailable (answered 503) is a warning naming the cause. Anything else without a
 * service error code is unexpected: an error with its stack (clients only see it masked). Service errors
 * of the server's side (503, 502, 504) are answered as they are and not logged here.
 */
export function useErrorLog({ logger }: UseErrorLogOptions): Plugin<Context> {
  /** The request's logger: the context's, or (before the context is built) one with the request id. */
  const logOf = (context: Partial<Context> & { request?: Request }): Logger =>
    context.log ?? (context.request ? logger.child({ requestId: requestIdOf(context.request) }) : logger);
  /** `validation`: every error is the document's, the client's (yoga adds their status only later). */
  const report = (
    context: Partial<Context>,
    errors: readonly GraphQLError[] | undefined,
    validation = false,
  ) => {
    const log = logOf(context);
    for (const raised of errors ?? []) {
      // A domain refusal is logged as the error its client gets (its code), whether masking ran or not.
      const error = domainRefusalOf(raised) ?? raised;
      if (validation || isClientError(error)) {
        log.info(
          {
            code: error.extensions?.code,
            path: error.path,
            error: isInputCoercionError(error) ? withoutValue(error.message) : error.message,
          },
          'client error',
        );
        continue;
      }
      if (error.extensions?.code) continue;
      const cause = error.originalError ?? error;
      const unavailable = databaseUnavailableCause(cause);
      if (unavailable) {
        log.warn(
          // The last line of a Prisma message is the driver's own; its stack would only repeat per request.
          { cause: unavailable, path: error.path, error: cause.message.trim().split('\n').at(-1) },
          'database unavailable: answered 503',
        );
        continue;
      }
      log.error({ err: cause, path: error.path }, 'unexpected error in resolver');
    }
  };
  return {
    onValidate({ context }) {
      return ({ valid, result }) => {
        if (!valid) report(context as Partial<Context>, result as readonly GraphQLError[], true);
      };
    },
    onExecute() {
      return {
        onExecuteDone({ args, result }) {
          if ('errors' in result) report(args.contextValue as Context, result.errors);
        },
      };
    },
    onSubscribe() {
      return {
        // What fails before a stream opens; the events of an open stream are executed once for all its
        // subscribers (useSharedEventExecution) and not logged per subscriber.
        onSubscribeResult({ args, result }) {
          if (!isAsyncIterable(result))
            report(args.contextValue as Context, (result as ExecutionResult).errors);
        },
      };
    },
  };
}
