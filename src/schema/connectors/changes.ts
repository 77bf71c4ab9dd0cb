import { builder } from '../../builder.js';
import { CONNECTOR_CHANGES, type ConnectorChange } from '../../domain/connectors/changes.js';

export interface ConnectorChangedPayload {
  event_id: string;
  tenant_id: string;
  connector_id: string;
  version: number;
  status: string;
  changes: ConnectorChange[];
  changed_at: string;
}

const ConnectorChangeEnum = builder.enumType('ConnectorChange', {
  description: 'What a connector change touched: its creation, a template field, or its status.',
  values: CONNECTOR_CHANGES,
});

export const ConnectorChangedEvent = builder
  .objectRef<ConnectorChangedPayload>('ConnectorChangedEvent')
  .implement({
    description:
      'A connector was created, or its name, template or status changed (what MCP tool lists are made ' +
      'from). Names what changed, never the values, a credential or an approval policy.',
    fields: (t) => ({
      eventId: t.exposeID('event_id'),
      tenantId: t.exposeID('tenant_id'),
      connectorId: t.exposeID('connector_id'),
      version: t.exposeInt('version', { description: 'The connector’s version after the change.' }),
      status: t.exposeString('status', { description: 'active or disabled, after the change.' }),
      changes: t.field({ type: [ConnectorChangeEnum], resolve: (event) => event.changes }),
      changedAt: t.field({ type: 'DateTime', resolve: (event) => event.changed_at }),
    }),
  });
