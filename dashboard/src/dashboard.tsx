import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type {
  ConnectorCallApprovalStatus,
  DashboardApprovalFragment,
  DashboardRoleFieldsFragment,
  DashboardTaskApprovalFragment,
  DashboardTenantBudgetQuery,
} from '../../src/generated/dashboard/graphql.js';
import { abilitiesOf } from './abilities.js';
import { GraphQLRequestError, request } from './api.js';
import { type AbTestSummary, AbTests } from './components/ab-tests.js';
import { ApprovalDialog, type DialogRequest } from './components/approval-dialog.js';
import { type ApprovalDecision, Approvals, type InboxEntry, taskStatusOf } from './components/approvals.js';
import { type BudgetChange, BudgetDialog } from './components/budget-dialog.js';
import { Cost } from './components/cost.js';
import { Feed, type FeedEntry, timeOf } from './components/feed.js';
import { Header, type Viewer } from './components/header.js';
import { canaryOf, type ModelRow, Models } from './components/models.js';
import { OrgChart } from './components/org-chart.js';
import { PauseDialog } from './components/pause-dialog.js';
import { type RoleAction, RoleCard, type RoleState } from './components/role-card.js';
import { Routines } from './components/routines.js';
import { type Alert, Summary, type TaskCounts } from './components/summary.js';
import { TaskDetail } from './components/task-detail.js';
import { Tasks } from './components/tasks.js';
import { type HourlyVitals, Trends } from './components/trends.js';
import {
  AbResults,
  AbTests as AbTestsDocument,
  Agents,
  Approvals as ApprovalsDocument,
  ApproveCall,
  ApproveTask,
  ConnectorNames,
  History,
  ModelLine,
  Models as ModelsDocument,
  PauseAgent,
  Queue,
  RejectCall,
  RejectTask,
  RequestCallChanges,
  RequestTaskChanges,
  ResumeAgent,
  Role,
  SetBudget,
  TaskApprovals,
  TenantBudget,
  VitalsByHour,
} from './documents.js';
import { formatCount, roleLabel } from './format.js';
import { type ConnectionState, type LiveEvent, type LiveFeed, openLiveFeed } from './live.js';

const FEED_LENGTH = 200;
/**
 * Event ids remembered to show each event once. A repeat comes from the replay window's edge (the history
 * read and the stream's first events) or from a reconnection's replay, both far shorter than this.
 */
const SEEN_IDS = 10_000;
/** How much history the feed shows on load (the replay window holds at most 24 hours of it). */
const HISTORY_LENGTH = 100;
/**
 * The sliding 24 h window of the vitals changes without an event: the roles are reread on a timer. The
 * running A/B tests are reread with them, in case an announcement of their results was lost with the
 * instance that owed it (they otherwise follow their events).
 */
const UNANNOUNCED_REFRESH_MS = 30_000;
/** Requests of each kind the inbox shows, and pending ones the summary counts ("50+" beyond). */
const APPROVALS_SHOWN = 50;

export interface DashboardHandle {
  /** Go offline, and come back resuming where the feed left off. */
  disconnect(): void;
  reconnect(): void;
  /**
   * Opens the confirmation of a pause or resume of `role` whatever the viewer's roles: the server decides,
   * and the dialog shows its refusal.
   */
  confirm(role: string, action: RoleAction): void;
  /** Opens a task's detail. */
  openTask(id: string): void;
  /**
   * Opens the confirmation of a decision on a gated connector call whatever the viewer's roles: the server
   * decides, and the dialog shows its refusal.
   */
  decideApproval(id: string, decision: ApprovalDecision): void;
  /**
   * The same for a decision an agent asked for on its task (`taskApproval`): a rejection's note is
   * required, as the dialog says.
   */
  decideTaskApproval(id: string, decision: ApprovalDecision): void;
  /**
   * Opens the confirmation of a role's budget (the company's for null) whatever the viewer's roles (the
   * server decides).
   */
  setBudget(role: string | null): void;
}

declare global {
  interface Window {
    boardroomDashboard?: DashboardHandle;
  }
}

const cardOf = (role: DashboardRoleFieldsFragment): RoleState => ({ role, vitals: null });

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

/** Newest first; entries without a difference in time keep their order. */
const byTime = (entries: FeedEntry[]) =>
  entries
    .map((entry, index) => ({ entry, index, at: Date.parse(entry.at) }))
    .sort((a, b) => b.at - a.at || a.index - b.index)
    .map(({ entry }) => entry);

function alertsOf(cards: RoleState[], connection: ConnectionState): Alert[] {
  const alerts: Alert[] = [];
  if (connection === 'reconnecting' || connection === 'offline') {
    alerts.push({
      id: 'connection',
      level: 'warning',
      text: 'Live updates are interrupted; what is shown may be out of date.',
    });
  }
  for (const { role } of cards) {
    if (role.paused) {
      alerts.push({
        id: `paused-${role.role}`,
        level: 'critical',
        text: `${roleLabel(role.role, role.displayName)} is paused${role.pausedBy ? ` by ${role.pausedBy}` : ''}.`,
      });
    }
  }
  for (const { role, vitals } of cards) {
    if (vitals && vitals.tasksFailed > 0) {
      alerts.push({
        id: `failed-${role.role}`,
        level: 'warning',
        text: `${roleLabel(role.role, role.displayName)}: ${formatCount(vitals.tasksFailed)} ${
          vitals.tasksFailed === 1 ? 'task' : 'tasks'
        } failed in the last 24 hours.`,
      });
    }
  }
  return alerts;
}

export function Dashboard({
  token,
  viewer,
  onRefused,
  onSignOut,
}: {
  token: string;
  viewer: Viewer;
  /** The server refused the token (a 401 message or the socket's close reason). */
  onRefused(message: string): void;
  onSignOut(): void;
}) {
  const abilities = useMemo(() => abilitiesOf(viewer.roles), [viewer.roles]);
  const [roles, setRoles] = useState<DashboardRoleFieldsFragment[]>([]);
  const [cards, setCards] = useState<RoleState[]>([]);
  const [counts, setCounts] = useState<TaskCounts | null>(null);
  const [models, setModels] = useState<ModelRow[]>([]);
  const [tests, setTests] = useState<AbTestSummary[]>([]);
  const [feed, setFeed] = useState<FeedEntry[]>([]);
  const [historyLoaded, setHistoryLoaded] = useState(false);
  const [connection, setConnection] = useState<ConnectionState>('connecting');
  const [problem, setProblem] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [confirming, setConfirming] = useState<{ role: string; action: RoleAction } | null>(null);
  const [deciding, setDeciding] = useState<{ request: DialogRequest; decision: ApprovalDecision } | null>(
    null,
  );
  // The role whose budget is being set: null for the company's, undefined for no dialog.
  const [budgetRole, setBudgetRole] = useState<string | null | undefined>(undefined);
  const [companyBudget, setCompanyBudget] = useState<DashboardTenantBudgetQuery['budget']>(null);
  const refreshCompanyBudgetRef = useRef<() => void>(() => undefined);
  const [approvals, setApprovals] = useState<DashboardApprovalFragment[] | null>(null);
  const [taskApprovals, setTaskApprovals] = useState<DashboardTaskApprovalFragment[] | null>(null);
  const [approvalStatus, setApprovalStatus] = useState<ConnectorCallApprovalStatus | ''>('pending');
  const [waiting, setWaiting] = useState<{ count: number; more: boolean } | null>(null);
  const [approvalsVersion, setApprovalsVersion] = useState(0);
  // Requests decided from this page stay in the pending inbox, with their outcome, until the filter changes.
  const [decidedHere, setDecidedHere] = useState<InboxEntry[]>([]);
  const [connectorNames, setConnectorNames] = useState<ReadonlyMap<string, string>>(new Map());
  const [openTask, setOpenTask] = useState<string | null>(null);
  const [openTaskVersion, setOpenTaskVersion] = useState(0);
  /** An approval a task's timeline asked to show: focused in the inbox once the inbox lists it. */
  const [approvalToShow, setApprovalToShow] = useState<string | null>(null);
  const [tasksVersion, setTasksVersion] = useState(0);
  const [trendRole, setTrendRole] = useState<string | null>(null);
  const [trend, setTrend] = useState<HourlyVitals | null>(null);
  const [trendVersion, setTrendVersion] = useState(0);
  const [loaded, setLoaded] = useState(false);

  // Bumped by every event of a role: a read started before it must not overwrite what the event set.
  const generations = useRef(new Map<string, number>());
  // The same for A/B tests: the count of results events so far, and the last one of each test.
  const abEvents = useRef({ count: 0, last: new Map<string, number>() });
  const seen = useRef(new Set<string>());
  const openTaskRef = useRef<string | null>(null);
  /** The tenant feed, whose resume point an open task's timeline follows its recorded steps from. */
  const liveRef = useRef<LiveFeed | null>(null);
  openTaskRef.current = openTask;
  // What the page does after an action of its own that announces no event (a recommendation decided).
  const refreshRoleRef = useRef<(role: string) => void>(() => undefined);

  const fail = useCallback(
    (error: unknown) => {
      if (error instanceof GraphQLRequestError && error.code === 'UNAUTHENTICATED') onRefused(error.message);
      else setProblem(error instanceof Error ? error.message : String(error));
    },
    [onRefused],
  );

  useEffect(() => {
    let active = true;
    const generation = (role: string) => generations.current.get(role) ?? 0;
    /** False for an event seen already; the ids of the last SEEN_IDS events are kept (a tab stays open for days). */
    const remember = (eventId: string) => {
      const seenIds = seen.current;
      if (seenIds.has(eventId)) return false;
      seenIds.add(eventId);
      if (seenIds.size > SEEN_IDS) seenIds.delete(seenIds.values().next().value as string);
      return true;
    };
    const putRole = (next: RoleState, startedAt: number) => {
      if (!active || generation(next.role.role) !== startedAt) return;
      setCards((current) => current.map((card) => (card.role.role === next.role.role ? next : card)));
    };
    const refreshRole = (role: string, eventId?: string) => {
      const startedAt = generation(role);
      request(token, Role, { role }, eventId ? { readAfterEvent: eventId } : {}).then((data) => {
        if (data.agent) putRole({ role: data.agent, vitals: data.agentVitals }, startedAt);
      }, fail);
    };
    refreshRoleRef.current = (role) => {
      refreshRole(role);
      setTrendVersion((version) => version + 1);
    };
    const reloadRoles = async () => {
      const { agents } = await request(token, Agents, {});
      if (!active) return;
      setRoles(agents);
      setTrendRole((current) => current ?? agents[0]?.role ?? null);
      // Every role has its card: the C-suite first, then the roles the chairman registered.
      setCards((current) =>
        agents.map((role) => current.find((card) => card.role.role === role.role) ?? cardOf(role)),
      );
      await Promise.all(
        agents.map(async (agent) => {
          const startedAt = generation(agent.role);
          const data = await request(token, Role, { role: agent.role });
          if (data.agent) putRole({ role: data.agent, vitals: data.agentVitals }, startedAt);
        }),
      );
      if (active) setProblem(null);
    };
    const reloadAbTests = () => {
      const startedAt = abEvents.current.count;
      request(token, AbTestsDocument, {})
        .then(({ abTests }) =>
          Promise.all(
            abTests.nodes.map(async (test) => ({
              id: test.id,
              name: test.name,
              results: (await request(token, AbResults, { id: test.id })).abTestResults,
            })),
          ),
        )
        .then((snapshot) => {
          if (!active) return;
          const changed = new Set(
            [...abEvents.current.last].filter(([, at]) => at > startedAt).map(([id]) => id),
          );
          setTests((current) => mergeAbTests(snapshot, current, changed));
        }, fail);
    };
    let budgetTimer: ReturnType<typeof setTimeout> | undefined;
    const reloadCompanyBudget = (eventId?: string) =>
      request(token, TenantBudget, {}, eventId ? { readAfterEvent: eventId } : {}).then(
        (data) => active && setCompanyBudget(data.budget),
        fail,
      );
    /** After a task ends (its cost charged) or a budget alert: a burst of them reads once. */
    const refreshCompanyBudget = (eventId?: string) => {
      clearTimeout(budgetTimer);
      budgetTimer = setTimeout(() => reloadCompanyBudget(eventId), 200);
    };
    refreshCompanyBudgetRef.current = () => refreshCompanyBudget();
    /** Each base model in production, with its canary's analysis (one read per base model). */
    const reloadModels = () =>
      request(token, ModelsDocument, {})
        .then((data) =>
          Promise.all(
            data.productionModels.map(async (model) => {
              const line = await request(token, ModelLine, { baseModel: model.baseModel });
              return { ...model, canary: canaryOf(line.modelVersions) };
            }),
          ),
        )
        .then((rows) => active && setModels(rows), fail);
    const reloadHistory = () =>
      request(token, History, { first: HISTORY_LENGTH }).then((data) => {
        if (!active) return;
        const older: FeedEntry[] = [];
        for (const { recordedAt, event } of data.recentEvents) {
          if (event.__typename === 'EventStreamStarted' || event.__typename === 'TaskStepsRecordedEvent')
            continue;
          if (!remember(event.eventId)) continue;
          older.push({ event, at: recordedAt });
        }
        setFeed((current) => byTime([...current, ...older]).slice(0, FEED_LENGTH));
        setHistoryLoaded(true);
      }, fail);
    let queueTimer: ReturnType<typeof setTimeout> | undefined;
    let tasksTimer: ReturnType<typeof setTimeout> | undefined;
    let approvalsTimer: ReturnType<typeof setTimeout> | undefined;
    function refreshApprovals() {
      clearTimeout(approvalsTimer);
      approvalsTimer = setTimeout(() => setApprovalsVersion((version) => version + 1), 50);
    }
    function refreshQueue() {
      clearTimeout(queueTimer);
      queueTimer = setTimeout(
        () => request(token, Queue, {}).then((data) => active && setCounts(data.taskCounts), fail),
        50,
      );
    }
    function refreshTasks() {
      clearTimeout(tasksTimer);
      tasksTimer = setTimeout(() => {
        setTasksVersion((version) => version + 1);
        setTrendVersion((version) => version + 1);
      }, 200);
    }
    const refreshAll = () => {
      const started = performance.now();
      Promise.all([
        reloadRoles(),
        request(token, Queue, {}).then((data) => active && setCounts(data.taskCounts)),
        reloadModels(),
        reloadHistory(),
        reloadCompanyBudget(),
      ]).then(() => {
        if (!active) return;
        setLoaded(true);
        performance.mark('boardroom:loaded', { detail: { ms: performance.now() - started } });
      }, fail);
      reloadAbTests();
      refreshTasks();
      refreshApprovals();
    };

    const onEvent = (event: LiveEvent) => {
      if (!remember(event.eventId)) return;
      if (event.__typename === 'AbTestResultsChangedEvent') {
        // Several a second while a test records events: its row follows them, the feed does not.
        const { testId, testStatus, results } = event;
        abEvents.current.count += 1;
        abEvents.current.last.set(testId, abEvents.current.count);
        const next = testStatus === 'running' ? { id: testId, name: event.name, results } : null;
        setTests((current) => withAbTest(current, testId, next));
        return;
      }
      setFeed((current) =>
        [{ event, at: timeOf(event) ?? new Date().toISOString() }, ...current].slice(0, FEED_LENGTH),
      );
      if (event.__typename === 'ConnectorCallApprovalEvent' || event.__typename === 'ConnectorChangedEvent') {
        // A connector change can rename a connector the approvals inbox names: it reads the names again.
        refreshApprovals();
      } else if (event.__typename === 'TaskApprovalEvent') {
        refreshApprovals();
        refreshQueue();
        refreshTasks();
        if (openTaskRef.current === event.taskId) setOpenTaskVersion((version) => version + 1);
      } else if (event.__typename === 'ModelVersionChangedEvent') {
        reloadModels();
      } else if (event.__typename === 'BudgetAlertEvent' || event.__typename === 'BudgetChangedEvent') {
        if (event.budgetRole !== null) refreshRole(event.budgetRole, event.eventId);
        else refreshCompanyBudget(event.eventId);
      } else if (event.__typename === 'TaskUpdatedEvent') {
        refreshQueue();
        refreshTasks();
        // The open task changed, or a task of its tree did (its sub-tasks and their costs show there).
        const open = openTaskRef.current;
        if (open && [event.taskId, event.parentTaskId, event.rootTaskId].includes(open)) {
          setOpenTaskVersion((version) => version + 1);
        }
        if (event.status === 'completed' || event.status === 'failed') {
          refreshRole(event.role, event.eventId);
          refreshCompanyBudget(event.eventId);
        }
      } else if (event.__typename === 'AgentPausedEvent' || event.__typename === 'AgentResumedEvent') {
        const { role } = event;
        const paused = event.__typename === 'AgentPausedEvent';
        generations.current.set(role, generation(role) + 1);
        setCards((current) =>
          current.map((card) =>
            card.role.role === role
              ? {
                  ...card,
                  role: {
                    ...card.role,
                    paused,
                    pausedBy: paused ? event.actorUserId : null,
                    pausedAt: paused ? event.pausedAt : card.role.pausedAt,
                  },
                }
              : card,
          ),
        );
        refreshRole(role, event.eventId);
      }
    };

    // Read once the subscription has started: whatever happens from then on arrives as an event.
    const live = openLiveFeed(token, {
      onEvent,
      onState: setConnection,
      onRefused: (reason) => onRefused(reason),
      onFreshStart: refreshAll,
    });
    liveRef.current = live;
    window.boardroomDashboard = {
      disconnect: () => live.disconnect(),
      reconnect: () => live.reconnect(),
      confirm: (role, action) => setConfirming({ role, action }),
      openTask: (id) => setOpenTask(id),
      decideApproval: (id, decision) =>
        setDeciding({ request: { kind: 'connector_call', approval: { id } }, decision }),
      decideTaskApproval: (id, decision) =>
        setDeciding({ request: { kind: 'task', approval: { id } }, decision }),
      setBudget: (role) => setBudgetRole(role),
    };
    const timer = setInterval(() => {
      if (document.visibilityState !== 'visible') return;
      reloadAbTests();
      reloadRoles().catch(fail);
      setTrendVersion((version) => version + 1);
    }, UNANNOUNCED_REFRESH_MS);

    return () => {
      active = false;
      clearInterval(timer);
      clearTimeout(queueTimer);
      clearTimeout(tasksTimer);
      clearTimeout(approvalsTimer);
      clearTimeout(budgetTimer);
      live.stop();
      liveRef.current = null;
      delete window.boardroomDashboard;
    };
  }, [token, onRefused, fail]);

  // The trend of the chosen role, read again when a task of it may have finished.
  useEffect(() => {
    if (!trendRole) return;
    let active = true;
    request(token, VitalsByHour, { role: trendRole }).then(
      (data) => active && setTrend(data.agentVitalsByHour),
      fail,
    );
    return () => {
      active = false;
    };
  }, [token, trendRole, trendVersion, fail]);

  // The inbox (its chosen status) and the pending count, for the roles that read them; reread when an
  // approval event arrives. Members never ask (the server would refuse them).
  useEffect(() => {
    if (!abilities.readApprovals || approvalsVersion === 0) return;
    let active = true;
    const first = APPROVALS_SHOWN;
    request(token, ApprovalsDocument, { status: approvalStatus || null, first }).then(
      (data) => active && setApprovals(data.connectorCallApprovals.nodes),
      fail,
    );
    const taskStatus = taskStatusOf(approvalStatus);
    if (taskStatus === null) setTaskApprovals([]);
    else {
      request(token, TaskApprovals, { status: taskStatus || null, first }).then(
        (data) => active && setTaskApprovals(data.taskApprovals.nodes),
        fail,
      );
    }
    // Both kinds wait for a decision: the summary counts them together.
    Promise.all([
      request(token, ApprovalsDocument, { status: 'pending', first }),
      request(token, TaskApprovals, { status: 'pending', first }),
    ]).then(([calls, tasks]) => {
      const pages = [calls.connectorCallApprovals, tasks.taskApprovals];
      if (!active) return;
      setWaiting({
        count: pages.reduce((sum, page) => sum + page.nodes.length, 0),
        more: pages.some((page) => page.nextCursor !== null),
      });
    }, fail);
    request(token, ConnectorNames, {}).then(({ connectors }) => {
      if (active) setConnectorNames(new Map(connectors.nodes.map((one) => [one.id, one.name])));
    }, fail);
    return () => {
      active = false;
    };
  }, [token, abilities.readApprovals, approvalStatus, approvalsVersion, fail]);

  /** Runs an action's mutation; a refused token leaves the page, any other refusal is the caller's. */
  const acting = async <T,>(action: () => Promise<T>): Promise<T> => {
    try {
      return await action();
    } catch (error) {
      if (error instanceof GraphQLRequestError && error.code === 'UNAUTHENTICATED') onRefused(error.message);
      throw error;
    }
  };

  const decideApproval = async (
    { kind, approval: { id } }: DialogRequest,
    decision: ApprovalDecision,
    note: string,
  ) => {
    const variables = { id, note: note || null };
    const entry: InboxEntry = await acting(async () =>
      kind === 'task'
        ? {
            kind,
            approval:
              decision === 'approve'
                ? (await request(token, ApproveTask, variables)).approveTaskApproval
                : decision === 'reject'
                  ? (await request(token, RejectTask, variables)).rejectTaskApproval
                  : (await request(token, RequestTaskChanges, variables)).requestTaskApprovalChanges,
          }
        : {
            kind,
            approval:
              decision === 'approve'
                ? (await request(token, ApproveCall, variables)).approveConnectorCall
                : decision === 'reject'
                  ? (await request(token, RejectCall, variables)).rejectConnectorCall
                  : (await request(token, RequestCallChanges, variables)).requestConnectorCallChanges,
          },
    );
    if (entry.kind === 'task') {
      const decided = entry.approval;
      setTaskApprovals((current) => current?.map((one) => (one.id === id ? decided : one)) ?? current);
    } else {
      const decided = entry.approval;
      setApprovals((current) => current?.map((one) => (one.id === id ? decided : one)) ?? current);
    }
    setDecidedHere((current) => [entry, ...current.filter((one) => one.approval.id !== id)]);
    // The decision's buttons are gone with the dialog: focus goes to the request, not to the page's start.
    requestAnimationFrame(() =>
      document.querySelector<HTMLElement>(`[data-approvals] [data-approval-id="${id}"]`)?.focus(),
    );
    setApprovalsVersion((version) => version + 1);
    const { approval } = entry;
    const what =
      entry.kind === 'task'
        ? `“${entry.approval.summary}”`
        : `${entry.approval.method} ${entry.approval.path}`;
    setStatus(
      approval.status === 'pending'
        ? `${what} still waits.`
        : `${what}: ${approval.status === 'changes_requested' ? 'changes requested' : approval.status}${
            approval.decidedBy && approval.decidedBy !== viewer.sub
              ? ` (decided before by ${approval.decidedBy})`
              : ''
          }.`,
    );
  };

  const saveBudget = async (role: string | null, change: BudgetChange) => {
    await acting(() => request(token, SetBudget, { input: { role, ...change } }));
    if (role === null) {
      setStatus('The company’s budget set.');
      refreshCompanyBudgetRef.current();
    } else {
      setStatus(`${roleLabel(role)}’s budget set.`);
      refreshRoleRef.current(role);
    }
  };

  const act = async (role: string, action: RoleAction, reason: string) => {
    const input = { actorUserId: viewer.sub, reason: reason || null };
    await acting<unknown>(() =>
      action === 'pause'
        ? request(token, PauseAgent, { role, input })
        : request(token, ResumeAgent, { role, input }),
    );
    setStatus(`${roleLabel(role)} ${action === 'pause' ? 'paused' : 'resumed'}.`);
  };

  const alerts = alertsOf(cards, connection);
  const inbox: InboxEntry[] | null =
    approvals && taskApprovals
      ? [
          ...approvals.map((approval): InboxEntry => ({ kind: 'connector_call', approval })),
          ...taskApprovals.map((approval): InboxEntry => ({ kind: 'task', approval })),
        ]
      : null;
  const showApproval = (id: string) => {
    setOpenTask(null);
    if (approvalStatus !== '') {
      setApprovals(null);
      setTaskApprovals(null);
      setDecidedHere([]);
      setApprovalStatus('');
    }
    setApprovalToShow(id);
  };
  const shownApprovals = (
    inbox && approvalStatus === 'pending'
      ? [
          ...inbox.map(
            (one) => decidedHere.find((decided) => decided.approval.id === one.approval.id) ?? one,
          ),
          ...decidedHere.filter((decided) => !inbox.some((one) => one.approval.id === decided.approval.id)),
        ]
      : inbox
  )?.sort((a, b) => Date.parse(b.approval.createdAt) - Date.parse(a.approval.createdAt));
  const approvalListed =
    !!approvalToShow && !!shownApprovals?.some((one) => one.approval.id === approvalToShow);
  useEffect(() => {
    if (!approvalToShow || !approvalListed) return;
    setApprovalToShow(null);
    // After the task dialog gave focus back to what opened it.
    requestAnimationFrame(() => {
      const entry = document.querySelector<HTMLElement>(
        `[data-approvals] [data-approval-id="${approvalToShow}"]`,
      );
      entry?.scrollIntoView({ block: 'center' });
      entry?.focus();
    });
  }, [approvalToShow, approvalListed]);

  return (
    <>
      <Header viewer={viewer} connection={connection} onSignOut={onSignOut} />
      <p class="status" role="status" data-status-message="">
        {status}
      </p>
      {problem ? (
        <p class="problem page-problem" role="alert" data-problem="">
          {problem}
        </p>
      ) : null}
      <main data-loaded={loaded ? 'true' : undefined}>
        <Summary
          counts={counts}
          approvalsWaiting={abilities.readApprovals ? waiting : undefined}
          alerts={alerts}
          companyBudget={companyBudget}
          onCompanyBudget={abilities.setBudgets ? () => setBudgetRole(null) : undefined}
        />
        <section class="roles" aria-labelledby="roles-heading">
          <h2 id="roles-heading" class="sr-only">
            Agents
          </h2>
          <div class="cards">
            {cards.map((card) => (
              <RoleCard
                key={card.role.role}
                state={card}
                canPause={abilities.pauseAgents}
                canSetBudget={abilities.setBudgets}
                onAction={(role, action) => setConfirming({ role, action })}
                onResumeNow={(role) => {
                  act(role, 'resume', '').catch(fail);
                }}
                onBudget={(role) => setBudgetRole(role)}
              />
            ))}
          </div>
        </section>
        {abilities.readApprovals ? (
          <Approvals
            entries={shownApprovals ?? null}
            status={approvalStatus}
            viewerRoles={viewer.roles}
            connectorNames={connectorNames}
            onStatus={(status) => {
              setApprovals(null);
              setTaskApprovals(null);
              setDecidedHere([]);
              setApprovalStatus(status);
            }}
            onDecide={(entry, decision) => setDeciding({ request: entry, decision })}
            onOpenTask={(id) => setOpenTask(id)}
          />
        ) : null}
        <Feed entries={feed} loading={!historyLoaded} onOpenTask={(id) => setOpenTask(id)} />
        <OrgChart roles={cards.map((card) => card.role)} />
        {trendRole ? (
          <Trends
            roles={roles}
            role={trendRole}
            hours={trend}
            budget={cards.find((card) => card.role.role === trendRole)?.role.budget ?? null}
            onRole={(role) => {
              setTrend(null);
              setTrendRole(role);
            }}
          />
        ) : null}
        <AbTests tests={tests} />
        <Models models={models} />
        <Routines token={token} version={tasksVersion} onOpenTask={(id) => setOpenTask(id)} onError={fail} />
        <Cost token={token} version={tasksVersion} onError={fail} />
        <Tasks
          token={token}
          roles={roles}
          version={tasksVersion}
          onOpen={(id) => setOpenTask(id)}
          onError={fail}
        />
      </main>
      {confirming ? (
        <PauseDialog
          role={confirming.role}
          action={confirming.action}
          onConfirm={(reason) => act(confirming.role, confirming.action, reason)}
          onClose={() => setConfirming(null)}
        />
      ) : null}
      {deciding ? (
        <ApprovalDialog
          request={
            inbox?.find(
              (one) => one.kind === deciding.request.kind && one.approval.id === deciding.request.approval.id,
            ) ?? deciding.request
          }
          decision={deciding.decision}
          onConfirm={(note) => decideApproval(deciding.request, deciding.decision, note)}
          onClose={() => setDeciding(null)}
        />
      ) : null}
      {budgetRole !== undefined ? (
        <BudgetDialog
          role={budgetRole}
          budget={
            budgetRole === null
              ? companyBudget
              : (cards.find((card) => card.role.role === budgetRole)?.role.budget ?? null)
          }
          onConfirm={(change) => saveBudget(budgetRole, change)}
          onClose={() => setBudgetRole(undefined)}
        />
      ) : null}
      {openTask ? (
        <TaskDetail
          token={token}
          id={openTask}
          version={openTaskVersion}
          canDecide={abilities.decideRecommendations}
          onDecided={(role) => refreshRoleRef.current(role)}
          onOpen={(id) => setOpenTask(id)}
          onOpenApproval={abilities.readApprovals ? showApproval : undefined}
          onClose={() => setOpenTask(null)}
          resumePoint={() => liveRef.current?.resumePoint() ?? null}
        />
      ) : null}
    </>
  );
}
