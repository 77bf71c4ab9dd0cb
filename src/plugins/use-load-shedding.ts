import type { Plugin } from 'graphql-yoga';

export interface UseLoadSheddingOptions {
  /** Operations (GraphQL and REST requests) this instance works on at once; one more is refused. */
  maxInFlight: number;
  /** `Retry-After` of a refusal, in seconds. */
  retryAfterSeconds: number;
  /** Counts refused requests by surface (`rest` or `graphql`). Default: not counted. */
  refusals?: { inc(labels: { surface: 'rest' | 'graphql' }): void };
}

/** How each admitted request gives its place back; a request that was not admitted has none. */
const admissions = new WeakMap<Request, () => void>();

/**
 * Gives `request`'s place in the in-flight budget back before its response is written, for work that
 * then waits without the database (a connector call waiting on its upstream holds a connector call slot
 * instead). Idempotent, and a no-op for a request that was not admitted.
 */
export function releaseAdmission(request: Request): void {
  const release = admissions.get(request);
  admissions.delete(request);
  release?.();
}

const isOperation = (method: string, pathname: string) =>
  (pathname === '/graphql' && method === 'POST') ||
  (pathname.startsWith('/api/') && pathname !== '/api/v1/openapi.json');

/**
 * The bounded queue in front of the database, at the door: at most `maxInFlight` GraphQL and REST
 * requests are worked on at once (DATABASE_POOL_SIZE + DATABASE_QUEUE_SIZE), and the next one answers 503
 * SERVICE_UNAVAILABLE with Retry-After before any work is spent on it (token, parsing, query planning),
 * so a burst cannot starve the requests already admitted. The pool keeps its own bound for what reaches
 * it otherwise (WebSocket operations, background work).
 */
export function useLoadShedding({
  maxInFlight,
  retryAfterSeconds,
  refusals,
}: UseLoadSheddingOptions): Plugin {
  let inFlight = 0;
  return {
    onRequest({ request, url, endResponse, fetchAPI, serverContext }) {
      // REST routes run their operation as an inner request; the outer one was already admitted.
      if ((serverContext as { viewer?: unknown } | undefined)?.viewer) return;
      if (!isOperation(request.method, url.pathname)) return;
      if (inFlight < maxInFlight) {
        inFlight += 1;
        admissions.set(request, () => {
          inFlight -= 1;
        });
        return;
      }
      const rest = url.pathname.startsWith('/api/');
      refusals?.inc({ surface: rest ? 'rest' : 'graphql' });
      const headers = { 'Retry-After': String(retryAfterSeconds) };
      const message = `Service temporarily unavailable; retry in ${retryAfterSeconds} s`;
      endResponse(
        rest
          ? fetchAPI.Response.json({ detail: message }, { status: 503, headers })
          : fetchAPI.Response.json(
              { errors: [{ message, extensions: { code: 'SERVICE_UNAVAILABLE' } }] },
              { status: 503, headers },
            ),
      );
    },
    onResponse({ request }) {
      releaseAdmission(request);
    },
  };
}
