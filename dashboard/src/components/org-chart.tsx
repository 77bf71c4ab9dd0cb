import { roleLabel } from '../format.js';

/** A role as the chart draws it: who it reports to, and whether it is paused. */
export interface ChartRole {
  role: string;
  displayName?: string | null;
  reportsTo?: string | null;
  paused: boolean;
}

/** The roles that report to `manager`, in name order (the board's: those reporting to no one). */
const reportsOf = (roles: readonly ChartRole[], manager: string | null) =>
  roles.filter((role) => (role.reportsTo ?? null) === manager).sort((a, b) => a.role.localeCompare(b.role));

function Branch({ roles, role, seen }: { roles: readonly ChartRole[]; role: ChartRole; seen: Set<string> }) {
  // A chart is a tree; `seen` keeps a loop a concurrent change may leave from drawing forever.
  seen.add(role.role);
  const reports = reportsOf(roles, role.role).filter((report) => !seen.has(report.role));
  return (
    <li data-org-role={role.role} data-paused={role.paused ? 'true' : undefined}>
      <span class="org-role">{roleLabel(role.role, role.displayName)}</span>
      {role.paused ? <span class="badge paused">paused</span> : null}
      {reports.length > 0 ? (
        <ul>
          {reports.map((report) => (
            <Branch key={report.role} roles={roles} role={report} seen={seen} />
          ))}
        </ul>
      ) : null}
    </li>
  );
}

/** The company's org chart: who reports to whom, from the CEO down, as nested lists. */
export function OrgChart({ roles }: { roles: readonly ChartRole[] }) {
  const seen = new Set<string>();
  const tops = reportsOf(roles, null);
  return (
    <section class="panel org-chart" aria-labelledby="org-heading" data-org-chart="">
      <h2 id="org-heading">Org chart</h2>
      {roles.length === 0 ? (
        <p class="muted">Loading…</p>
      ) : (
        <ul class="org-tree">
          {tops.map((top) => (
            <Branch key={top.role} roles={roles} role={top} seen={seen} />
          ))}
        </ul>
      )}
    </section>
  );
}
