import { buildExecutionContext, execute, subscribe } from '@graphql-tools/executor';
import {
  createSourceEventStream,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  GraphQLError,
  getOperationAST,
  type OperationDefinitionNode,
} from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { viewerIdentity } from '../auth/viewer.js';
import type { Context } from '../context.js';

/** Results of one event: by document, then by caller, operation name and variables. */
type EventResults = WeakMap<DocumentNode, Map<string, Promise<ExecutionResult>>>;

/**
 * One execution of a subscription event for all the subscriptions that would compute the same result.
 *
 * graphql-js executes the selection set once per subscriber for every event: with thousands of sockets
 * open, an event costs thousands of identical executions (and, for a field that reads the database, as
 * many queries). Here the subscriptions of one caller (tenant, subject and roles: what authorisation and
 * every resolver may depend on) with the same document, operation name and variables share the result of
 * one execution of each event. The event is the object the bus handed to every listener on this instance,
 * so the results live exactly as long as some subscription still holds the event; a replayed event is a
 * fresh object and is executed on its own.
 *
 * The source stream is still opened per subscription, by the field's `subscribe` (arguments, auth scopes,
 * `after`), and everything that fails before a stream exists answers as yoga's executor answers it.
 */
export function useSharedEventExecution(): Plugin<Context> {
  const executions = new WeakMap<object, EventResults>();

  const executeOnce = (args: ExecutionArgs, key: string, event: unknown): Promise<ExecutionResult> => {
    const run = () => Promise.resolve(execute({ ...args, rootValue: event }) as ExecutionResult);
    if (typeof event !== 'object' || event === null) return run();
    let byDocument = executions.get(event);
    if (!byDocument) {
      byDocument = new WeakMap();
      executions.set(event, byDocument);
    }
    let byKey = byDocument.get(args.document);
    if (!byKey) {
      byKey = new Map();
      byDocument.set(args.document, byKey);
    }
    let result = byKey.get(key);
    if (!result) {
      result = run();
      byKey.set(key, result);
    }
    return result;
  };

  const subscribeSharing = async (args: ExecutionArgs) => {
    const viewer = (args.contextValue as Context | undefined)?.viewer;
    // Errors of the arguments answer exactly as yoga's executor answers them (it marks them 400).
    if (!viewer || !('schema' in buildExecutionContext(args))) return subscribe(args);
    const source = await createSourceEventStream(args);
    if (!isAsyncIterable(source)) return source;
    const key = JSON.stringify([
      viewerIdentity(viewer),
      args.operationName ?? null,
      args.variableValues ?? null,
    ]);
    const operation = getOperationAST(args.document, args.operationName) ?? undefined;
    return mapEvents(source, operation, (event) => executeOnce(args, key, event));
  };

  return {
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(subscribeSharing as Parameters<typeof setSubscribeFn>[0]);
    },
  };
}

/**
 * The source's events mapped to results: one plain iterator instead of the executor's map and flatten
 * layers. A failing source fails the stream with the error located at the operation, as the executor does.
 */
function mapEvents(
  source: AsyncIterable<unknown>,
  operation: OperationDefinitionNode | undefined,
  result: (event: unknown) => Promise<ExecutionResult>,
): AsyncIterableIterator<ExecutionResult> {
  const events = source[Symbol.asyncIterator]();
  const close = async () => {
    await events.return?.();
    return { value: undefined, done: true } as const;
  };
  const located = (error: Error) =>
    new GraphQLError(error.message, { originalError: error, nodes: operation ? [operation] : undefined });
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () =>
      events.next().then(
        (
          step,
        ):
          | Promise<IteratorResult<ExecutionResult, undefined>>
          | IteratorResult<ExecutionResult, undefined> =>
          step.done
            ? { value: undefined, done: true }
            : result(step.value).then(
                (value) => ({ value, done: false as const }),
                async (error) => {
                  await close();
                  throw error;
                },
              ),
        (error: Error) => {
          throw located(error);
        },
      ),
    return: close,
    throw: async (error) => {
      await close();
      throw error;
    },
  };
}
