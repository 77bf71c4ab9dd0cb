import { createServer } from 'node:http';
import { listenOn } from '../listen.js';
import type { Services } from '../services.js';
import { type Metrics, metricsResponse } from './metrics.js';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/** Serves only `GET /metrics` on its own port (METRICS_PORT), so the main port never exposes it. */
export async function listenForMetrics(
  metrics: Metrics,
  { port, host, token }: { port: number; host: string; token: string | undefined },
): Promise<MetricsListener> {
  const access = token ? ({ kind: 'token', token } as const) : ({ kind: 'open' } as const);
  const server = createServer(async (request, response) => {
    const answer =
      request.method === 'GET' && request.url?.split('?')[0] === '/metrics'
        ? await metricsResponse(metrics, access, request.headers.authorization ?? null).catch(() =>
            Response.json({ detail: 'Internal Server Error' }, { status: 500 }),
          )
        : Response.json({ detail: 'Not Found' }, { status: 404 });
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    response.end(await answer.text());
  });
  const url = await listenOn(server, port, host);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The separate listener when METRICS_PORT is configured, bound to HOST like the main port. */
export async function startMetricsListener(services: Services): Promise<MetricsListener | undefined> {
  const { port, token } = services.config.metrics;
  if (port === undefined) return undefined;
  return listenForMetrics(services.metrics, { port, host: services.config.host, token });
}
