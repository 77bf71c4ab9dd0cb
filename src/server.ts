import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ExecutionArgs } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import type { App } from './app.js';
import { authenticate } from './context.js';

export interface RunningServer {
  server: Server;
  url: string;
  /** Stops accepting, lets in-flight requests finish, closes sockets, then the app. */
  close(): Promise<void>;
}

function toRequest(incoming: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(`http://${incoming.headers.host ?? 'localhost'}${incoming.url ?? '/'}`, { headers });
}

type Enveloped = ReturnType<App['yoga']['getEnveloped']>;

/** node:http with yoga (GraphQL, GraphiQL, REST, health) and graphql-ws on the same port and path. */
export async function startServer(app: App, port: number, host: string): Promise<RunningServer> {
  const { yoga, services } = app;
  const server = createServer(yoga);
  const wsServer = new WebSocketServer({ server, path: yoga.graphqlEndpoint });

  const wsHandle = useServer<Record<string, unknown>, { request: IncomingMessage }>(
    {
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      onConnect: async (ctx) => {
        const authorization = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        try {
          const viewer = await authenticate(
            services,
            typeof authorization === 'string' ? authorization : null,
          );
          if (viewer) return true;
        } catch {}
        ctx.extra.socket.close(CloseCode.Unauthorized, 'Unauthorized');
        return false;
      },
      onSubscribe: async (ctx, _id, payload) => {
        // Same plugins and context as HTTP: the operation runs through yoga's envelop.
        const enveloped = yoga.getEnveloped({
          ...ctx,
          request: toRequest(ctx.extra.request),
          connectionParams: ctx.connectionParams,
          params: payload,
        });
        const args: ExecutionArgs = {
          schema: enveloped.schema,
          operationName: payload.operationName,
          document: enveloped.parse(payload.query),
          variableValues: payload.variables,
          contextValue: await enveloped.contextFactory(),
          rootValue: enveloped,
        };
        const errors = enveloped.validate(args.schema, args.document);
        if (errors.length > 0) return errors;
        return args;
      },
    },
    wsServer,
  );

  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve) => server.listen(port, host, resolve));
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    server,
    url,
    close() {
      closing ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await wsHandle.dispose();
        for (const client of wsServer.clients) client.terminate();
        const deadline = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, 10_000);
        await stopped;
        clearTimeout(deadline);
        await app.close();
      })();
      return closing;
    },
  };
}
