import type { DashboardRoleFieldsFragment } from '../../../src/generated/dashboard/graphql.js';
import { formatCount, formatDateTime, formatUsd } from '../format.js';

type Trip = NonNullable<DashboardRoleFieldsFragment['lastBreakerTrip']>;

/** Each breaker in words (docs/breakers.md). */
const BREAKERS: Record<string, string> = {
  consecutive_failures: 'Failed tasks in a row',
  spend: 'Spend above its limit',
  attempts_exceeded: 'A task out of attempts',
  duration_exceeded: 'A task running too long',
  repeated_call: 'The same connector call repeated',
  delegation_cycle: 'A delegation in a cycle',
};

const number = (value: unknown) => (typeof value === 'number' ? value : null);
const shortId = (value: unknown) => (typeof value === 'string' ? value.slice(0, 8) : '?');

/** The evidence's figures in one line, per breaker. */
export function evidenceSummary(kind: string, evidence: Record<string, unknown>): string {
  switch (kind) {
    case 'consecutive_failures':
      return `${formatCount(number(evidence.failed_tasks) ?? 0)} failed in a row (limit ${formatCount(number(evidence.threshold) ?? 0)})`;
    case 'spend':
      return `${formatUsd(number(evidence.spent_usd) ?? 0)} in ${formatCount(number(evidence.window_minutes) ?? 0)} min, above ${formatUsd(number(evidence.threshold_usd) ?? 0)}${evidence.rule === 'trailing_multiple' ? ` (${number(evidence.multiple)}× its usual rate)` : ''}`;
    case 'attempts_exceeded':
      return `task ${shortId(evidence.task_id)} lost its lease on attempt ${number(evidence.attempts)} (limit ${number(evidence.max_attempts)})`;
    case 'duration_exceeded':
      return `task ${shortId(evidence.task_id)} ran ${number(evidence.running_minutes)} min (limit ${number(evidence.max_duration_minutes)})`;
    case 'repeated_call':
      return `task ${shortId(evidence.task_id)} called ${String(evidence.method)} ${String(evidence.path)} ${number(evidence.calls)} times (limit ${number(evidence.limit)})`;
    case 'delegation_cycle':
      return `task ${shortId(evidence.task_id)} delegated back along ${Array.isArray(evidence.chain) ? evidence.chain.join(' → ') : '?'}`;
    default:
      return '';
  }
}

/** Why a breaker paused a role: the breaker, its figures and the tasks named as evidence. */
export function BreakerNote({ trip }: { trip: Trip }) {
  const evidence = (trip.evidence ?? {}) as Record<string, unknown>;
  const tasks = Array.isArray(evidence.task_ids)
    ? (evidence.task_ids as string[])
    : typeof evidence.task_id === 'string'
      ? [evidence.task_id]
      : [];
  return (
    <div class="breaker" data-breaker={trip.kind}>
      <p>
        <strong>Breaker: {BREAKERS[trip.kind] ?? trip.kind}</strong>{' '}
        <time dateTime={trip.trippedAt}>{formatDateTime(trip.trippedAt)}</time>
      </p>
      <p data-field="breaker-evidence">{evidenceSummary(trip.kind, evidence)}</p>
      {tasks.length > 0 ? (
        <p class="breaker-tasks">
          Tasks:{' '}
          {tasks.map((id) => (
            <code key={id} title={id}>
              {id.slice(0, 8)}{' '}
            </code>
          ))}
        </p>
      ) : null}
    </div>
  );
}
