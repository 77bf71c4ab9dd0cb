import { randomUUID } from 'node:crypto';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { type ExecutionResult, print } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { App } from '../../src/app.js';
import type { EventBus } from '../../src/events/bus.js';
import type { BusEvent, EventType } from '../../src/events/topics.js';
import { type RunningServer, startServer } from '../../src/server.js';
import type { Caller, TestApp } from './app.js';
import { withTimeout } from './eventually.js';

/** The payload key that marks a readiness probe; a probe never reaches a client. */
const PROBE = 'boardroom_test_probe';

/** A subscription the next `subscribe` expects the server to open on the bus for `tenantId`. */
interface Expected {
  tenantId: string;
  probe: string;
  /** Set when the server subscribes to the bus: the event type to probe with. */
  claimed(type: EventType): void;
  /** Set when the server-side subscription has received the probe. */
  ready(): void;
}

const expectations = new WeakMap<EventBus, Expected[]>();
const appsByUrl = new Map<string, App>();

/**
 * Wraps the app's bus so that a test can tell when a graphql-ws subscription is live on the server: the
 * subscription the test expects drops what it receives until its probe arrives (so nothing from before it
 * was ready reaches the test), and every subscription drops probes.
 */
function instrument(bus: EventBus): Expected[] {
  const existing = expectations.get(bus);
  if (existing) return existing;
  const pending: Expected[] = [];
  expectations.set(bus, pending);
  const listenToBus = bus.listen.bind(bus);
  bus.listen = (types, tenantId, listener, onGap) => {
    const index = pending.findIndex((expected) => expected.tenantId === tenantId);
    const expected = index >= 0 ? pending.splice(index, 1)[0] : undefined;
    let open = !expected;
    const stop = listenToBus(
      types,
      tenantId,
      (event: BusEvent) => {
        const probe = event.payload[PROBE];
        if (probe === undefined) {
          if (open) listener(event);
          return;
        }
        if (expected && probe === expected.probe && !open) {
          open = true;
          expected.ready();
        }
      },
      onGap,
    );
    if (types[0]) expected?.claimed(types[0]);
    return stop;
  };
  return pending;
}

/** Serves a test app on an ephemeral port (WebSocket tests need a real socket). */
export async function listen(t: TestApp): Promise<RunningServer> {
  instrument(t.app.services.bus);
  const server = await startServer(t.app, 0, '127.0.0.1');
  appsByUrl.set(server.url, t.app);
  const close = server.close.bind(server);
  return {
    ...server,
    close: () => {
      appsByUrl.delete(server.url);
      return close();
    },
  };
}

export interface Subscription<Result> {
  /** The next result, or a rejection after `timeoutMs`. */
  next(timeoutMs?: number): Promise<ExecutionResult<Result>>;
  close(): Promise<void>;
}

/** How long to wait for a probe before sending another, and how many to send before giving up. */
const PROBE_INTERVAL_MS = 50;
const PROBE_ROUNDS = 200;

/**
 * Opens a graphql-ws subscription as `caller` on a server started with `listen` and resolves once the server
 * receives bus events for it: events committed before the call are published first (the outbox relay is
 * drained) and are never delivered, events committed after it always are.
 */
export async function subscribe<Result, Variables>(
  httpUrl: string,
  caller: Caller,
  document: TypedDocumentNode<Result, Variables>,
  variables: Variables,
): Promise<Subscription<Result>> {
  const app = appsByUrl.get(httpUrl);
  if (!app) throw new Error(`no server started with listen() at ${httpUrl}`);
  const { bus, relay } = app.services;
  await relay.kick();

  let claimed!: (type: EventType) => void;
  let ready!: () => void;
  const busType = new Promise<EventType>((resolve) => {
    claimed = resolve;
  });
  const live = new Promise<void>((resolve) => {
    ready = resolve;
  });
  const expected: Expected = { tenantId: caller.tenantId, probe: randomUUID(), claimed, ready };
  const pending = instrument(bus);
  pending.push(expected);

  const client: Client = createClient({
    url: `${httpUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${caller.token}` },
    lazy: false,
    retryAttempts: 0,
  });
  const queue: ExecutionResult<Result>[] = [];
  const waiters: ((value: ExecutionResult<Result>) => void)[] = [];
  let failure: unknown;
  let ended = false;
  // A result or an error before the server subscribed to the bus (e.g. a refused operation) ends the wait.
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  client.subscribe(
    { query: print(document as never), variables: variables as Record<string, unknown> },
    {
      next: (value) => {
        const result = value as ExecutionResult<Result>;
        const waiter = waiters.shift();
        if (waiter) waiter(result);
        else queue.push(result);
        settle();
      },
      error: (error) => {
        failure = error;
        ended = true;
        settle();
      },
      complete: () => {
        ended = true;
        settle();
      },
    },
  );

  const type = await Promise.race([busType, settled.then(() => null)]);
  if (type === null) {
    pending.splice(pending.indexOf(expected), 1);
  } else {
    let isLive = false;
    void live.then(() => {
      isLive = true;
    });
    // A subscription that fails after it began listening (an expired `after`) stops listening: no probe
    // reaches it, and its error is the result.
    for (let round = 0; !isLive && !ended; round += 1) {
      if (round === PROBE_ROUNDS) throw new Error(`the ${type} subscription never became live`);
      await bus.publish({
        eventId: randomUUID(),
        type,
        tenantId: caller.tenantId,
        payload: { [PROBE]: expected.probe },
      });
      await Promise.race([live, new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS))]);
    }
  }

  return {
    next(timeoutMs = 5000) {
      if (failure) return Promise.reject(failure);
      const result = queue.shift();
      if (result) return Promise.resolve(result);
      return new Promise<ExecutionResult<Result>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs);
        waiters.push((value) => {
          clearTimeout(timer);
          resolve(value);
        });
      });
    },
    async close() {
      await client.dispose();
    },
  };
}

/** Opens a raw socket, sends connection_init with `payload` and resolves with the close code. */
export function closeCodeFor(httpUrl: string, payload: Record<string, unknown>): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${httpUrl.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload })));
    socket.on('close', (code) => resolve(code));
    socket.on('error', reject);
  });
}

/** A message of the graphql-transport-ws protocol as the server sends it. */
export interface ServerMessage {
  type: string;
  id?: string;
  payload?: any;
}

/** A graphql-transport-ws socket driven message by message (for protocol-level tests). */
export interface RawSocket {
  socket: WebSocket;
  /** Sends a `subscribe` for any operation type. */
  subscribe(id: string, query: string, variables?: Record<string, unknown>): void;
  /** Sends a `complete` for `id` (the client stops a subscription). */
  complete(id: string): void;
  /** Messages for `id` up to and including its `complete` or `error` (rejects after `timeoutMs`). */
  settled(id: string, timeoutMs?: number): Promise<ServerMessage[]>;
  /** The next message for `id` not yet returned by `next` (rejects after `timeoutMs`). */
  next(id: string, timeoutMs?: number): Promise<ServerMessage>;
  /** Every message received for `id` so far. */
  received(id: string): ServerMessage[];
  /** Resolves with the close code once the server closes the socket (rejects after `timeoutMs`). */
  closed(timeoutMs?: number): Promise<number>;
  close(): Promise<void>;
}

const wsUrl = (httpUrl: string) => `${httpUrl.replace(/^http/, 'ws')}/graphql`;

/** Opens a raw socket; with `init` it sends connection_init and waits for the ack. */
export async function openSocket(
  httpUrl: string,
  init: Record<string, unknown> | Caller | null,
  options: WebSocket.ClientOptions = {},
): Promise<RawSocket> {
  const socket = new WebSocket(wsUrl(httpUrl), 'graphql-transport-ws', options);
  const messages: ServerMessage[] = [];
  const listeners = new Set<() => void>();
  const closeCode = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  let isClosed = false;
  void closeCode.then(() => {
    isClosed = true;
    for (const listener of listeners) listener();
  });
  socket.on('error', () => {});
  socket.on('message', (data) => {
    messages.push(JSON.parse(String(data)) as ServerMessage);
    for (const listener of listeners) listener();
  });
  const waitFor = <T>(pick: () => T | undefined, timeoutMs: number, what: string) =>
    withTimeout(
      new Promise<T>((resolve, reject) => {
        const check = () => {
          const found = pick();
          if (found !== undefined) {
            listeners.delete(check);
            resolve(found);
          } else if (isClosed) {
            listeners.delete(check);
            reject(new Error(`socket closed while waiting: ${what}`));
          }
        };
        listeners.add(check);
        check();
      }),
      timeoutMs,
      `no ${what}`,
    );
  const forId = (id: string) => messages.filter((message) => message.id === id);
  const cursors = new Map<string, number>();

  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  if (init) {
    const payload = 'token' in init ? { authorization: `Bearer ${init.token}` } : init;
    socket.send(JSON.stringify({ type: 'connection_init', payload }));
    await waitFor(
      () => messages.find((message) => message.type === 'connection_ack'),
      5000,
      'connection_ack',
    );
  }

  return {
    socket,
    subscribe(id, query, variables) {
      socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } }));
    },
    complete(id) {
      socket.send(JSON.stringify({ id, type: 'complete' }));
    },
    settled(id, timeoutMs = 5000) {
      return waitFor(
        () => {
          const own = forId(id);
          return own.some((message) => message.type === 'complete' || message.type === 'error')
            ? own
            : undefined;
        },
        timeoutMs,
        `complete or error for ${id}`,
      );
    },
    async next(id, timeoutMs = 5000) {
      const cursor = cursors.get(id) ?? 0;
      const message = await waitFor(() => forId(id)[cursor], timeoutMs, `message for ${id}`);
      cursors.set(id, cursor + 1);
      return message;
    },
    received: forId,
    closed(timeoutMs = 5000) {
      return withTimeout(closeCode, timeoutMs, 'close');
    },
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return;
      socket.close(1000);
      await closeCode;
    },
  };
}

/** A subscription to every `agentPaused` of the caller's tenant, as the stream tests open it. */
export const OnAgentPaused = 'subscription { agentPaused { eventId role } }';

/** Publishes an `agentPaused` event of `role` in `tenantId` on the app's bus. */
export function publishAgentPaused(t: TestApp, tenantId: string, role: string) {
  const eventId = randomUUID();
  return t.app.services.bus.publish({
    eventId,
    type: 'DOGFOOD_AGENT_PAUSED',
    tenantId,
    payload: { event_id: eventId, role, tenant_id: tenantId },
  });
}

/**
 * Publishes `agentPaused` probes for `tenantId` until subscription `id` on `socket` receives one: a
 * subscription is live on the server only some time after its `subscribe` was sent.
 */
export async function untilDelivered(t: TestApp, socket: RawSocket, id: string, tenantId: string) {
  for (let round = 0; socket.received(id).length === 0; round += 1) {
    if (round === 50) throw new Error(`subscription ${id} never became live`);
    await publishAgentPaused(t, tenantId, 'probe');
    await socket.next(id, 100).catch(() => undefined);
  }
  // Later reads start after the probes.
  while (await socket.next(id, 0).catch(() => undefined)) {}
}

/** The next message for `id` that is not a probe of `untilDelivered` (a late probe may still arrive). */
export async function nextEvent(socket: RawSocket, id: string, timeoutMs = 5000): Promise<ServerMessage> {
  for (;;) {
    const message = await socket.next(id, timeoutMs);
    if (message.payload?.data?.agentPaused?.role !== 'probe') return message;
  }
}
