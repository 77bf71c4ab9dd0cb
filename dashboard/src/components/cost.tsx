import { useEffect, useState } from 'preact/hooks';
import type { CostGroup, DashboardCostAttributionQuery } from '../../../src/generated/dashboard/graphql.js';
import { request } from '../api.js';
import { CostAttribution as CostAttributionDocument } from '../documents.js';
import { formatCount, formatUsd, roleLabel } from '../format.js';

const GROUPS: { value: CostGroup; label: string }[] = [
  { value: 'ROLE' as CostGroup, label: 'Role' },
  { value: 'MODEL_VERSION' as CostGroup, label: 'Model version' },
  { value: 'THREAD' as CostGroup, label: 'Thread' },
  { value: 'ROOT_TASK' as CostGroup, label: 'Root task (with its sub-tasks)' },
  { value: 'ROUTINE' as CostGroup, label: 'Routine' },
  { value: 'CONNECTOR' as CostGroup, label: 'Connector' },
];

const PERIODS: { hours: number; label: string }[] = [
  { hours: 24, label: 'Last 24 hours' },
  { hours: 24 * 7, label: 'Last 7 days' },
  { hours: 24 * 30, label: 'Last 30 days' },
];

type Attribution = DashboardCostAttributionQuery['costAttribution'];

/**
 * Cost and tokens of the tasks that finished in a period, grouped as the chairman chooses (docs/cost-attribution.md).
 * The rows add up to the total shown, which is the vitals' and the budgets' for the same tasks. Read again
 * when `version` changes (a task event arrived).
 */
export function Cost({
  token,
  version,
  onError,
}: {
  token: string;
  version: number;
  onError(error: unknown): void;
}) {
  const [groupBy, setGroupBy] = useState<CostGroup>('ROLE');
  const [hours, setHours] = useState(24);
  const [view, setView] = useState<Attribution | null>(null);
  useEffect(() => {
    let active = true;
    const to = new Date();
    const from = new Date(to.getTime() - hours * 60 * 60 * 1000);
    request(token, CostAttributionDocument, { groupBy, from: from.toISOString(), to: to.toISOString() }).then(
      (data) => active && setView(data.costAttribution),
      onError,
    );
    return () => {
      active = false;
    };
  }, [token, version, groupBy, hours]);

  const label = (row: Attribution['rows'][number]) =>
    groupBy === 'ROLE' && row.key ? roleLabel(row.key) : row.label;
  return (
    <section class="panel cost" aria-labelledby="cost-heading" data-cost-group={groupBy}>
      <header class="panel-header">
        <h2 id="cost-heading">Cost</h2>
        <label class="field">
          <span>Group by</span>
          <select
            value={groupBy}
            onChange={(event) => setGroupBy((event.target as HTMLSelectElement).value as CostGroup)}
          >
            {GROUPS.map((group) => (
              <option key={group.value} value={group.value}>
                {group.label}
              </option>
            ))}
          </select>
        </label>
        <label class="field">
          <span>Period</span>
          <select
            value={String(hours)}
            onChange={(event) => setHours(Number((event.target as HTMLSelectElement).value))}
          >
            {PERIODS.map((period) => (
              <option key={period.hours} value={String(period.hours)}>
                {period.label}
              </option>
            ))}
          </select>
        </label>
      </header>
      {view === null ? <p class="muted">Loading…</p> : null}
      {view && view.rows.length === 0 ? <p class="muted">No task finished in this period.</p> : null}
      {view && view.rows.length > 0 ? (
        <div class="table-scroll">
          <table data-cost-rows="">
            <caption class="sr-only">
              Cost by {GROUPS.find((group) => group.value === groupBy)?.label}, costliest first
            </caption>
            <thead>
              <tr>
                <th scope="col">{GROUPS.find((group) => group.value === groupBy)?.label}</th>
                <th scope="col">Cost</th>
                <th scope="col">Tokens</th>
                <th scope="col">Tasks</th>
                {groupBy === 'CONNECTOR' ? <th scope="col">Calls</th> : null}
              </tr>
            </thead>
            <tbody>
              {view.rows.map((row) => (
                <tr key={row.key ?? ''} data-cost-key={row.key ?? ''}>
                  <th scope="row">{label(row)}</th>
                  <td data-field="cost_usd" data-value={row.costUsd}>
                    {formatUsd(Number(row.costUsd))}
                  </td>
                  <td>{formatCount(row.tokensUsed)}</td>
                  <td>{formatCount(row.tasks)}</td>
                  {groupBy === 'CONNECTOR' ? <td>{formatCount(row.connectorCalls)}</td> : null}
                </tr>
              ))}
            </tbody>
            <tfoot>
              <tr>
                <th scope="row">Total</th>
                <td data-field="total_cost_usd" data-value={view.totalCostUsd}>
                  {formatUsd(Number(view.totalCostUsd))}
                </td>
                <td>{formatCount(view.totalTokensUsed)}</td>
                <td>{formatCount(view.tasks)}</td>
                {groupBy === 'CONNECTOR' ? <td /> : null}
              </tr>
            </tfoot>
          </table>
        </div>
      ) : null}
    </section>
  );
}
