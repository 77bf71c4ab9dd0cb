import { isDeepStrictEqual } from 'node:util';
import type { OutboxEntry } from '../../events/outbox.js';
import type { StoredConnectorTemplate } from './template.js';

/**
 * What a CONNECTOR_CHANGED event says changed: `created`, a template field, or `status`. These are what
 * the MCP tool list is computed from (mcp/connector-tools.ts); an approval policy or a credential is not.
 */
export const CONNECTOR_CHANGES = [
  'created',
  'name',
  'description',
  'base_url',
  'auth_type',
  'endpoints',
  'rate_limits',
  'status',
] as const;
export type ConnectorChange = (typeof CONNECTOR_CHANGES)[number];

const TEMPLATE_FIELDS = ['name', 'description', 'base_url', 'auth_type', 'endpoints', 'rate_limits'] as const;

/** The template fields an edit changed, in CONNECTOR_CHANGES order (key order inside a field is no change). */
export function templateChanges(
  before: StoredConnectorTemplate,
  after: StoredConnectorTemplate,
): ConnectorChange[] {
  return TEMPLATE_FIELDS.filter((field) => !isDeepStrictEqual(before[field], after[field]));
}

/**
 * The CONNECTOR_CHANGED event of a committed change: ids, the version, the status and the names of what
 * changed. Never a template's values, a credential or an approval policy.
 */
export function connectorChanged(
  connector: { id: string; tenantId: string; version: number; status: string; updatedAt: Date },
  changes: readonly ConnectorChange[],
): OutboxEntry {
  return {
    type: 'CONNECTOR_CHANGED',
    tenantId: connector.tenantId,
    payload: {
      connector_id: connector.id,
      version: connector.version,
      status: connector.status,
      changes: [...changes],
      changed_at: connector.updatedAt.toISOString(),
    },
  };
}
