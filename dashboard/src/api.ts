import { type Client, createClient } from 'graphql-ws';

export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

interface GraphQLResponse<Data> {
  data?: Data | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** Runs a query over HTTP with the token; throws the first GraphQL error. */
export async function query<Data>(
  token: string,
  document: string,
  variables: Record<string, unknown> = {},
): Promise<Data> {
  const response = await fetch('/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query: document, variables }),
  });
  const body = (await response.json()) as GraphQLResponse<Data>;
  const error = body.errors?.[0];
  if (error || !body.data) {
    throw new GraphQLRequestError(error?.message ?? `HTTP ${response.status}`, error?.extensions?.code);
  }
  return body.data;
}

export interface AbTestResultsSummary {
  chiSquaredPValue: number | null;
  significant: boolean;
  alpha: number;
  variants: { observations: number }[];
}

export interface LiveEvent {
  __typename:
    | 'AgentPausedEvent'
    | 'AgentResumedEvent'
    | 'TaskUpdatedEvent'
    | 'ModelVersionChangedEvent'
    | 'ConnectorInvokedEvent'
    | 'AbTestResultsChangedEvent';
  eventId: string;
  role?: string;
  actorUserId?: string;
  pausedAt?: string;
  resumedAt?: string;
  status?: string;
  taskId?: string;
  updatedAt?: string;
  baseModel?: string;
  versionNumber?: number;
  deploymentStatus?: string;
  previousStatus?: string | null;
  connectorId?: string;
  method?: string;
  path?: string;
  outcome?: string;
  httpStatus?: number | null;
  testId?: string;
  name?: string;
  testStatus?: string;
  results?: AbTestResultsSummary;
}

export const AB_RESULTS_FIELDS = 'chiSquaredPValue significant alpha variants { observations }';

const EVENTS = `subscription DashboardEvents($after: ID) {
  events(after: $after) {
    __typename
    ... on EventStreamStarted { position }
    ... on AgentPausedEvent { eventId role actorUserId pausedAt }
    ... on AgentResumedEvent { eventId role actorUserId resumedAt }
    ... on TaskUpdatedEvent { eventId role taskId status updatedAt }
    ... on ModelVersionChangedEvent { eventId baseModel versionNumber deploymentStatus previousStatus }
    ... on ConnectorInvokedEvent { eventId connectorId method path outcome httpStatus: status }
    ... on AbTestResultsChangedEvent { eventId testId name testStatus: status results { ${AB_RESULTS_FIELDS} } }
  }
}`;

type StreamMessage = LiveEvent | { __typename: 'EventStreamStarted'; position: string };

export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'offline' | 'unauthorized';

export interface LiveFeedHandlers {
  onEvent(event: LiveEvent): void;
  onState(state: ConnectionState): void;
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
          if ((event as CloseEvent | undefined)?.code === 4401) {
            stopped = true;
            handlers.onState('unauthorized');
          }
        },
      },
    });
    client = current;
    current.subscribe<{ events: StreamMessage }>(
      { query: EVENTS, variables: { after: resumePoint } },
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
