import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type ExecutionArgs, type ExecutionResult, GraphQLError, getOperationAST } from 'graphql';
import { CloseCode, type SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import type { WebSocket, WebSocketServer } from 'ws';
import type { App } from './app.js';
import { hasExpired, onExpiry } from './auth/expiry.js';
import { authenticate } from './auth/request.js';
import type { Viewer } from './auth/viewer.js';
import { verifySocketCredential } from './context.js';
import { badRequest, unauthenticated } from './domain/errors.js';
import { graphQLErrorOf, serviceError, withoutInternals } from './errors.js';
import { IDEMPOTENCY_KEY_HEADER } from './http/idempotency-key.js';
import { callerKey as callerKeyOf } from './rate-limit.js';

/**
 * Close codes beside graphql-ws's own (4400 bad message, 4401 unauthorized or expired token, 4408 no
 * connection_init in time, 4409 duplicate id). Standard codes where one fits; see
 * docs/decisions/0015-websocket.md.
 */
export const WebSocketClose = {
  GoingAway: 1001,
  PolicyViolation: 1008,
  MessageTooBig: 1009,
  InternalError: 1011,
} as const;

type Enveloped = ReturnType<App['yoga']['getEnveloped']>;

interface Operation {
  requestId: string;
  name: string | undefined;
  type: string | undefined;
  started: number;
  errors: boolean;
}

/** What one socket knows about itself: the caller verified at connection_init and its open operations. */
interface Connection {
  id: string;
  opened: number;
  viewer?: Viewer;
  /** The caller's key (`callerKey`) of its rate limit and of its stream slots. */
  callerKey?: string;
  /** Gives back the caller's stream slot the socket holds. */
  releaseSlot?: () => void;
  /** Cancels the close at the token's `exp`. */
  stopExpiryTimer?: () => void;
  stopCountingInitBytes(): void;
  operations: Map<string, Operation>;
}

/** What `execute` / `subscribe` need beyond the arguments graphql-ws hands them. */
interface Prepared {
  enveloped: Enveloped;
  payload: SubscribePayload;
  viewer: Viewer;
  requestId: string;
  /** The operation's request: what yoga's hooks, the context and the response cache key on. */
  request: Request;
}

export interface GraphQLOverWebSocket {
  /** Sends 1001 to every socket, waits up to `graceMs` for them to close, then cuts the rest. */
  close(graceMs: number): Promise<void>;
}

function toRequest(incoming: IncomingMessage, requestId: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    // The upgrade request's Idempotency-Key would key every mutation of the socket: operations over a
    // socket carry no key (docs/idempotency.md).
    if (typeof value === 'string' && name !== IDEMPOTENCY_KEY_HEADER.toLowerCase()) headers.set(name, value);
  }
  headers.set('x-request-id', requestId);
  // POST: yoga refuses mutations in a GET, which is what the upgrade request was.
  return new Request(`http://${incoming.headers.host ?? 'localhost'}${incoming.url ?? '/'}`, {
    method: 'POST',
    headers,
  });
}

const unexpected = () => new GraphQLError('Unexpected error.');

/**
 * graphql-ws on `wsServer`: the token is verified once at connection_init and its viewer serves every
 * operation of the socket until the token expires, when the socket is closed with 4401. Subscriptions run
 * through yoga's envelop; queries and mutations run through `getResultForParams`, as REST's do: the onParams
 * hooks (response cache, input limits), the enveloped operation and its result hooks, with the socket's
 * viewer as the request's authentication and no second HTTP request. Whatever fails while an
 * operation is prepared answers an `error` for its id; the socket and its other operations stay open.
 */
export function serveGraphQLOverWebSocket(app: App, wsServer: WebSocketServer): GraphQLOverWebSocket {
  const { yoga, services } = app;
  const limits = services.config.websocket;
  const logger = services.logger;
  const connections = new WeakMap<WebSocket, Connection>();
  const prepared = new WeakMap<ExecutionArgs, Prepared>();

  const connectionOf = (socket: WebSocket): Connection => {
    const connection = connections.get(socket);
    if (!connection) throw new Error('socket without connection state');
    return connection;
  };
  const expired = (connection: Connection) =>
    connection.viewer !== undefined && hasExpired(connection.viewer);
  const closeExpired = (socket: WebSocket) => socket.close(CloseCode.Unauthorized, 'Token expired');

  const logOperation = (connection: Connection, id: string, outcome: string, code?: unknown) => {
    const operation = connection.operations.get(id);
    if (!operation) return;
    connection.operations.delete(id);
    logger.info(
      {
        requestId: operation.requestId,
        connectionId: connection.id,
        tenantId: connection.viewer?.tenantId,
        operation: operation.name,
        operationType: operation.type,
        outcome,
        ...(code ? { code } : {}),
        durationMs: Math.round((performance.now() - operation.started) * 10) / 10,
      },
      'websocket operation',
    );
  };

  // Before the useServer listener sees the socket: state, the pre-init byte budget and the close log.
  wsServer.on('connection', (socket, request) => {
    let received = 0;
    const countInitBytes = (chunk: Buffer) => {
      received += chunk.length;
      if (received <= limits.maxInitBytes) return;
      request.socket.off('data', countInitBytes);
      socket.close(WebSocketClose.MessageTooBig, 'Message too big before connection_init');
    };
    // Ahead of ws's own listener, so bytes are counted before a frame is parsed.
    request.socket.prependListener('data', countInitBytes);
    const connection: Connection = {
      id: randomUUID(),
      opened: performance.now(),
      stopCountingInitBytes: () => request.socket.off('data', countInitBytes),
      operations: new Map(),
    };
    connections.set(socket, connection);
    // ws reports a client's protocol violation (a frame over WS_MAX_FRAME_BYTES, a bad opcode or UTF-8) as an
    // 'error' of the socket, with a `WS_ERR_*` code, and closes it with the matching code itself (1009,
    // 1002, 1007). graphql-ws's listener would print it to stderr as an internal error of the server: it is
    // the client's, so it is logged here and not passed on. Any other error still is.
    const emit = socket.emit.bind(socket);
    socket.emit = ((event: string | symbol, ...args: unknown[]) => {
      const [error] = args as [(Error & { code?: unknown }) | undefined];
      if (event === 'error' && typeof error?.code === 'string' && error.code.startsWith('WS_ERR_')) {
        logger.info(
          { connectionId: connection.id, code: error.code, reason: error.message },
          'websocket protocol error',
        );
        return true;
      }
      return emit(event, ...args);
    }) as typeof socket.emit;
    socket.once('close', (code, reason) => {
      connection.stopCountingInitBytes();
      connection.stopExpiryTimer?.();
      connection.releaseSlot?.();
      for (const id of [...connection.operations.keys()]) logOperation(connection, id, 'closed');
      logger.info(
        {
          connectionId: connection.id,
          tenantId: connection.viewer?.tenantId,
          code,
          reason: reason.toString() || undefined,
          durationMs: Math.round(performance.now() - connection.opened),
        },
        'websocket closed',
      );
    });
  });

  const handle = useServer<Record<string, unknown>>(
    {
      connectionInitWaitTimeout: limits.connectionInitTimeoutMs,
      onConnect: async (ctx) => {
        const { socket } = ctx.extra;
        const connection = connectionOf(socket);
        const raw = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        const authorization = typeof raw === 'string' ? raw : null;
        let viewer: Viewer | null;
        try {
          viewer = await verifySocketCredential(services, authorization);
        } catch (error) {
          if (error instanceof GraphQLError && error.extensions?.code === 'UNAUTHENTICATED') viewer = null;
          else {
            logger.error({ err: error, connectionId: connection.id }, 'websocket connection_init failed');
            socket.close(WebSocketClose.InternalError, 'Internal error');
            return false;
          }
        }
        if (!viewer || !authorization) {
          socket.close(CloseCode.Unauthorized, 'Unauthorized');
          return false;
        }
        // The client may have gone while the token was checked: count only sockets still open.
        if (socket.readyState !== socket.OPEN) return false;
        const callerKey = callerKeyOf(viewer);
        const releaseSlot = services.streams.take(callerKey);
        if (!releaseSlot) {
          logger.info(
            { connectionId: connection.id, tenantId: viewer.tenantId, limit: services.streams.maxPerCaller },
            'websocket refused: too many streams for the caller',
          );
          socket.close(WebSocketClose.PolicyViolation, 'Too many streams for this caller');
          return false;
        }
        connection.releaseSlot = releaseSlot;
        connection.callerKey = callerKey;
        connection.viewer = viewer;
        connection.stopCountingInitBytes();
        // Subscriptions end at `exp` by themselves (useSubscriptionStreams); the socket closes with them.
        connection.stopExpiryTimer = onExpiry(viewer, () => closeExpired(socket));
        logger.info({ connectionId: connection.id, tenantId: viewer.tenantId }, 'websocket connected');
        return true;
      },
      onSubscribe: async (ctx, id, payload) => {
        const { socket, request } = ctx.extra;
        const connection = connectionOf(socket);
        const requestId = randomUUID();
        connection.operations.set(id, {
          requestId,
          name: payload.operationName ?? undefined,
          type: undefined,
          started: performance.now(),
          errors: false,
        });
        const { viewer, callerKey } = connection;
        if (!viewer || !callerKey) return [graphQLErrorOf(unauthenticated())];
        if (expired(connection)) {
          closeExpired(socket);
          return [graphQLErrorOf(unauthenticated('Token has expired'))];
        }
        try {
          // graphql-ws registers the id before this hook runs: it counts itself.
          if (Object.keys(ctx.subscriptions).length > limits.maxSubscriptionsPerSocket) {
            return [
              graphQLErrorOf(
                badRequest(
                  `At most ${limits.maxSubscriptionsPerSocket} operations may be open on one socket`,
                ),
              ),
            ];
          }
          const retryAfter = await services.rateLimiter.consume(callerKey);
          if (retryAfter !== null) {
            return [
              serviceError('RATE_LIMITED', `Too many requests; retry in ${retryAfter} s`, {
                extensions: { retryAfter },
              }),
            ];
          }
          const operationRequest = toRequest(request, requestId);
          const enveloped = yoga.getEnveloped({
            request: operationRequest,
            viewer,
            params: payload,
          });
          const document = enveloped.parse(payload.query);
          const errors = enveloped.validate(enveloped.schema, document);
          if (errors.length > 0) return errors;
          const operation = getOperationAST(document, payload.operationName);
          if (!operation) return [graphQLErrorOf(badRequest('Unable to identify the operation to run'))];
          const logged = connection.operations.get(id);
          if (logged) {
            logged.type = operation.operation;
            logged.name ??= operation.name?.value;
          }
          const args: ExecutionArgs = {
            schema: enveloped.schema,
            document,
            operationName: payload.operationName,
            variableValues: payload.variables,
            // Only subscriptions execute with this context; getResultForParams builds the others' own.
            contextValue: operation.operation === 'subscription' ? await enveloped.contextFactory() : {},
          };
          prepared.set(args, { enveloped, payload, viewer, requestId, request: operationRequest });
          return args;
        } catch (error) {
          // Syntax errors are thrown by parse; anything else is unexpected and stays masked.
          if (error instanceof GraphQLError && !error.originalError) return [error];
          logger.error({ err: error, requestId, connectionId: connection.id }, 'websocket operation failed');
          return [unexpected()];
        }
      },
      execute: async (args) => {
        const operation = prepared.get(args);
        if (!operation) return { errors: [unexpected()] };
        try {
          // The socket's verified caller is this request's authentication, for the response cache as for
          // the context: nothing is verified twice.
          const serverContext = { viewer: operation.viewer };
          await authenticate(operation.request, serverContext, services.tokens);
          const { query, operationName, variables, extensions } = operation.payload;
          const result = (await yoga.getResultForParams(
            {
              params: {
                query,
                operationName: operationName ?? undefined,
                variables: variables ?? undefined,
                extensions: extensions ?? undefined,
              },
              request: operation.request,
            },
            serverContext,
          )) as ExecutionResult;
          return withoutInternals(result);
        } catch (error) {
          // An onParams hook's refusal (the input limits) answers like the operation's own errors.
          if (error instanceof GraphQLError) return withoutInternals({ errors: [error] });
          logger.error({ err: error, requestId: operation.requestId }, 'websocket operation failed');
          return { errors: [unexpected()] };
        }
      },
      subscribe: async (args) => {
        const operation = prepared.get(args);
        if (!operation) return { errors: [unexpected()] };
        try {
          return await operation.enveloped.subscribe(args);
        } catch (error) {
          logger.error({ err: error, requestId: operation.requestId }, 'websocket operation failed');
          return { errors: [unexpected()] };
        }
      },
      onNext: (ctx, id, _payload, _args, result) => {
        const { socket } = ctx.extra;
        const connection = connectionOf(socket);
        // Closing first makes graphql-ws skip the send: nothing is delivered once the token has expired.
        if (expired(connection)) {
          closeExpired(socket);
          return;
        }
        const operation = connection.operations.get(id);
        if (operation && result.errors?.length) operation.errors = true;
        // GraphQLErrors serialise through their toJSON.
        return result as ExecutionResult;
      },
      onError: (ctx, id, _payload, errors) => {
        logOperation(connectionOf(ctx.extra.socket), id, 'error', errors[0]?.extensions?.code);
      },
      onComplete: (ctx, id) => {
        const { socket } = ctx.extra;
        const connection = connectionOf(socket);
        const errors = connection.operations.get(id)?.errors;
        logOperation(connection, id, socket.readyState !== socket.OPEN ? 'closed' : errors ? 'errors' : 'ok');
      },
    },
    wsServer,
  );

  return {
    async close(graceMs) {
      const open = [...wsServer.clients];
      const closed = Promise.all(
        open.map(
          (socket) =>
            new Promise<void>((resolve) => {
              if (socket.readyState === socket.CLOSED) resolve();
              else socket.once('close', () => resolve());
            }),
        ),
      );
      for (const socket of open) socket.close(WebSocketClose.GoingAway, 'Server shutting down');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
      // A client that never answers the close frame would otherwise hold ws for its 30 s close timeout.
      for (const socket of wsServer.clients) socket.terminate();
      await handle.dispose();
    },
  };
}
