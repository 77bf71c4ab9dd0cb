import type {
  DashboardRoleFieldsFragment,
  DashboardVitalsFieldsFragment,
} from '../../../src/generated/dashboard/graphql.js';
import { formatCount, formatHour, formatPercent, formatSeconds, formatUsd, roleLabel } from '../format.js';
import { Chart } from './chart.js';

export type HourlyVitals = DashboardVitalsFieldsFragment[];

const sum = (hours: HourlyVitals, pick: (hour: DashboardVitalsFieldsFragment) => number) =>
  hours.reduce((total, hour) => total + pick(hour), 0);

/** The hour with the highest value, in words; null when every hour is 0 or empty. */
function peak(hours: HourlyVitals, pick: (hour: DashboardVitalsFieldsFragment) => number | null) {
  let best: DashboardVitalsFieldsFragment | null = null;
  for (const hour of hours) {
    const value = pick(hour);
    if (value !== null && value > 0 && (best === null || value > (pick(best) ?? 0))) best = hour;
  }
  return best;
}

type Budget = NonNullable<DashboardRoleFieldsFragment['budget']>;

/**
 * What the budget had spent at the end of each hour of the period (null for hours before it began): what it
 * spent now, less the cost of the hours of the period that came after. A task's cost counts in the hour it
 * finished, as the budget charges it then.
 */
export function burnOf(hours: HourlyVitals, budget: Budget): (number | null)[] {
  const start = Date.parse(budget.periodStart);
  let spent = Number(budget.spentUsd);
  const values: (number | null)[] = new Array(hours.length).fill(null);
  for (let index = hours.length - 1; index >= 0; index -= 1) {
    const hour = hours[index];
    if (!hour || Date.parse(hour.periodEnd) <= start) break;
    values[index] = Math.max(0, spent);
    if (Date.parse(hour.periodStart) >= start) spent -= hour.costUsd;
  }
  return values;
}

/**
 * Vital signs per hour over the trailing 24 hours, for one role at a time, and, for a role with a budget,
 * what its budget has spent in its period against the limit.
 */
export function Trends({
  roles,
  role,
  hours,
  budget,
  onRole,
}: {
  roles: { role: string; displayName: string | null }[];
  role: string;
  hours: HourlyVitals | null;
  /** The chosen role's budget, null when it has none. */
  budget: Budget | null;
  onRole(role: string): void;
}) {
  const ends = (hours ?? []).map((hour) => Date.parse(hour.periodEnd) / 1000);
  const list = hours ?? [];
  const completed = sum(list, (hour) => hour.tasksCompleted);
  const failed = sum(list, (hour) => hour.tasksFailed);
  const busiest = peak(list, (hour) => hour.tasksCompleted + hour.tasksFailed);
  const slowest = peak(list, (hour) => hour.avgExecutionTimeSeconds);
  const rated = list.filter((hour) => hour.acceptanceRate !== null).length;
  const evaluated = list.filter((hour) => hour.outcomeAccuracy !== null).length;
  const cost = sum(list, (hour) => hour.costUsd);
  const costliest = peak(list, (hour) => hour.costUsd);
  const at = (hour: DashboardVitalsFieldsFragment) => formatHour(new Date(hour.periodEnd));
  return (
    <section class="panel trends" aria-labelledby="trends-heading" data-trends={role}>
      <header class="panel-header">
        <h2 id="trends-heading">Trends, per hour over 24 hours</h2>
        <label class="field">
          <span>Role</span>
          <select value={role} onChange={(event) => onRole((event.target as HTMLSelectElement).value)}>
            {roles.map((one) => (
              <option key={one.role} value={one.role}>
                {roleLabel(one.role, one.displayName)}
              </option>
            ))}
          </select>
        </label>
      </header>
      {hours === null ? (
        <p class="muted">Loading…</p>
      ) : (
        <div class="charts">
          <Chart
            id="tasks"
            title="Tasks finished"
            hours={ends}
            formatValue={formatCount}
            whole
            series={[
              { label: 'Completed', color: '#1b7f46', values: list.map((hour) => hour.tasksCompleted) },
              {
                label: 'Failed',
                color: '#b42318',
                dashed: true,
                values: list.map((hour) => hour.tasksFailed),
              },
            ]}
            summary={
              completed + failed === 0
                ? 'No task finished in the last 24 hours.'
                : `${formatCount(completed)} completed and ${formatCount(failed)} failed in 24 hours` +
                  (busiest ? `; busiest hour ending ${at(busiest)}.` : '.')
            }
          />
          <Chart
            id="execution"
            title="Average execution time"
            hours={ends}
            formatValue={formatSeconds}
            series={[
              {
                label: 'Average',
                color: '#1f5fbf',
                values: list.map((hour) => hour.avgExecutionTimeSeconds),
              },
            ]}
            summary={
              slowest?.avgExecutionTimeSeconds
                ? `Slowest hour ending ${at(slowest)}: ${formatSeconds(slowest.avgExecutionTimeSeconds)} on average.`
                : 'No task completed in the last 24 hours.'
            }
          />
          <Chart
            id="rates"
            title="Acceptance and outcome accuracy"
            hours={ends}
            formatValue={formatPercent}
            fixedRange={[0, 1]}
            series={[
              { label: 'Acceptance', color: '#1f5fbf', values: list.map((hour) => hour.acceptanceRate) },
              {
                label: 'Outcome accuracy',
                color: '#7a3db8',
                dashed: true,
                values: list.map((hour) => hour.outcomeAccuracy),
              },
            ]}
            summary={
              rated + evaluated === 0
                ? 'No recommendation was decided or evaluated in the last 24 hours.'
                : `Decisions in ${formatCount(rated)} hours, outcomes recorded in ${formatCount(evaluated)} hours.`
            }
          />
          <Chart
            id="cost"
            title="Cost"
            hours={ends}
            formatValue={formatUsd}
            series={[{ label: 'Cost (USD)', color: '#8a4b00', values: list.map((hour) => hour.costUsd) }]}
            summary={
              cost === 0
                ? 'Nothing was spent in the last 24 hours.'
                : `${formatUsd(cost)} in 24 hours` +
                  (costliest
                    ? `; most in the hour ending ${at(costliest)} (${formatUsd(costliest.costUsd)}).`
                    : '.')
            }
          />
          {budget ? (
            <Chart
              id="budget"
              title="Budget burn"
              hours={ends}
              formatValue={formatUsd}
              series={[
                { label: 'Spent this period', color: '#8a4b00', values: burnOf(list, budget) },
                {
                  label: 'Limit',
                  color: '#b42318',
                  dashed: true,
                  values: list.map((hour) =>
                    Date.parse(hour.periodEnd) > Date.parse(budget.periodStart)
                      ? Number(budget.limitUsd)
                      : null,
                  ),
                },
              ]}
              summary={`${formatUsd(Number(budget.spentUsd))} of ${formatUsd(Number(budget.limitUsd))} spent ${
                budget.period === 'day' ? 'today' : 'this month'
              }${
                Number(budget.limitUsd) > 0
                  ? ` (${formatPercent(Number(budget.spentUsd) / Number(budget.limitUsd))})`
                  : ''
              }; ${formatUsd(Number(budget.reservedUsd))} held by running tasks.`}
            />
          ) : null}
        </div>
      )}
    </section>
  );
}
