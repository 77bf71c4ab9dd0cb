import { useEffect, useState } from 'preact/hooks';
import type {
  DashboardTaskRowFragment,
  DashboardTasksQuery,
  TaskStatus,
} from '../../../src/generated/dashboard/graphql.js';
import { request } from '../api.js';
import { Tasks as TasksDocument } from '../documents.js';
import { formatDateTime, formatSeconds, formatUsd, NONE, roleLabel } from '../format.js';

const PAGE_SIZE = 20;

/** Every status, in the order a task goes through them. */
const STATUSES: TaskStatus[] = [
  'pending',
  'running',
  'waiting',
  'awaiting_approval',
  'in_review',
  'completed',
  'failed',
  'cancelled',
];

export const durationOf = (task: Pick<DashboardTaskRowFragment, 'startedAt' | 'finishedAt'>) =>
  task.startedAt && task.finishedAt
    ? (Date.parse(task.finishedAt) - Date.parse(task.startedAt)) / 1000
    : null;

/**
 * The task list, newest first, filtered by role and status, a page at a time. It reads its page again when
 * `version` changes (a task event arrived) while it shows the first page; later pages stay as read.
 */
export function Tasks({
  token,
  roles,
  version,
  onOpen,
  onError,
}: {
  token: string;
  roles: { role: string; displayName: string | null }[];
  version: number;
  onOpen(id: string): void;
  onError(error: unknown): void;
}) {
  const [role, setRole] = useState('');
  const [status, setStatus] = useState<TaskStatus | ''>('');
  // The `after` cursor of each page shown so far; the last is the current page's.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState<DashboardTasksQuery['tasks'] | null>(null);
  const after = cursors[cursors.length - 1] ?? null;
  const firstPage = cursors.length === 1;

  useEffect(() => {
    let active = true;
    request(token, TasksDocument, {
      first: PAGE_SIZE,
      after,
      role: role || null,
      status: status || null,
    }).then((next) => active && setPage(next.tasks), onError);
    return () => {
      active = false;
    };
  }, [token, role, status, after, firstPage ? version : 0]);

  const filter = (apply: () => void) => {
    apply();
    setCursors([null]);
    setPage(null);
  };

  return (
    <section class="panel tasks" aria-labelledby="tasks-heading">
      <header class="panel-header">
        <h2 id="tasks-heading">Tasks</h2>
        <div class="filters">
          <label class="field">
            <span>Role</span>
            <select
              value={role}
              data-filter="role"
              onChange={(event) => filter(() => setRole((event.target as HTMLSelectElement).value))}
            >
              <option value="">All roles</option>
              {roles.map((one) => (
                <option key={one.role} value={one.role}>
                  {roleLabel(one.role, one.displayName)}
                </option>
              ))}
            </select>
          </label>
          <label class="field">
            <span>Status</span>
            <select
              value={status}
              data-filter="status"
              onChange={(event) =>
                filter(() => setStatus((event.target as HTMLSelectElement).value as TaskStatus | ''))
              }
            >
              <option value="">Any status</option>
              {STATUSES.map((one) => (
                <option key={one} value={one}>
                  {one}
                </option>
              ))}
            </select>
          </label>
        </div>
      </header>
      <div class="table-scroll">
        <table data-tasks="">
          <caption class="sr-only">Tasks, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Message</th>
              <th scope="col">Model</th>
              <th scope="col" class="number">
                Cost
              </th>
              <th scope="col" class="number">
                Duration
              </th>
            </tr>
          </thead>
          <tbody>
            {page?.nodes.map((task) => {
              const duration = durationOf(task);
              return (
                <tr key={task.id} data-task-id={task.id} data-status={task.status}>
                  <td>
                    <time dateTime={task.createdAt}>{formatDateTime(task.createdAt)}</time>
                  </td>
                  <td>{roleLabel(task.role)}</td>
                  <td>
                    <span class={`badge ${task.status}`}>{task.status}</span>
                  </td>
                  <td class="message">
                    <button type="button" class="link" onClick={() => onOpen(task.id)}>
                      {task.message}
                    </button>
                  </td>
                  <td data-field="model_version">
                    {task.modelVersion
                      ? `${task.modelVersion.baseModel} v${task.modelVersion.versionNumber}`
                      : NONE}
                  </td>
                  <td class="number">{task.costUsd === null ? NONE : formatUsd(task.costUsd)}</td>
                  <td class="number">{duration === null ? NONE : formatSeconds(duration)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {page && page.nodes.length === 0 ? <p class="muted">No task matches.</p> : null}
      {page === null ? <p class="muted">Loading…</p> : null}
      <nav class="pager" aria-label="Task pages">
        <button
          type="button"
          disabled={firstPage}
          data-page="newer"
          onClick={() => setCursors((current) => current.slice(0, -1))}
        >
          Newer
        </button>
        <span aria-live="polite">Page {cursors.length}</span>
        <button
          type="button"
          disabled={!page?.nextCursor}
          data-page="older"
          onClick={() => {
            const next = page?.nextCursor;
            if (next) setCursors((current) => [...current, next]);
          }}
        >
          Older
        </button>
      </nav>
    </section>
  );
}
