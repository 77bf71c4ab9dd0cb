import type { Plugin } from 'graphql-yoga';
import type { BusStatus } from '../events/bus.js';

export interface UseHealthOptions {
  /** True when the database answers and every migration is applied. */
  ready: () => Promise<boolean>;
  /** The event bus's state, reported in the `/readyz` body. Default: not reported. */
  bus?: () => BusStatus;
}

/**
 * `/healthz` answers while the process lives; `/readyz` only when the database is ready. A disconnected
 * bus does not make the instance unready: it still serves every read and write, and the outbox keeps
 * events until Redis is back (a shared Redis down would otherwise take every instance out of rotation).
 * It reports `"bus": "disconnected"` in the body instead.
 */
export function useHealth({ ready, bus }: UseHealthOptions): Plugin {
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      if (url.pathname === '/healthz') endResponse(fetchAPI.Response.json({ status: 'ok' }));
      else if (url.pathname === '/readyz') {
        const ok = await ready();
        endResponse(
          fetchAPI.Response.json(
            { status: ok ? 'ready' : 'unavailable', ...(bus ? { bus: bus() } : {}) },
            { status: ok ? 200 : 503 },
          ),
        );
      }
    },
  };
}
