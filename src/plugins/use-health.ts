import type { Plugin } from 'graphql-yoga';

export interface UseHealthOptions {
  /** True when the database answers and every migration is applied. */
  ready: () => Promise<boolean>;
}

/** `/healthz` answers while the process lives; `/readyz` only when the database is ready. */
export function useHealth({ ready }: UseHealthOptions): Plugin {
  return {
    async onRequest({ request, url, endResponse, fetchAPI }) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return;
      if (url.pathname === '/healthz') endResponse(fetchAPI.Response.json({ status: 'ok' }));
      else if (url.pathname === '/readyz') {
        const ok = await ready();
        endResponse(
          fetchAPI.Response.json({ status: ok ? 'ready' : 'unavailable' }, { status: ok ? 200 : 503 }),
        );
      }
    },
  };
}
