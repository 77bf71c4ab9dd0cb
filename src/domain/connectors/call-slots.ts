import { ConnectorCallsBusyError } from './errors.js';

/** Connector calls in flight per tenant on this instance, bounded. */
export interface ConnectorCallSlots {
  /**
   * Takes one of the tenant's slots, or throws ConnectorCallsBusyError when all are taken. Answers the
   * slot's release, which may be called more than once.
   */
  take(tenantId: string): () => void;
}

/**
 * Slots for outbound connector calls, `perTenant` for each tenant (CONNECTOR_CALLS_PER_TENANT). They are
 * not the in-flight budget that protects the database (use-load-shedding): a call gives that back before
 * it waits on its upstream and holds one of these instead, so one tenant's slow upstream can neither
 * starve the database's requests nor another tenant's calls.
 */
export function createConnectorCallSlots(perTenant: number): ConnectorCallSlots {
  const taken = new Map<string, number>();
  return {
    take(tenantId) {
      const count = taken.get(tenantId) ?? 0;
      if (count >= perTenant) throw new ConnectorCallsBusyError(perTenant);
      taken.set(tenantId, count + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (taken.get(tenantId) ?? 1) - 1;
        if (left > 0) taken.set(tenantId, left);
        else taken.delete(tenantId);
      };
    },
  };
}
