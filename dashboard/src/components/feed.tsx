import { useEffect, useState } from 'preact/hooks';
import { formatDateTime, formatUsd, roleLabel, timeZone } from '../format.js';
import type { LiveEvent } from '../live.js';

/** A feed entry: an event and when it happened (its own time, or when it was recorded or received). */
export interface FeedEntry {
  event: LiveEvent;
  at: string;
}

/** The time an event carries, if its type has one. */
export function timeOf(event: LiveEvent): string | null {
  switch (event.__typename) {
    case 'AgentPausedEvent':
      return event.pausedAt;
    case 'AgentResumedEvent':
      return event.resumedAt;
    case 'TaskUpdatedEvent':
      return event.updatedAt;
    case 'ConnectorInvokedEvent':
      return event.invokedAt;
    case 'ConnectorCallApprovalEvent':
    case 'ConnectorChangedEvent':
      return event.changedAt;
    case 'AbTestResultsChangedEvent':
      return event.changedAt;
    case 'WebhookDisabledEvent':
      return event.disabledAt;
    case 'ModelVersionChangedEvent':
    case 'BudgetAlertEvent':
    case 'BudgetChangedEvent':
    case 'TaskApprovalEvent':
      return null;
  }
}

const kindOf: Record<LiveEvent['__typename'], string> = {
  AgentPausedEvent: 'pause',
  AgentResumedEvent: 'resume',
  TaskUpdatedEvent: 'task',
  ModelVersionChangedEvent: 'model',
  ConnectorInvokedEvent: 'connector',
  ConnectorCallApprovalEvent: 'approval',
  ConnectorChangedEvent: 'connector',
  AbTestResultsChangedEvent: 'ab-test',
  BudgetAlertEvent: 'budget',
  BudgetChangedEvent: 'budget',
  WebhookDisabledEvent: 'webhook',
  TaskApprovalEvent: 'approval',
};

function Describe({ event, onOpenTask }: { event: LiveEvent; onOpenTask(id: string): void }) {
  switch (event.__typename) {
    case 'AgentPausedEvent':
      return (
        <>
          {roleLabel(event.role)} paused by {event.actorUserId}
        </>
      );
    case 'AgentResumedEvent':
      return (
        <>
          {roleLabel(event.role)} resumed by {event.actorUserId}
        </>
      );
    case 'TaskUpdatedEvent':
      return (
        <>
          {roleLabel(event.role)}{' '}
          <button type="button" class="link" onClick={() => onOpenTask(event.taskId)}>
            task {event.taskId.slice(0, 8)}
          </button>{' '}
          {event.status}
        </>
      );
    case 'ModelVersionChangedEvent':
      return (
        <>
          {event.baseModel} v{event.versionNumber} {event.previousStatus ?? 'new'} → {event.deploymentStatus}
        </>
      );
    case 'ConnectorInvokedEvent':
      return (
        <>
          Connector {event.connectorId.slice(0, 8)} {event.method} {event.path} →{' '}
          {event.httpStatus ?? event.outcome}
        </>
      );
    case 'ConnectorChangedEvent':
      return (
        <>
          Connector {event.connectorId.slice(0, 8)}{' '}
          {event.changes.includes('created')
            ? 'created'
            : `v${event.connectorVersion}: ${event.changes.join(', ').replaceAll('_', ' ')} changed`}
        </>
      );
    case 'ConnectorCallApprovalEvent':
      return (
        <>
          Approval {event.approvalId.slice(0, 8)} {event.method} {event.path}{' '}
          {event.approvalStatus.replace('_', ' ')}
        </>
      );
    case 'AbTestResultsChangedEvent':
      return (
        <>
          A/B test {event.name} {event.testStatus}
        </>
      );
    case 'BudgetAlertEvent':
      return (
        <>
          {event.budgetRole === null ? 'Company' : roleLabel(event.budgetRole)} budget{' '}
          {event.alert === 'BUDGET_EXHAUSTED' ? 'exhausted' : 'warning'}: {formatUsd(Number(event.spentUsd))}{' '}
          of {formatUsd(Number(event.limitUsd))} spent {event.period === 'day' ? 'today' : 'this month'}
        </>
      );
    case 'BudgetChangedEvent':
      return (
        <>
          {event.budgetRole === null ? 'Company' : roleLabel(event.budgetRole)} budget set:{' '}
          {formatUsd(Number(event.limitUsd))} {event.period === 'day' ? 'a day' : 'a month'}
        </>
      );
    case 'WebhookDisabledEvent':
      return (
        <>
          Webhook {event.webhookId.slice(0, 8)}
          {event.webhookRole ? ` (${roleLabel(event.webhookRole)})` : ''} disabled after failing
        </>
      );
    case 'TaskApprovalEvent':
      return (
        <>
          {roleLabel(event.taskApprovalRole)} decision {event.approvalId.slice(0, 8)} on task{' '}
          {event.taskId.slice(0, 8)} {event.taskApprovalStatus.replace('_', ' ')}
        </>
      );
  }
}

export function Feed({
  entries,
  loading,
  onOpenTask,
}: {
  entries: FeedEntry[];
  loading: boolean;
  onOpenTask(id: string): void;
}) {
  // Announced from the first event after the history: not the hundred entries the page loads with.
  const [announce, setAnnounce] = useState(false);
  useEffect(() => {
    if (!loading) setAnnounce(true);
  }, [loading]);
  return (
    <section class="panel feed" aria-labelledby="feed-heading">
      <h2 id="feed-heading">Events</h2>
      <p class="muted small">
        The last 24 hours and what happens now; times in {timeZone()}.
        {entries.length === 0 ? (loading ? ' Loading…' : ' Nothing has happened yet.') : null}
      </p>
      <ol
        aria-live={announce ? 'polite' : 'off'}
        aria-relevant="additions"
        aria-labelledby="feed-heading"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling list must be reachable by keyboard (WCAG 2.1.1)
        tabIndex={0}
      >
        {entries.map(({ event, at }) => (
          <li key={event.eventId} data-event-id={event.eventId} class={kindOf[event.__typename]}>
            <time dateTime={at}>{formatDateTime(at)}</time> <Describe event={event} onOpenTask={onOpenTask} />
          </li>
        ))}
      </ol>
    </section>
  );
}
