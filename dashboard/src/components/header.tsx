import type { DashboardViewerQuery } from '../../../src/generated/dashboard/graphql.js';
import type { ConnectionState } from '../live.js';

export type Viewer = DashboardViewerQuery['me'];

const CONNECTION_TEXT: Record<ConnectionState, string> = {
  connecting: 'connecting',
  live: 'live',
  reconnecting: 'reconnecting',
  offline: 'offline',
  unauthorized: 'signed out',
};

export function Header({
  viewer,
  connection,
  onSignOut,
}: {
  viewer: Viewer;
  connection: ConnectionState;
  onSignOut(): void;
}) {
  return (
    <header class="top">
      <h1>Boardroom</h1>
      <dl class="identity">
        <div>
          <dt>Tenant</dt>
          <dd data-field="tenant_id">{viewer.tenantId}</dd>
        </div>
        <div>
          <dt>Signed in as</dt>
          <dd>
            <span data-field="sub">{viewer.sub}</span>{' '}
            <span class="roles" data-field="roles">
              ({viewer.roles.join(', ')})
            </span>
          </dd>
        </div>
      </dl>
      <span class={`connection ${connection}`} data-connection={connection}>
        <span class="sr-only">Live updates: </span>
        {CONNECTION_TEXT[connection]}
      </span>
      <button type="button" class="sign-out" onClick={onSignOut} data-sign-out="">
        Sign out
      </button>
    </header>
  );
}
