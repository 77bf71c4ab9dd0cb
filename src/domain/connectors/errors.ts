import { DomainError } from '../errors.js';

/**
 * An expected refusal of a connector operation, with the facts a client needs (its `reason` always set);
 * messages never carry a secret.
 */
export abstract class ConnectorError extends DomainError {
  /** A stable name of the refusal, given to GraphQL clients as `extensions.reason`. */
  abstract override readonly reason: string;
}

/**
 * An edit that moves a connector's `base_url` to another origin by someone other than the chairman: the
 * origin is where the connector's stored credential is sent, a trust boundary only the chairman draws.
 */
export class OriginChangeRefusedError extends ConnectorError {
  override name = 'OriginChangeRefusedError';
  readonly code = 'FORBIDDEN';
  readonly reason = 'origin_change_refused';
  constructor(
    readonly connectorId: string,
    readonly origin: string,
    readonly requestedOrigin: string,
  ) {
    super(
      `Only the chairman may move connector ${connectorId} to another origin (${origin} → ${requestedOrigin}): its credential is sent to its origin`,
    );
  }
  override facts() {
    return { origin: this.origin, requestedOrigin: this.requestedOrigin };
  }
}

/**
 * The tenant already has as many connector calls in flight on this instance as CONNECTOR_CALLS_PER_TENANT
 * allows (calls, probes and OAuth token requests alike): a slow upstream of one tenant cannot take every
 * outbound call of the instance.
 */
export class ConnectorCallsBusyError extends ConnectorError {
  override name = 'ConnectorCallsBusyError';
  readonly code = 'RATE_LIMITED';
  readonly reason = 'connector_calls_busy';
  /** A slot frees as soon as any of the tenant's calls ends; one second is a fair first wait. */
  readonly retryAfter = 1;
  constructor(readonly limit: number) {
    super(`At most ${limit} connector calls of a tenant run at once on an instance; retry in 1 s`);
  }
  override facts() {
    return { limit: this.limit, retryAfter: this.retryAfter };
  }
  override headers() {
    return { 'Retry-After': String(this.retryAfter) };
  }
}

/**
 * The stored credential was set for another origin than the one the connector calls now (the chairman
 * moved `base_url`): it is not sent anywhere until it is set again.
 */
export class CredentialUnboundError extends ConnectorError {
  override name = 'CredentialUnboundError';
  readonly code = 'CONFLICT';
  readonly reason = 'credential_unbound';
  constructor(
    readonly connectorId: string,
    readonly boundOrigin: string,
    readonly origin: string,
  ) {
    super(
      `The credential of connector ${connectorId} was set for ${boundOrigin}; the connector's origin changed (now ${origin}): set the credential again for the new origin`,
    );
  }
  override facts() {
    return { boundOrigin: this.boundOrigin, origin: this.origin };
  }
}
