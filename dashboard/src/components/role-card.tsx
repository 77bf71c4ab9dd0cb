import type {
  DashboardRoleFieldsFragment,
  DashboardVitalsFieldsFragment,
} from '../../../src/generated/dashboard/graphql.js';
import {
  formatCount,
  formatDateTime,
  formatPercent,
  formatSeconds,
  formatUsd,
  NONE,
  roleLabel,
} from '../format.js';
import { BreakerNote } from './breaker-note.js';

export interface RoleState {
  role: DashboardRoleFieldsFragment;
  vitals: DashboardVitalsFieldsFragment | null;
}

type VitalKey = Exclude<keyof DashboardVitalsFieldsFragment, 'periodStart' | 'periodEnd'>;

/** Vital signs under their REST (snake_case) names, with how each reads. */
const VITALS: { key: VitalKey; field: string; label: string; format(value: number): string }[] = [
  { key: 'tasksCompleted', field: 'tasks_completed', label: 'Tasks completed', format: formatCount },
  { key: 'tasksFailed', field: 'tasks_failed', label: 'Tasks failed', format: formatCount },
  {
    key: 'avgExecutionTimeSeconds',
    field: 'avg_execution_time_seconds',
    label: 'Avg execution',
    format: formatSeconds,
  },
  { key: 'acceptanceRate', field: 'acceptance_rate', label: 'Acceptance', format: formatPercent },
  { key: 'outcomeAccuracy', field: 'outcome_accuracy', label: 'Outcome accuracy', format: formatPercent },
  { key: 'tokensUsed', field: 'tokens_used', label: 'Tokens used', format: formatCount },
  { key: 'costUsd', field: 'cost_usd', label: 'Cost', format: formatUsd },
];

export type RoleAction = 'pause' | 'resume';

export function RoleCard({
  state,
  canPause,
  canSetBudget,
  onAction,
  onResumeNow,
  onBudget,
}: {
  state: RoleState;
  /** Offer pause and resume (the chairman's); otherwise the card only reads. */
  canPause: boolean;
  /** Offer setting the role's budget (the chairman's). */
  canSetBudget: boolean;
  onAction(role: string, action: RoleAction): void;
  /** Resumes at once, without a dialog: a role a breaker paused. */
  onResumeNow(role: string): void;
  onBudget(role: string): void;
}) {
  const { role, vitals } = state;
  const status = role.paused ? 'paused' : 'active';
  const trip = role.paused && role.pausedBy?.startsWith('breaker:') ? role.lastBreakerTrip : null;
  const name = roleLabel(role.role, role.displayName);
  const headingId = `role-${role.role}`;
  return (
    <section class="card" data-role={role.role} data-state={status} aria-labelledby={headingId}>
      <header>
        <h3 id={headingId}>{name}</h3>
        <span class={`badge ${status}`}>{status}</span>
      </header>
      <p class="who">
        {role.paused ? (
          <>
            Paused by <strong>{role.pausedBy ?? 'unknown'}</strong>
            {role.pausedAt ? (
              <>
                {' '}
                since <time dateTime={role.pausedAt}>{formatDateTime(role.pausedAt)}</time>
              </>
            ) : null}
          </>
        ) : (
          'Running'
        )}
      </p>
      {trip ? <BreakerNote trip={trip} /> : null}
      <dl class="vitals">
        {VITALS.map(({ key, field, label, format }) => {
          const value = vitals?.[key];
          const known = value !== null && value !== undefined;
          return (
            <div key={field}>
              <dt>{label}</dt>
              <dd data-field={field} data-value={known ? String(value) : undefined}>
                {known ? format(value) : NONE}
              </dd>
            </div>
          );
        })}
      </dl>
      {role.budget ? <BudgetBar budget={role.budget} owner={name} /> : null}
      {canPause || canSetBudget ? (
        <div class="actions">
          {canPause && trip ? (
            <button
              type="button"
              class="action"
              data-action="resume-now"
              onClick={() => onResumeNow(role.role)}
            >
              Resume {name}
            </button>
          ) : canPause ? (
            <button
              type="button"
              class={role.paused ? 'action' : 'action danger'}
              data-action={role.paused ? 'resume' : 'pause'}
              onClick={() => onAction(role.role, role.paused ? 'resume' : 'pause')}
            >
              {role.paused ? `Resume ${name}…` : `Pause ${name}…`}
            </button>
          ) : null}
          {canSetBudget ? (
            <button
              type="button"
              class="action"
              data-action="budget"
              aria-label={`Budget… for ${name}`}
              onClick={() => onBudget(role.role)}
            >
              Budget…
            </button>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

type Budget = NonNullable<DashboardRoleFieldsFragment['budget']>;

/**
 * A budget this period (a role's, or the company's): spent against the limit, as a meter and in words, with
 * what running tasks hold. "Exhausted" is the server's rule (spent + the per-task estimate would pass the
 * limit: no new claim).
 */
export function BudgetBar({ budget, owner }: { budget: Budget; owner: string }) {
  const limit = Number(budget.limitUsd);
  const spent = Number(budget.spentUsd);
  const reserved = Number(budget.reservedUsd);
  const state =
    spent + Number(budget.estimateUsd) > limit
      ? 'exhausted'
      : spent >= budget.warningThreshold * limit
        ? 'warning'
        : 'within';
  const period = budget.period === 'day' ? 'today' : 'this month';
  return (
    <div class={`budget ${state}`} data-budget={state}>
      <p>
        <span>Budget {period}</span>{' '}
        <span data-field="budget">
          {formatUsd(spent)} of {formatUsd(limit)}
        </span>
      </p>
      <meter
        min={0}
        max={limit}
        low={budget.warningThreshold * limit}
        high={budget.warningThreshold * limit}
        optimum={0}
        value={Math.min(spent, limit)}
        aria-label={`${owner} budget ${period}: ${formatUsd(spent)} of ${formatUsd(limit)} spent`}
      />
      <p class="budget-note">
        {state === 'exhausted' ? 'Exhausted: takes no new work. ' : null}
        {reserved > 0 ? `${formatUsd(reserved)} held by running tasks. ` : null}
        Resets <time dateTime={budget.periodEnd}>{formatDateTime(budget.periodEnd)}</time>
      </p>
    </div>
  );
}
