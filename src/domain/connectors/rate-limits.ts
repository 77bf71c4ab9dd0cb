import type { Connector } from '../../generated/prisma/client.js';
import type { CallWindow, RateLimiter } from '../../rate-limit.js';
import { rateLimited } from '../errors.js';
import type { StoredConnectorTemplate, StoredRateLimits } from './template.js';

const WINDOWS: { field: keyof StoredRateLimits; seconds: CallWindow['seconds']; per: string }[] = [
  { field: 'per_minute', seconds: 60, per: 'minute' },
  { field: 'per_hour', seconds: 3600, per: 'hour' },
  { field: 'per_day', seconds: 86_400, per: 'day' },
];

/** The budget of one connector: its tenant and id. */
export function connectorCallKey(connector: Pick<Connector, 'id' | 'tenantId'>): string {
  return `connector:${JSON.stringify([connector.tenantId, connector.id])}`;
}

/**
 * Spends one outbound call of `connector` in every window its template's `rate_limits` configure
 * (per_minute, per_hour, per_day; none configured: nothing is limited). When any window is spent it throws
 * RATE_LIMITED (429 with `Retry-After` over REST, `retryAfter` seconds in the GraphQL error) and the call
 * must not be made. Counts are shared by every instance when Redis is configured; they follow the limits
 * of the current template, so an edit takes effect on the next call.
 */
export async function consumeConnectorCall(
  services: { rateLimiter: RateLimiter },
  connector: Pick<Connector, 'id' | 'tenantId' | 'template'>,
): Promise<void> {
  const limits = (connector.template as unknown as StoredConnectorTemplate).rate_limits ?? {};
  const windows = WINDOWS.flatMap(({ field, seconds }) => {
    const limit = limits[field];
    return typeof limit === 'number' ? [{ seconds, limit }] : [];
  });
  if (windows.length === 0) return;
  const retryAfter = await services.rateLimiter.consumeWindows(connectorCallKey(connector), windows);
  if (retryAfter === null) return;
  const stated = WINDOWS.filter(({ field }) => typeof limits[field] === 'number')
    .map(({ field, per }, index) => `${limits[field]}${index === 0 ? ' calls' : ''} per ${per}`)
    .join(', ');
  throw rateLimited(`Connector ${connector.id} allows ${stated}; retry in ${retryAfter} s`, retryAfter);
}
