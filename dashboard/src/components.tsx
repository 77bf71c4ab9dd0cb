import type { ConnectionState, LiveEvent } from './api.js';
import type { AbTestSummary, ProductionModel, RoleState, TaskCounts, Vitals } from './data.js';

const time = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '');

/** Vital signs under their REST (snake_case) names; the text is the plain number, empty when null. */
const VITALS: [keyof Vitals, string, string][] = [
  ['tasksCompleted', 'tasks_completed', 'Tasks completed'],
  ['tasksFailed', 'tasks_failed', 'Tasks failed'],
  ['avgExecutionTimeSeconds', 'avg_execution_time_seconds', 'Avg execution (s)'],
  ['acceptanceRate', 'acceptance_rate', 'Acceptance rate'],
  ['outcomeAccuracy', 'outcome_accuracy', 'Outcome accuracy'],
  ['tokensUsed', 'tokens_used', 'Tokens used'],
  ['costUsd', 'cost_usd', 'Cost (USD)'],
];

export function RoleCard({ state }: { state: RoleState }) {
  const status = state.paused ? 'paused' : 'active';
  return (
    <section class="card" data-role={state.role} data-state={status}>
      <header>
        <h2>{state.role.toUpperCase()}</h2>
        <span class={`badge ${status}`}>{status}</span>
      </header>
      <p class="who">
        {state.paused ? (
          <>
            Paused by <strong>{state.pausedBy ?? 'unknown'}</strong> at {time(state.pausedAt)}
          </>
        ) : (
          'Running'
        )}
      </p>
      <dl class="vitals" title="Trailing 24 hours">
        {VITALS.map(([key, field, label]) => {
          const value = state.vitals?.[key];
          return (
            <div key={field}>
              <dt>{label}</dt>
              <dd data-field={field}>{value === null || value === undefined ? '' : String(value)}</dd>
            </div>
          );
        })}
      </dl>
    </section>
  );
}

export function Queue({ counts }: { counts: TaskCounts | null }) {
  const states: (keyof TaskCounts)[] = ['pending', 'running', 'completed', 'failed'];
  return (
    <section class="panel">
      <h2>Task queue</h2>
      <ul class="counts">
        {states.map((status) => (
          <li key={status} data-task-status={status}>
            <span class="count">{counts ? counts[status] : ''}</span>
            <span>{status}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}

function describe(event: LiveEvent): string {
  switch (event.__typename) {
    case 'AgentPausedEvent':
      return `${event.role?.toUpperCase()} paused by ${event.actorUserId}`;
    case 'AgentResumedEvent':
      return `${event.role?.toUpperCase()} resumed by ${event.actorUserId}`;
    case 'TaskUpdatedEvent':
      return `${event.role?.toUpperCase()} task ${event.taskId?.slice(0, 8)} ${event.status}`;
    case 'ModelVersionChangedEvent':
      return `${event.baseModel} v${event.versionNumber} ${event.previousStatus ?? 'new'} → ${event.deploymentStatus}`;
    case 'ConnectorInvokedEvent':
      return `Connector ${event.connectorId?.slice(0, 8)} ${event.method} ${event.path} → ${event.httpStatus ?? event.outcome}`;
    case 'AbTestResultsChangedEvent':
      return `A/B test ${event.name} ${event.testStatus}`;
  }
}

const kindOf: Record<LiveEvent['__typename'], string> = {
  AgentPausedEvent: 'pause',
  AgentResumedEvent: 'resume',
  TaskUpdatedEvent: 'task',
  ModelVersionChangedEvent: 'model',
  ConnectorInvokedEvent: 'connector',
  AbTestResultsChangedEvent: 'ab-test',
};

export function Feed({ events }: { events: { event: LiveEvent; at: string }[] }) {
  return (
    <section class="panel feed">
      <h2>Events</h2>
      {events.length === 0 ? <p class="muted">Waiting for events…</p> : null}
      <ol>
        {events.map(({ event, at }) => (
          <li key={event.eventId} data-event-id={event.eventId} class={kindOf[event.__typename]}>
            <time>{at}</time> {describe(event)}
          </li>
        ))}
      </ol>
    </section>
  );
}

export function Models({ models }: { models: ProductionModel[] }) {
  return (
    <section class="panel">
      <h2>Production models</h2>
      {models.length === 0 ? <p class="muted">No base model in production.</p> : null}
      <table>
        <tbody>
          {models.map((model) => (
            <tr key={model.id} data-base-model={model.baseModel}>
              <th>{model.baseModel}</th>
              <td>v{model.versionNumber}</td>
              <td class="muted">{model.provider}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function AbTests({ tests }: { tests: AbTestSummary[] }) {
  return (
    <section class="panel">
      <h2>Running A/B tests</h2>
      {tests.length === 0 ? <p class="muted">No running test.</p> : null}
      <table>
        <tbody>
          {tests.map((test) => (
            <tr
              key={test.id}
              data-ab-test={test.id}
              title={`${test.observations} subjects, alpha ${test.alpha}`}
            >
              <th>{test.name}</th>
              <td data-field="chi_squared_p_value">
                {test.pValue === null ? '' : test.pValue.toPrecision(3)}
              </td>
              <td>
                <span class={`badge ${test.significant ? 'active' : 'idle'}`}>
                  {test.significant ? 'significant' : 'not significant'}
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function Connection({ state }: { state: ConnectionState }) {
  return (
    <span class={`connection ${state}`} data-connection={state}>
      {state}
    </span>
  );
}
