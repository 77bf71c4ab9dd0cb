import { useEffect, useState } from 'preact/hooks';
import type { DashboardRoutinesQuery } from '../../../src/generated/dashboard/graphql.js';
import { request } from '../api.js';
import { Routines as RoutinesDocument } from '../documents.js';
import { formatDateTime, NONE, roleLabel } from '../format.js';

/** Routines shown at most; the list says when there are more. */
const SHOWN = 50;

const REASON_TEXT: Record<string, string> = {
  role_paused: 'the role was paused',
  budget_exhausted: 'the budget had no room',
  missed: 'missed while no instance ran',
  unknown_role: 'the role no longer exists',
  schedule_invalid: 'its schedule can no longer be read',
};

type Routine = DashboardRoutinesQuery['routines']['nodes'][number];

function LastOutcome({ routine, onOpenTask }: { routine: Routine; onOpenTask(id: string): void }) {
  if (!routine.lastOutcome || !routine.lastRunAt) return <span class="muted">Not run yet</span>;
  const when = <time dateTime={routine.lastRunAt}>{formatDateTime(routine.lastRunAt)}</time>;
  if (routine.lastOutcome === 'queued') {
    return (
      <span data-field="last_outcome" data-value="queued">
        {routine.lastTask ? (
          <button
            type="button"
            class="link"
            onClick={() => routine.lastTask && onOpenTask(routine.lastTask.id)}
          >
            Queued a task
          </button>
        ) : (
          'Queued a task'
        )}{' '}
        ({when})
      </span>
    );
  }
  const reason = routine.lastReason ?? '';
  return (
    <span data-field="last_outcome" data-value="skipped" data-reason={reason}>
      Skipped: {REASON_TEXT[reason] ?? reason} ({when})
    </span>
  );
}

/**
 * The tenant's routines: role, schedule and time zone, next run and last outcome with its reason. It reads
 * them again when `version` changes (a task event arrived: an occurrence may have queued it).
 */
export function Routines({
  token,
  version,
  onOpenTask,
  onError,
}: {
  token: string;
  version: number;
  onOpenTask(id: string): void;
  onError(error: unknown): void;
}) {
  const [page, setPage] = useState<DashboardRoutinesQuery['routines'] | null>(null);
  useEffect(() => {
    let active = true;
    request(token, RoutinesDocument, { first: SHOWN }).then(
      (data) => active && setPage(data.routines),
      onError,
    );
    return () => {
      active = false;
    };
  }, [token, version]);

  return (
    <section class="panel routines" aria-labelledby="routines-heading">
      <h2 id="routines-heading">Routines</h2>
      {page === null ? <p class="muted">Loading…</p> : null}
      {page && page.nodes.length === 0 ? <p class="muted">No routine yet.</p> : null}
      {page && page.nodes.length > 0 ? (
        <div class="table-scroll">
          <table data-routines="">
            <caption class="sr-only">Routines, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Role</th>
                <th scope="col">Schedule</th>
                <th scope="col">Time zone</th>
                <th scope="col">Message</th>
                <th scope="col">Next run</th>
                <th scope="col">Last outcome</th>
              </tr>
            </thead>
            <tbody>
              {page.nodes.map((routine) => (
                <tr key={routine.id} data-routine-id={routine.id}>
                  <th scope="row">{roleLabel(routine.role)}</th>
                  <td>
                    <code>{routine.cron}</code>
                  </td>
                  <td>{routine.timeZone}</td>
                  <td class="message">{routine.message}</td>
                  <td data-field="next_run">
                    {routine.nextRunAt ? (
                      <time dateTime={routine.nextRunAt}>{formatDateTime(routine.nextRunAt)}</time>
                    ) : routine.enabled ? (
                      NONE
                    ) : (
                      'Disabled'
                    )}
                  </td>
                  <td>
                    <LastOutcome routine={routine} onOpenTask={onOpenTask} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {page?.nextCursor ? <p class="muted">Showing the {SHOWN} newest routines.</p> : null}
    </section>
  );
}
