import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { App } from './app.js';
import { serveGraphQLOverWebSocket } from './graphql-ws.js';
import { BodyRequest, lingeringResponses } from './lingering-close.js';
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

/** A complete answer written on the socket itself, for a request node:http gave up on. */
function rawResponse(status: number, reason: string, body?: unknown): string {
  const text = body === undefined ? '' : JSON.stringify(body);
  const type = body === undefined ? '' : 'Content-Type: application/json\r\n';
  return `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\n${type}Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
}

/**
 * What node:http answers a client error with when nobody listens for it (400, 431 for headers too large,
 * 413 for chunk extensions too large), except a request that did not arrive in time: 408 in the shape of
 * its path (a GraphQL error on /graphql, `{"detail"}` elsewhere), when nothing of an answer was sent yet.
 */
function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  current: { request: IncomingMessage; response: ServerResponse } | undefined,
  timeouts: { headersTimeoutMs: number; bodyTimeoutMs: number },
): void {
  // A request whose answer is complete is not the one that timed out: a later one on the connection is.
  const pending = current && !current.response.writableEnded ? current : undefined;
  if (error.code === 'ECONNRESET' || !socket.writable || pending?.response.headersSent) {
    socket.destroy();
    return;
  }
  let answer: string;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    // Headers that never completed took the headers timeout; a request whose headers arrived, the body's.
    const message = `Request timeout: the request did not arrive within ${pending ? timeouts.bodyTimeoutMs : timeouts.headersTimeoutMs} ms`;
    const path = pending?.request.url?.split('?')[0];
    answer = rawResponse(
      408,
      'Request Timeout',
      path === '/graphql'
        ? { errors: [{ message, extensions: { code: 'REQUEST_TIMEOUT' } }] }
        : { detail: message },
    );
  } else if (error.code === 'HPE_HEADER_OVERFLOW') {
    answer = rawResponse(431, 'Request Header Fields Too Large');
  } else if (error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') {
    answer = rawResponse(413, 'Payload Too Large');
  } else {
    answer = rawResponse(400, 'Bad Request');
  }
  socket.end(answer, () => socket.destroy());
}

/** node:http with yoga (GraphQL, GraphiQL, REST, health) and graphql-ws on the same port and path. */
export async function startServer(app: App, port: number, host: string): Promise<RunningServer> {
  const { yoga, services } = app;
  const timeouts = services.config.http;
  // A client has HTTP_HEADERS_TIMEOUT_MS for its headers and HTTP_BODY_TIMEOUT_MS for the whole request,
  // counted from its first byte (each request of a kept-alive connection anew); node:http checks them
  // every `connectionsCheckingInterval`, so that is a fraction of the shorter one. An answer written while
  // the body still arrives closes its connection lingering (src/lingering-close.ts), within HTTP_LINGER_MS
  // and HTTP_LINGER_BYTES.
  const server = createServer(
    {
      IncomingMessage: BodyRequest,
      ServerResponse: lingeringResponses({ timeoutMs: timeouts.lingerMs, maxBytes: timeouts.lingerBytes }),
      headersTimeout: timeouts.headersTimeoutMs,
      requestTimeout: timeouts.bodyTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeouts.headersTimeoutMs / 4))),
    },
    yoga,
  );
  const current = new WeakMap<Duplex, { request: IncomingMessage; response: ServerResponse }>();
  server.on('request', (request: IncomingMessage, response: ServerResponse) =>
    current.set(request.socket, { request, response }),
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(error, socket, current.get(socket), timeouts),
  );
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
