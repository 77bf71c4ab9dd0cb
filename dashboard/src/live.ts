import { type Client, createClient } from 'graphql-ws';
import type {
  DashboardEventsSubscription,
  DashboardTaskStepsRecordedSubscription,
} from '../../src/generated/dashboard/graphql.js';
import { Events, TaskStepsRecorded } from './documents.js';

type StreamMessage = DashboardEventsSubscription['events'];
/**
 * An event of the tenant's stream: every message but the EventStreamStarted that opens it and the recorded
 * steps the feed does not ask for (an open task's timeline follows its own, followTaskSteps).
 */
export type LiveEvent = Exclude<
  StreamMessage,
  { __typename: 'EventStreamStarted' | 'TaskStepsRecordedEvent' }
>;

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
  /**
   * Where the stream stands: the id of the last event received, or the position it started from; null
   * before it started. Every event published before what this names has reached the page.
   */
  resumePoint(): string | null;
}

const socketUrl = () => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
const retryDelay = (attempt: number) => Math.min(5000, 100 * 2 ** Math.min(attempt, 6));

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

  const url = socketUrl();

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
          if (message.__typename === 'TaskStepsRecordedEvent') return;
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
    timer = setTimeout(connect, retryDelay(attempt));
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
    resumePoint: () => resumePoint,
  };
}

/**
 * One task's recorded steps as they happen (`taskStepsRecorded`), over a socket of its own: `onRecorded`
 * is told each event's last seq. It starts after `after` (the tenant feed's resume point, taken before the
 * page read the steps, so nothing recorded since that read is missed) and resumes after the last event
 * received when the socket drops. When the point has expired it starts afresh and calls `onRestart`, for a
 * reread. Returns the function that stops it.
 */
export function followTaskSteps(
  token: string,
  taskId: string,
  after: string | null,
  onRecorded: (lastSeq: number) => void,
  onRestart: () => void,
): () => void {
  let resumePoint = after;
  let client: Client | null = null;
  let stopped = false;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  function connect() {
    if (stopped) return;
    const current = createClient({
      url: socketUrl(),
      connectionParams: { authorization: `Bearer ${token}` },
      lazy: false,
      retryAttempts: 0,
    });
    client = current;
    current.subscribe<DashboardTaskStepsRecordedSubscription>(
      { query: TaskStepsRecorded.toString(), variables: { taskId, after: resumePoint } },
      {
        next: (result) => {
          if (current !== client) return;
          if (result.errors?.some((error) => error.extensions?.code === 'RESUME_POINT_EXPIRED')) {
            resumePoint = null;
            onRestart();
            return;
          }
          const event = result.data?.taskStepsRecorded;
          if (!event) return;
          attempt = 0;
          resumePoint = event.eventId;
          onRecorded(event.lastSeq);
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
    timer = setTimeout(connect, retryDelay(attempt));
  }

  connect();
  return () => {
    stopped = true;
    clearTimeout(timer);
    void client?.dispose();
    client = null;
  };
}
