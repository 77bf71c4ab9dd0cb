import type { Plugin } from 'graphql-yoga';
import { verifiedViewerOf } from '../auth/request.js';
import { isRestPath, refusalResponse, serviceUnavailable } from '../errors.js';
import { requestSlot } from '../http/request-context.js';
import { onceConnectionLetGo } from '../lingering-close.js';
import { clientAddressOf } from './use-rate-limit.js';

export interface UseLoadSheddingOptions {
  /**
   * GraphQL and REST operations of authenticated callers this instance works on at once, counted once the
   * body is read; one more is refused (503). No default: DATABASE_POOL_SIZE + DATABASE_QUEUE_SIZE.
   */
  maxInFlight: number;
  /**
   * Requests without a verified caller one client address may have in flight at once; one more is refused
   * (429). Default 20 (HTTP_MAX_ANONYMOUS_PER_ADDRESS).
   */
  maxAnonymousPerAddress?: number;
  /** `Retry-After` of a refusal, in seconds. No default: RETRY_AFTER_SECONDS. */
  retryAfterSeconds: number;
  /** Paths never counted as unauthenticated requests. Default: the probes. */
  exempt?: readonly string[];
  /** Counts requests refused by the database budget, by surface (`rest` or `graphql`). Default: not counted. */
  refusals?: { inc(labels: { surface: 'rest' | 'graphql' }): void };
}

/** A request's place in the database budget: given back once, however often `release` is called. */
export interface Admission {
  release(): void;
}

/** Why a request was not admitted: the message and headers of its 503. */
interface Refusal {
  message: string;
  headers: Record<string, string>;
}

/** What the door holds for one request that came through it, kept on the request's server context. */
interface Passage {
  /** Its place in the database budget, once admitted. */
  admission?: Admission;
  /** The address it counts against as an unauthenticated request, until its connection is let go of. */
  anonymousFrom?: string;
}

/**
 * The passage of each request that came through an instance's door (onRequest), on its server context: the
 * operations of a batch, whose contexts yoga makes from it (Object.create), share it and its one admission.
 */
const passages = requestSlot<Passage>('load shedding: passage');

/**
 * Gives the request's place in the database budget back before its response is written, for work that then
 * waits without the database (a connector call waiting on its upstream holds a connector call slot
 * instead). `context` is the request's server context or its GraphQL context. Idempotent, and a no-op for a
 * request that was not admitted.
 */
export function releaseAdmission(context: object): void {
  passages.get(context)?.admission?.release();
}

const tooManyAnonymous = (limit: number, retryAfterSeconds: number) =>
  `Too many unauthenticated requests from this address at once (at most ${limit}); retry in ${retryAfterSeconds} s`;

/**
 * The door of the instance, with two bounds that spend nothing on a caller before it is known.
 *
 * The database budget: at most `maxInFlight` GraphQL and REST operations are worked on at once
 * (DATABASE_POOL_SIZE + DATABASE_QUEUE_SIZE), and the next one answers 503 SERVICE_UNAVAILABLE with
 * Retry-After before its document is parsed or its tenant looked up, so a burst cannot starve the
 * requests already admitted. A request counts only once its caller is authenticated and its body is read
 * (`admitRequest`): a client that sends its body slowly, or no token, holds no place. The pool keeps its own
 * bound for what reaches it otherwise (WebSocket operations, background work).
 *
 * Unauthenticated requests: at most `maxAnonymousPerAddress` requests without a verified caller are in
 * flight at once from one client address (each may hold its socket until HTTP_BODY_TIMEOUT_MS), counted
 * until its connection is let go of: one answered before its body all arrived counts through its lingering
 * close (src/lingering-close.ts). The next answers 429 with Retry-After at once, its body unread. Runs after
 * useAuthentication.
 */
export function useLoadShedding({
  maxInFlight,
  maxAnonymousPerAddress = 20,
  retryAfterSeconds,
  exempt = ['/healthz', '/readyz'],
  refusals,
}: UseLoadSheddingOptions): Plugin {
  let inFlight = 0;
  /**
   * Counts a request against the database budget, at the point where its caller is authenticated and its
   * body read: yoga's onParams, for GraphQL and REST alike. Null when admitted, the refusal otherwise.
   */
  function admit(passage: Passage, surface: 'rest' | 'graphql'): Refusal | null {
    if (inFlight >= maxInFlight) {
      refusals?.inc({ surface });
      return {
        message: serviceUnavailable(retryAfterSeconds).message,
        headers: { 'Retry-After': String(retryAfterSeconds) },
      };
    }
    inFlight += 1;
    let held = true;
    passage.admission = {
      release() {
        if (!held) return;
        held = false;
        inFlight -= 1;
      },
    };
    return null;
  }

  const anonymousByAddress = new Map<string, number>();
  const releaseAnonymous = (passage: Passage) => {
    const address = passage.anonymousFrom;
    if (address === undefined) return;
    passage.anonymousFrom = undefined;
    const count = (anonymousByAddress.get(address) ?? 1) - 1;
    if (count > 0) anonymousByAddress.set(address, count);
    else anonymousByAddress.delete(address);
  };

  return {
    onRequest({ url, endResponse, fetchAPI, serverContext }) {
      const passage: Passage = {};
      passages.set(serverContext, passage);
      if (verifiedViewerOf(serverContext) || exempt.includes(url.pathname)) return;
      const address = clientAddressOf(serverContext);
      if (address === undefined) return;
      const count = anonymousByAddress.get(address) ?? 0;
      if (count < maxAnonymousPerAddress) {
        anonymousByAddress.set(address, count + 1);
        passage.anonymousFrom = address;
        return;
      }
      const message = tooManyAnonymous(maxAnonymousPerAddress, retryAfterSeconds);
      // The body is not read: the connection closes lingering, reading none of what still arrives.
      endResponse(
        refusalResponse(
          url.pathname,
          'RATE_LIMITED',
          message,
          { 'Retry-After': String(retryAfterSeconds) },
          fetchAPI,
        ),
      );
    },
    onParams({ request, context }) {
      // GraphQL and REST requests of a verified caller: the body is read now. Anonymous ones never reach the
      // database (the context refuses every field but introspection); WebSocket operations are not counted.
      const passage = passages.get(context);
      if (!passage || passage.admission || !verifiedViewerOf(context)) return;
      const refusal = admit(passage, isRestPath(new URL(request.url).pathname) ? 'rest' : 'graphql');
      if (refusal) throw serviceUnavailable(retryAfterSeconds);
    },
    onResponse({ serverContext }) {
      const passage = passages.get(serverContext);
      if (!passage) return;
      passage.admission?.release();
      // An answer given before the body all arrived holds the connection a while longer (a lingering close,
      // reading what the client still sends): an unauthenticated request counts until it is let go of.
      onceConnectionLetGo(serverContext, () => releaseAnonymous(passage));
    },
  };
}
