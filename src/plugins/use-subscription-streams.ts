import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { hasExpired, onExpiry } from '../auth/expiry.js';
import type { Viewer } from '../auth/viewer.js';
import type { Context } from '../context.js';
import { rateLimited, unauthenticated } from '../domain/errors.js';
import { graphQLErrorOf } from '../errors.js';
import { requestSlot } from '../http/request-context.js';
import { callerKey } from '../rate-limit.js';
import type { StreamSlots } from '../stream-slots.js';

export interface UseSubscriptionStreamsOptions {
  /** The per-caller slots graphql-ws sockets take too (one per socket). */
  slots: StreamSlots;
  /** `Retry-After` (seconds) of a subscription refused because its caller holds every slot. Default 2. */
  retryAfterSeconds?: number;
}

type Step = IteratorResult<ExecutionResult, undefined>;
const DONE: Step = { value: undefined, done: true };

/**
 * `source` until the caller's token expires: then one last result with an `UNAUTHENTICATED` error
 * ("Token has expired") and the end. An event that arrives once the token has expired, before its timer
 * fired, ends the stream the same way instead of being delivered. `release` runs once, however it ends.
 */
function untilExpiry(
  source: AsyncIterable<ExecutionResult>,
  viewer: Viewer,
  release: () => void,
): AsyncIterableIterator<ExecutionResult> {
  const events = source[Symbol.asyncIterator]();
  let ended = false;
  /** Ends the `next` under way with the expiry, when the token expires while it waits. */
  let wake: (() => void) | undefined;
  const stopTimer = onExpiry(viewer, () => wake?.());
  const finish = (): boolean => {
    if (ended) return false;
    ended = true;
    stopTimer();
    release();
    return true;
  };
  const expire = (): Step => {
    if (finish()) Promise.resolve(events.return?.()).catch(() => undefined);
    return { value: { errors: [graphQLErrorOf(unauthenticated('Token has expired'))] }, done: false };
  };
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    next() {
      if (ended) return Promise.resolve(DONE);
      if (hasExpired(viewer)) return Promise.resolve(expire());
      return new Promise<Step>((resolve, reject) => {
        let settled = false;
        const settle = () => {
          const first = !settled;
          settled = true;
          wake = undefined;
          return first;
        };
        wake = () => {
          if (settle()) resolve(expire());
        };
        events.next().then(
          (step) => {
            if (!settle()) return;
            if (step.done) {
              finish();
              resolve(DONE);
            } else resolve(hasExpired(viewer) ? expire() : step);
          },
          (error: unknown) => {
            if (!settle()) return;
            finish();
            reject(error);
          },
        );
      });
    },
    async return() {
      if (finish()) await events.return?.();
      return DONE;
    },
    async throw(error: unknown) {
      if (finish()) await events.return?.();
      throw error;
    },
  };
}

/**
 * Every subscription stream, over graphql-ws and over server-sent events alike, ends at its caller's token
 * `exp` (see `untilExpiry`). An SSE subscription also takes one of its caller's stream slots, the ones
 * graphql-ws sockets take, before its stream is opened, and gives it back when the stream ends: beyond
 * MAX_STREAMS_PER_CALLER it is answered 429 `RATE_LIMITED` with `Retry-After`, and no stream is opened.
 */
export function useSubscriptionStreams({
  slots,
  retryAfterSeconds = 2,
}: UseSubscriptionStreamsOptions): Plugin<Context> {
  /**
   * The SSE slot of each request that came over HTTP (graphql-ws operations never pass yoga's request
   * hooks), on its server context: `pending` while taken and its stream not handed out yet.
   */
  const streams = requestSlot<{ pending?: (() => void) | undefined }>('subscription streams: slot');

  return {
    onRequest({ serverContext }) {
      streams.set(serverContext, {});
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const context = args.contextValue as Context;
      const { viewer } = context;
      if (!viewer) return undefined;
      let release = () => {};
      const stream = streams.get(context);
      if (stream) {
        const taken = slots.take(callerKey(viewer));
        if (!taken) {
          context.log.info(
            { limit: slots.maxPerCaller },
            'subscription refused: too many streams for the caller',
          );
          setResultAndStopExecution({
            errors: [
              graphQLErrorOf(
                rateLimited(
                  `Too many open streams: at most ${slots.maxPerCaller} WebSockets and server-sent event subscriptions per caller`,
                  retryAfterSeconds,
                ),
              ),
            ],
          });
          return undefined;
        }
        release = taken;
        stream.pending = taken;
      }
      return {
        onSubscribeResult({ result, setResult }) {
          if (stream) stream.pending = undefined;
          if (isAsyncIterable(result)) setResult(untilExpiry(result, viewer, release));
          else release();
        },
      };
    },
    onResultProcess({ result, resultProcessor }) {
      // A subscription whose request accepts no stream is answered 406 by yoga, which never reads the stream
      // it opened: closing it gives its slot and its bus subscription back.
      if (!resultProcessor && isAsyncIterable(result)) {
        Promise.resolve(result[Symbol.asyncIterator]().return?.()).catch(() => undefined);
      }
    },
    onResponse({ serverContext }) {
      // The subscription failed before it produced a result (yoga answered its error): nothing holds the slot.
      const stream = streams.get(serverContext);
      stream?.pending?.();
      if (stream) stream.pending = undefined;
    },
  };
}
