import './style.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { type ConnectionState, GraphQLRequestError, type LiveEvent, openLiveFeed } from './api.js';
import { AbTests, Connection, Feed, Models, Queue, RoleCard } from './components.js';
import {
  type AbTestSummary,
  abTestSummary,
  loadAbTests,
  loadModels,
  loadQueue,
  loadRole,
  loadRoles,
  type ProductionModel,
  ROLES,
  type Role,
  type RoleState,
  type TaskCounts,
} from './data.js';
import { forgetToken, saveToken, takeToken } from './token.js';

const FEED_LENGTH = 200;
/**
 * The sliding 24 h window of the vitals changes without an event: the roles are reread on a timer. The
 * running A/B tests are reread with them, in case an announcement of their results was lost with the
 * instance that owed it (they otherwise follow their events).
 */
const UNANNOUNCED_REFRESH_MS = 30_000;

declare global {
  interface Window {
    /** Handle for operators and tests: go offline, and come back resuming where the feed left off. */
    boardroomDashboard?: { disconnect(): void; reconnect(): void };
  }
}

const isRole = (role: string | undefined): role is Role => ROLES.includes(role as Role);
const emptyRoles = (): RoleState[] =>
  ROLES.map((role) => ({ role, paused: false, pausedAt: null, pausedBy: null, vitals: null }));

function Dashboard({ token, onUnauthorized }: { token: string; onUnauthorized(message: string): void }) {
  const [roles, setRoles] = useState<RoleState[]>(emptyRoles);
  const [counts, setCounts] = useState<TaskCounts | null>(null);
  const [models, setModels] = useState<ProductionModel[]>([]);
  const [tests, setTests] = useState<AbTestSummary[]>([]);
  const [events, setEvents] = useState<{ event: LiveEvent; at: string }[]>([]);
  const [connection, setConnection] = useState<ConnectionState>('connecting');
  const [problem, setProblem] = useState<string | null>(null);
  // Bumped by every event of a role: a read started before it must not overwrite what the event set.
  const generations = useRef(new Map<Role, number>());
  // The same for A/B tests: the count of results events so far, and the last one of each test.
  const abEvents = useRef({ count: 0, last: new Map<string, number>() });
  const seen = useRef(new Set<string>());

  useEffect(() => {
    let active = true;
    const generation = (role: Role) => generations.current.get(role) ?? 0;
    const fail = (error: unknown) => {
      if (!active) return;
      if (error instanceof GraphQLRequestError && error.code === 'UNAUTHENTICATED') {
        onUnauthorized('The token was refused: paste a valid one.');
      } else {
        setProblem(error instanceof Error ? error.message : String(error));
      }
    };
    const putRole = (next: RoleState, startedAt: number) => {
      if (!active || generation(next.role) !== startedAt) return;
      setRoles((current) => current.map((state) => (state.role === next.role ? next : state)));
    };
    const refreshRole = (role: Role, eventId: string) => {
      const startedAt = generation(role);
      loadRole(token, role, eventId).then((next) => putRole(next, startedAt), fail);
    };
    const reloadRoles = () => {
      const started = new Map(ROLES.map((role) => [role, generation(role)]));
      loadRoles(token).then((all) => {
        for (const next of all) putRole(next, started.get(next.role) ?? 0);
        setProblem(null);
      }, fail);
    };
    const reloadAbTests = () => {
      const startedAt = abEvents.current.count;
      loadAbTests(token).then((snapshot) => {
        if (!active) return;
        const changed = new Set(
          [...abEvents.current.last].filter(([, at]) => at > startedAt).map(([id]) => id),
        );
        setTests((current) => mergeAbTests(snapshot, current, changed));
      }, fail);
    };
    const refreshAll = () => {
      reloadRoles();
      refreshQueue();
      loadModels(token).then((next) => active && setModels(next), fail);
      reloadAbTests();
    };
    let queueTimer: ReturnType<typeof setTimeout> | undefined;
    function refreshQueue() {
      clearTimeout(queueTimer);
      queueTimer = setTimeout(() => loadQueue(token).then((next) => active && setCounts(next), fail), 50);
    }

    const onEvent = (event: LiveEvent) => {
      if (seen.current.has(event.eventId)) return;
      seen.current.add(event.eventId);
      if (event.__typename === 'AbTestResultsChangedEvent') {
        // Several a second while a test records events: its row follows them, the feed does not.
        const { testId, testStatus, results } = event;
        if (!testId) return;
        abEvents.current.count += 1;
        abEvents.current.last.set(testId, abEvents.current.count);
        const next =
          testStatus === 'running' && results ? abTestSummary(testId, event.name ?? '', results) : null;
        setTests((current) => withAbTest(current, testId, next));
        return;
      }
      setEvents((current) =>
        [{ event, at: new Date().toLocaleTimeString() }, ...current].slice(0, FEED_LENGTH),
      );
      const role = event.role;
      if (event.__typename === 'ModelVersionChangedEvent') {
        loadModels(token).then((next) => active && setModels(next), fail);
      } else if (event.__typename === 'TaskUpdatedEvent') {
        refreshQueue();
        if (isRole(role) && (event.status === 'completed' || event.status === 'failed')) {
          refreshRole(role, event.eventId);
        }
      } else if (isRole(role)) {
        const paused = event.__typename === 'AgentPausedEvent';
        generations.current.set(role, generation(role) + 1);
        setRoles((current) =>
          current.map((state) =>
            state.role === role
              ? {
                  ...state,
                  paused,
                  pausedBy: paused ? (event.actorUserId ?? null) : null,
                  pausedAt: paused ? (event.pausedAt ?? null) : state.pausedAt,
                }
              : state,
          ),
        );
        refreshRole(role, event.eventId);
      }
    };

    // Read once the subscription has started: whatever happens from then on arrives as an event.
    const feed = openLiveFeed(token, {
      onEvent,
      onState: (state) => {
        setConnection(state);
        if (state === 'unauthorized') onUnauthorized('The token was refused: paste a valid one.');
      },
      onFreshStart: refreshAll,
    });
    window.boardroomDashboard = { disconnect: () => feed.disconnect(), reconnect: () => feed.reconnect() };
    const timer = setInterval(() => {
      if (document.visibilityState !== 'visible') return;
      reloadAbTests();
      reloadRoles();
    }, UNANNOUNCED_REFRESH_MS);

    return () => {
      active = false;
      clearInterval(timer);
      clearTimeout(queueTimer);
      feed.stop();
      delete window.boardroomDashboard;
    };
  }, [token, onUnauthorized]);

  return (
    <>
      <header class="top">
        <h1>Boardroom</h1>
        <Connection state={connection} />
      </header>
      {problem ? <p class="problem">{problem}</p> : null}
      <main>
        <div class="cards">
          {roles.map((state) => (
            <RoleCard key={state.role} state={state} />
          ))}
        </div>
        <div class="side">
          <Queue counts={counts} />
          <Models models={models} />
          <AbTests tests={tests} />
        </div>
        <Feed events={events} />
      </main>
    </>
  );
}

/** The tests with one test's row replaced (`next`), added first, or removed (null: it no longer runs). */
function withAbTest(tests: AbTestSummary[], id: string, next: AbTestSummary | null): AbTestSummary[] {
  if (!next) return tests.filter((test) => test.id !== id);
  if (!tests.some((test) => test.id === id)) return [next, ...tests];
  return tests.map((test) => (test.id === id ? next : test));
}

/** A snapshot of the running tests, except those an event changed since it was requested (`changed`). */
function mergeAbTests(snapshot: AbTestSummary[], current: AbTestSummary[], changed: Set<string>) {
  if (changed.size === 0) return snapshot;
  const live = current.filter((test) => changed.has(test.id));
  const older = snapshot.filter((test) => !changed.has(test.id));
  return [...live, ...older];
}

function TokenForm({ message, onToken }: { message: string | null; onToken(token: string): void }) {
  const [value, setValue] = useState('');
  return (
    <form
      class="token"
      onSubmit={(event) => {
        event.preventDefault();
        if (value.trim()) onToken(value);
      }}
    >
      <h1>Boardroom dashboard</h1>
      <p>
        Paste a token (chairman, operator or any role of the tenant), or open
        <code> /dashboard#token=&lt;JWT&gt;</code>. It stays in this tab only.
      </p>
      {message ? <p class="problem">{message}</p> : null}
      <textarea
        aria-label="Token"
        rows={4}
        value={value}
        onInput={(event) => setValue((event.target as HTMLTextAreaElement).value)}
      />
      <button type="submit">Open dashboard</button>
    </form>
  );
}

function App() {
  const [token, setToken] = useState<string | null>(takeToken);
  const [message, setMessage] = useState<string | null>(null);
  const onUnauthorized = useRef((text: string) => {
    forgetToken();
    setMessage(text);
    setToken(null);
  }).current;
  if (!token) {
    return (
      <TokenForm
        message={message}
        onToken={(next) => {
          saveToken(next);
          setMessage(null);
          setToken(takeToken());
        }}
      />
    );
  }
  return <Dashboard token={token} onUnauthorized={onUnauthorized} />;
}

render(<App />, document.getElementById('app') as HTMLElement);
