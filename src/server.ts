import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import type { App } from './app.js';
import { serveGraphQLOverWebSocket } from './graphql-ws.js';
import { listenOn } from './listen.js';
import { startMetricsListener } from './observability/metrics-listener.js';

export interface RunningServer {
  server: Server;
  url: string;
  /**
   * Stops accepting, sends 1001 to every WebSocket and cuts those still open after a fifth of
   * SHUTDOWN_TIMEOUT_MS, lets in-flight requests finish until the timeout, then closes the app.
   */
  close(): Promise<void>;
}

/** node:http with yoga (GraphQL, GraphiQL, REST, health) and graphql-ws on the same port and path. */
export async function startServer(app: App, port: number, host: string): Promise<RunningServer> {
  const { yoga, services } = app;
  const server = createServer(yoga);
  // Listening first: a port that is taken rejects here, before ws would relay the error as its own.
  const url = await listenOn(server, port, host);
  const wsServer = new WebSocketServer({
    server,
    path: yoga.graphqlEndpoint,
    // ws answers a larger frame with 1009 before buffering it.
    maxPayload: services.config.websocket.maxFrameBytes,
  });
  wsServer.on('connection', (socket) => services.metrics.trackWebSocket(socket));
  const websockets = serveGraphQLOverWebSocket(app, wsServer);

  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const metricsListener = await startMetricsListener(services).catch(async (error: unknown) => {
    await websockets.close(0);
    await new Promise((resolve) => server.close(resolve));
    throw error;
  });

  let closing: Promise<void> | undefined;
  return {
    server,
    url,
    close() {
      closing ??= (async () => {
        const timeoutMs = services.config.shutdownTimeoutMs;
        const deadline = Date.now() + timeoutMs;
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await websockets.close(timeoutMs / 5);
        const cut = setTimeout(
          () => {
            for (const socket of sockets) socket.destroy();
          },
          Math.max(0, deadline - Date.now()),
        );
        await stopped;
        clearTimeout(cut);
        await metricsListener?.close();
        await app.close();
      })();
      return closing;
    },
  };
}
