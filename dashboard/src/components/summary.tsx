import type {
  DashboardQueueQuery,
  DashboardTenantBudgetQuery,
} from '../../../src/generated/dashboard/graphql.js';
import { formatCount } from '../format.js';
import { BudgetBar } from './role-card.js';

type Budget = DashboardTenantBudgetQuery['budget'];

export type TaskCounts = DashboardQueueQuery['taskCounts'];

/** Something that needs the chairman's attention, in words. */
export interface Alert {
  id: string;
  level: 'warning' | 'critical';
  text: string;
}

/** The queue's counts: `status` is the task state (`data-task-status`), `field` its count in TaskCounts. */
const QUEUE: { status: string; field: keyof TaskCounts; label: string }[] = [
  { status: 'pending', field: 'pending', label: 'Pending' },
  { status: 'running', field: 'running', label: 'Running' },
  { status: 'awaiting_approval', field: 'awaitingApproval', label: 'Awaiting approval' },
  { status: 'waiting', field: 'waiting', label: 'Waiting for sub-tasks' },
  { status: 'in_review', field: 'inReview', label: 'In review' },
  { status: 'completed', field: 'completed', label: 'Completed' },
  { status: 'failed', field: 'failed', label: 'Failed' },
];

/**
 * What to look at first, before the role cards on a narrow screen: the queue, the approvals waiting for a
 * decision (for the roles that read the inbox; `undefined` for the others, who see nothing of it) and the
 * alerts.
 */
export function Summary({
  counts,
  approvalsWaiting,
  alerts,
  companyBudget,
  onCompanyBudget,
}: {
  counts: TaskCounts | null;
  /** The company's budget over every role (null: none set). */
  companyBudget: Budget;
  /** Offers setting it (the chairman's); absent: the summary only reads it. */
  onCompanyBudget?: () => void;
  /** Pending requests (null while loading; `more` when there are more than counted). */
  approvalsWaiting?: { count: number; more: boolean } | null;
  alerts: Alert[];
}) {
  return (
    <section class="panel summary" aria-labelledby="summary-heading">
      <h2 id="summary-heading">Summary</h2>
      <div class={approvalsWaiting === undefined ? 'summary-grid' : 'summary-grid with-approvals'}>
        <div>
          <h3 class="minor">Task queue (all time)</h3>
          <ul class="counts">
            {QUEUE.map(({ status, field, label }) => (
              <li key={status} data-task-status={status}>
                <span class="count" data-value={counts ? String(counts[field]) : undefined}>
                  {counts ? formatCount(counts[field]) : '…'}
                </span>
                <span class="count-label">{label}</span>
              </li>
            ))}
          </ul>
          {companyBudget || onCompanyBudget ? (
            <div class="company-budget" data-company-budget="">
              <h3 class="minor">Company budget (every role)</h3>
              {companyBudget ? (
                <BudgetBar budget={companyBudget} owner="Company" />
              ) : (
                <p class="muted small">The company has no budget over every role.</p>
              )}
              {onCompanyBudget ? (
                <button
                  type="button"
                  class="action"
                  data-action="budget"
                  aria-label="Budget… for the company"
                  onClick={onCompanyBudget}
                >
                  Budget…
                </button>
              ) : null}
            </div>
          ) : null}
        </div>
        {approvalsWaiting !== undefined ? (
          <div>
            <h3 class="minor">Approvals</h3>
            <ul class="counts single">
              <li data-approvals-waiting="">
                <span
                  class="count"
                  data-value={approvalsWaiting ? String(approvalsWaiting.count) : undefined}
                >
                  {approvalsWaiting
                    ? `${formatCount(approvalsWaiting.count)}${approvalsWaiting.more ? '+' : ''}`
                    : '…'}
                </span>
                <a class="count-label" href="#approvals-heading">
                  Waiting for a decision
                </a>
              </li>
            </ul>
          </div>
        ) : null}
        <div>
          <h3 class="minor" id="alerts-heading">
            Alerts{' '}
            <span class="pill" data-field="alert_count">
              {formatCount(alerts.length)}
            </span>
          </h3>
          <ul class="alerts" aria-labelledby="alerts-heading" aria-live="polite" data-alerts="">
            {alerts.length === 0 ? <li class="muted">Nothing needs attention.</li> : null}
            {alerts.map((alert) => (
              <li key={alert.id} class={alert.level} data-alert={alert.id}>
                {alert.text}
              </li>
            ))}
          </ul>
        </div>
      </div>
    </section>
  );
}
