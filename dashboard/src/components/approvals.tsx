import type {
  ConnectorCallApprovalStatus,
  DashboardApprovalFragment,
  DashboardTaskApprovalFragment,
  Role,
  TaskApprovalStatus,
} from '../../../src/generated/dashboard/graphql.js';
import { mayDecideApproval } from '../abilities.js';
import { formatBytes, formatCount, formatDateTime, formatSeconds, roleLabel } from '../format.js';

export type ApprovalDecision = 'approve' | 'reject' | 'request_changes';

/**
 * A request of the inbox: a connector call a policy keeps for a decision, or a decision the agent holding
 * a running task asked for.
 */
export type InboxEntry =
  | { kind: 'connector_call'; approval: DashboardApprovalFragment }
  | { kind: 'task'; approval: DashboardTaskApprovalFragment };
export type InboxKind = InboxEntry['kind'];

/** The statuses a task's request can have (a connector call's can also be cancelled). */
const TASK_STATUSES: readonly string[] = ['pending', 'approved', 'rejected', 'changes_requested', 'expired'];
export const taskStatusOf = (status: ConnectorCallApprovalStatus | ''): TaskApprovalStatus | '' | null =>
  status === '' || TASK_STATUSES.includes(status) ? (status as TaskApprovalStatus | '') : null;

/** How each decision reads: its button, its confirmation and what the request becomes. */
export const DECISIONS: Record<ApprovalDecision, { button: string; verb: string; done: string }> = {
  approve: { button: 'Approve…', verb: 'Approve', done: 'approved' },
  reject: { button: 'Reject…', verb: 'Reject', done: 'rejected' },
  request_changes: { button: 'Request changes…', verb: 'Request changes to', done: 'sent back' },
};

const STATUSES: ConnectorCallApprovalStatus[] = [
  'pending',
  'approved',
  'rejected',
  'changes_requested',
  'expired',
  'cancelled',
];

export const statusText = (status: ConnectorCallApprovalStatus | TaskApprovalStatus) =>
  status.replace('_', ' ');

/** The request's query, body and headers as the server answered them (only approvers read them). */
function Input({ input }: { input: unknown }) {
  const parts = input && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const present = Object.entries(parts).filter(
    ([, value]) =>
      value !== null && value !== undefined && !(typeof value === 'object' && !Object.keys(value).length),
  );
  if (present.length === 0) return <p class="small muted">No query, body or headers.</p>;
  const shown = Object.fromEntries(present);
  const short = JSON.stringify(shown);
  return (
    <pre class="text small" data-field="input">
      {short.length <= 100 ? short : JSON.stringify(shown, null, 2)}
    </pre>
  );
}

/** Who decided a request, when, and the note. */
function Decided({
  approval,
}: {
  approval: Pick<
    DashboardApprovalFragment | DashboardTaskApprovalFragment,
    'status' | 'decidedBy' | 'decidedAt' | 'note'
  >;
}) {
  return approval.decidedBy ? (
    <p class="small" data-field="decision">
      {statusText(approval.status).replace(/^./, (first) => first.toUpperCase())} by{' '}
      <strong>{approval.decidedBy}</strong>
      {approval.decidedAt ? (
        <>
          {' '}
          on <time dateTime={approval.decidedAt}>{formatDateTime(approval.decidedAt)}</time>
        </>
      ) : null}
      {approval.note ? <>: “{approval.note}”</> : '.'}
    </p>
  ) : null;
}

/** What happened to a decided request: who decided, the note, and the call made on approval. */
function Outcome({ approval }: { approval: DashboardApprovalFragment }) {
  const { call } = approval;
  return (
    <>
      <Decided approval={approval} />
      {approval.reason && !call ? <p class="small">Ended: {approval.reason.replace('_', ' ')}.</p> : null}
      {call ? (
        <p class="small" data-field="call" data-outcome={call.outcome}>
          Call made
          {call.executedAt ? (
            <>
              {' '}
              on <time dateTime={call.executedAt}>{formatDateTime(call.executedAt)}</time>
            </>
          ) : null}
          : {call.status === null ? call.outcome.replace(/_/g, ' ') : `HTTP ${formatCount(call.status)}`}
          {call.bytes !== null ? `, ${formatBytes(call.bytes)}` : ''}
          {call.durationMs !== null ? ` in ${formatSeconds(call.durationMs / 1000)}` : ''}
          {call.failure ? ` (${call.failure})` : ''}
        </p>
      ) : null}
    </>
  );
}

function ApprovalItem({
  approval,
  viewerRoles,
  connectorName,
  onDecide,
}: {
  approval: DashboardApprovalFragment;
  viewerRoles: readonly Role[];
  connectorName: string | undefined;
  onDecide(decision: ApprovalDecision): void;
}) {
  const headingId = `approval-${approval.id}`;
  const pending = approval.status === 'pending';
  const mayDecide = mayDecideApproval(viewerRoles, approval.approverRoles);
  return (
    // Focusable by script only: focus lands here after a decision removes the button that had it.
    <li
      data-approval-id={approval.id}
      data-kind="connector_call"
      data-status={approval.status}
      aria-labelledby={headingId}
      tabIndex={-1}
    >
      <p class="kind" data-field="kind">
        Connector call
      </p>
      <header>
        <h3 id={headingId}>
          <code>
            {approval.method} {approval.path}
          </code>
        </h3>
        <span class={`badge ${approval.status}`}>{statusText(approval.status)}</span>
      </header>
      <p class="small muted">
        {connectorName ? (
          <strong data-field="connector">{connectorName}</strong>
        ) : (
          <>
            Connector <code data-field="connector">{approval.connectorId.slice(0, 8)}</code>
          </>
        )}{' '}
        (version {formatCount(approval.connectorVersion)}), asked by <strong>{approval.requestedBy}</strong>{' '}
        on <time dateTime={approval.createdAt}>{formatDateTime(approval.createdAt)}</time>
        {pending ? (
          <>
            ; waits until <time dateTime={approval.expiresAt}>{formatDateTime(approval.expiresAt)}</time> for
            a decision by {approval.approverRoles.map((role) => roleLabel(role)).join(' or ')}
          </>
        ) : null}
        .
      </p>
      <Input input={approval.input} />
      <Outcome approval={approval} />
      {pending && mayDecide ? <DecisionButtons headingId={headingId} onDecide={onDecide} /> : null}
      {pending && !mayDecide ? (
        <p class="small muted" data-field="not-yours">
          Only {approval.approverRoles.join(' or ')} may decide this request.
        </p>
      ) : null}
    </li>
  );
}

/** The payload the agent attached to its question, as the server answered it. */
function Payload({ payload }: { payload: unknown }) {
  if (payload === null || payload === undefined) return <p class="small muted">No payload.</p>;
  const short = JSON.stringify(payload);
  return (
    <pre class="text small" data-field="payload">
      {short.length <= 100 ? short : JSON.stringify(payload, null, 2)}
    </pre>
  );
}

/** A decision the agent holding a running task asked for: chairman and operators decide it. */
function TaskApprovalItem({
  approval,
  onDecide,
  onOpenTask,
}: {
  approval: DashboardTaskApprovalFragment;
  onDecide(decision: ApprovalDecision): void;
  onOpenTask(id: string): void;
}) {
  const headingId = `approval-${approval.id}`;
  const pending = approval.status === 'pending';
  return (
    <li
      data-approval-id={approval.id}
      data-kind="task"
      data-status={approval.status}
      aria-labelledby={headingId}
      tabIndex={-1}
    >
      <p class="kind" data-field="kind">
        Agent’s question on a task
      </p>
      <header>
        <h3 id={headingId} data-field="summary">
          {approval.summary}
        </h3>
        <span class={`badge ${approval.status}`}>{statusText(approval.status)}</span>
      </header>
      <p class="small muted">
        <strong data-field="role">{roleLabel(approval.role)}</strong> on{' '}
        <button
          type="button"
          class="link"
          data-field="task"
          data-task-id={approval.taskId}
          onClick={() => onOpenTask(approval.taskId)}
        >
          task {approval.taskId.slice(0, 8)}
        </button>
        , asked by <strong>{approval.requestedBy}</strong> on{' '}
        <time dateTime={approval.createdAt}>{formatDateTime(approval.createdAt)}</time>
        {pending ? (
          <>
            ; the task waits for a decision by the chairman or an operator until{' '}
            <time dateTime={approval.expiresAt} data-field="expires-at">
              {formatDateTime(approval.expiresAt)}
            </time>
          </>
        ) : null}
        .
      </p>
      <Payload payload={approval.payload} />
      <Decided approval={approval} />
      {approval.status === 'expired' ? (
        <p class="small" data-field="decision">
          Expired: nobody decided before{' '}
          <time dateTime={approval.expiresAt}>{formatDateTime(approval.expiresAt)}</time>; the task is back in
          the queue.
        </p>
      ) : null}
      {pending ? <DecisionButtons headingId={headingId} onDecide={onDecide} /> : null}
    </li>
  );
}

/**
 * The approval inbox, one list newest first, filtered by status: connector calls kept for a decision, and
 * the decisions agents ask for on their running tasks. Shown to the roles that read it (chairman,
 * operator); a connector call offers its decisions to the roles of its approverRoles, a task's request to
 * both.
 */
/** Approve, reject and request changes: each opens the confirmation for the request its heading names. */
function DecisionButtons({
  headingId,
  onDecide,
}: {
  headingId: string;
  onDecide: (decision: ApprovalDecision) => void;
}) {
  return (
    <div class="buttons left">
      {(Object.keys(DECISIONS) as ApprovalDecision[]).map((decision) => (
        <button
          key={decision}
          type="button"
          class={decision === 'approve' ? 'primary' : decision === 'reject' ? 'danger' : undefined}
          data-decide-approval={decision}
          aria-describedby={headingId}
          onClick={() => onDecide(decision)}
        >
          {DECISIONS[decision].button}
        </button>
      ))}
    </div>
  );
}

export function Approvals({
  entries,
  status,
  viewerRoles,
  connectorNames,
  onStatus,
  onDecide,
  onOpenTask,
}: {
  /** Null while loading. */
  entries: InboxEntry[] | null;
  status: ConnectorCallApprovalStatus | '';
  viewerRoles: readonly Role[];
  /** Connector names by id (an unknown one shows its id). */
  connectorNames: ReadonlyMap<string, string>;
  onStatus(status: ConnectorCallApprovalStatus | ''): void;
  onDecide(entry: InboxEntry, decision: ApprovalDecision): void;
  onOpenTask(id: string): void;
}) {
  return (
    <section class="panel approvals" aria-labelledby="approvals-heading">
      <header class="panel-header">
        <h2 id="approvals-heading">Approvals</h2>
        <div class="filters">
          <label class="field">
            <span>Status</span>
            <select
              value={status}
              data-filter="approval-status"
              onChange={(event) =>
                onStatus((event.target as HTMLSelectElement).value as ConnectorCallApprovalStatus | '')
              }
            >
              <option value="">Any status</option>
              {STATUSES.map((one) => (
                <option key={one} value={one}>
                  {statusText(one)}
                </option>
              ))}
            </select>
          </label>
        </div>
      </header>
      <p class="muted small">
        Connector calls that wait for a decision before they are sent, and questions agents ask before they go
        on with a task; newest first.
      </p>
      {entries === null ? <p class="muted">Loading…</p> : null}
      {entries?.length === 0 ? (
        <p class="muted" data-field="approvals-empty">
          {status === 'pending' ? 'Nothing waits for a decision.' : 'No request matches.'}
        </p>
      ) : null}
      <ul class="approval-list" data-approvals="">
        {entries?.map((entry) =>
          entry.kind === 'task' ? (
            <TaskApprovalItem
              key={entry.approval.id}
              approval={entry.approval}
              onDecide={(decision) => onDecide(entry, decision)}
              onOpenTask={onOpenTask}
            />
          ) : (
            <ApprovalItem
              key={entry.approval.id}
              approval={entry.approval}
              viewerRoles={viewerRoles}
              connectorName={connectorNames.get(entry.approval.connectorId)}
              onDecide={(decision) => onDecide(entry, decision)}
            />
          ),
        )}
      </ul>
    </section>
  );
}
