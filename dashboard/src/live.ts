import { type Client, createClient } from 'graphql-ws';
import type { DashboardEventsSubscription } from '../../src/generated/dashboard/graphql.js';
import { Events } from './documents.js';

type StreamMessage = DashboardEventsSubscription['events'];
/** An event of the tenant's stream (every message but the EventStreamStarted that opens it). */
export type LiveEvent = Exclude<StreamMessage, { __typename: 'EventStreamStarted' }>;

export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'offline' | 'unauthorized';

export interface LiveFeedHandlers {
  onEvent(event: LiveEvent): void;
  onState(state: ConnectionState): void;
  /** The server closed the socket for the token (4401), with its reason (e.g. "Token expired"). */
  onRefused(reason: string): void;
  /**
   * The subscription started from nothing the page had (its first, or after the resume point expired):
   * read the whole state now. Whatever changes after this arrives as an event.
   */
  onFreshStart(): void;
}

export interface LiveFeed {
  /** Closes the socket and stays offline until `reconnect`. */
  disconnect(): void;
  /** Connects now (dropping any socket) and resumes where the last subscription left off. */
  reconnect(): void;
  stop(): void;
}

/**
 * The tenant's event stream over graphql-ws, with the token in `connection_init`. Every subscription opens
 * with the position it starts from; the feed keeps it as its resume point until an event arrives, then
 * the event's id, and every reconnection subscribes with `after` = that point. So nothing is missed or
 * repeated across drops, whether or not an event came before the drop.
 */
export function openLiveFeed(token: string, handlers: LiveFeedHandlers): LiveFeed {
  let resumePoint: string | null = null;
  let client: Client | null = null;
  let stopped = false;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;

  function connect() {
    if (stopped) return;
    handlers.onState(attempt === 0 ? 'connecting' : 'reconnecting');
    const current = createClient({
      url,
      connectionParams: { authorization: `Bearer ${token}` },
      lazy: false,
      retryAttempts: 0,
      on: {
        closed: (event) => {
          if (current !== client) return;
          const close = event as CloseEvent | undefined;
          if (close?.code === 4401) {
            stopped = true;
            handlers.onState('unauthorized');
            handlers.onRefused(close.reason || 'Unauthorized');
          }
        },
      },
    });
    client = current;
    current.subscribe<DashboardEventsSubscription>(
      { query: Events.toString(), variables: { after: resumePoint } },
      {
        next: (result) => {
          if (current !== client) return;
          const expired = result.errors?.some((error) => error.extensions?.code === 'RESUME_POINT_EXPIRED');
          if (expired) {
            // State may have changed unseen: the next subscription starts afresh and the page rereads.
            resumePoint = null;
            return;
          }
          const message = result.data?.events;
          if (!message) return;
          if (message.__typename === 'EventStreamStarted') {
            const fresh = resumePoint === null;
            resumePoint = message.position;
            attempt = 0;
            handlers.onState('live');
            if (fresh) handlers.onFreshStart();
            return;
          }
          resumePoint = message.eventId;
          handlers.onEvent(message);
        },
        error: () => retry(current),
        complete: () => retry(current),
      },
    );
  }

  function retry(from: Client) {
    if (from !== client || stopped) return;
    client = null;
    void from.dispose();
    attempt += 1;
    handlers.onState('reconnecting');
    timer = setTimeout(connect, Math.min(5000, 100 * 2 ** Math.min(attempt, 6)));
  }

  function drop() {
    clearTimeout(timer);
    const current = client;
    client = null;
    void current?.dispose();
  }

  connect();
  return {
    disconnect() {
      drop();
      handlers.onState('offline');
    },
    reconnect() {
      drop();
      attempt += 1;
      connect();
    },
    stop() {
      stopped = true;
      clearTimeout(timer);
      void client?.dispose();
      client = null;
    },
  };
}
