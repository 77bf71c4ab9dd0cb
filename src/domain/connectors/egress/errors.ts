import { DomainError, type ErrorCode } from '../../errors.js';

/** Why the egress client did not return a response; each reason has its own error class. */
export type EgressFailureReason =
  | 'address_refused'
  | 'scheme_refused'
  | 'redirect_refused'
  | 'dns_failed'
  | 'connect_timeout'
  | 'headers_timeout'
  | 'body_timeout'
  | 'call_timeout'
  | 'tls_failed'
  | 'connection_failed'
  | 'response_too_large';

/** The code each reason answers with, wherever an outbound request's failure reaches a client. */
const CODE_OF: Record<EgressFailureReason, ErrorCode> = {
  address_refused: 'EGRESS_REFUSED',
  scheme_refused: 'EGRESS_REFUSED',
  redirect_refused: 'EGRESS_REFUSED',
  dns_failed: 'UPSTREAM_FAILED',
  tls_failed: 'UPSTREAM_FAILED',
  connection_failed: 'UPSTREAM_FAILED',
  response_too_large: 'UPSTREAM_FAILED',
  connect_timeout: 'UPSTREAM_TIMEOUT',
  headers_timeout: 'UPSTREAM_TIMEOUT',
  body_timeout: 'UPSTREAM_TIMEOUT',
  call_timeout: 'UPSTREAM_TIMEOUT',
};

/**
 * A refusal or failure of an outbound connector request. Messages name hosts, ports and addresses, never
 * bodies, headers or query strings, so none carries a credential. Connector calls answer it with their
 * own message (invoke.ts), webhook registration as a refused URL (webhooks/store.ts).
 */
export abstract class EgressError extends DomainError {
  abstract override readonly reason: EgressFailureReason;
  get code(): ErrorCode {
    return CODE_OF[this.reason];
  }
}

/**
 * The host resolved to (or is) an address that is not public and that CONNECTOR_EGRESS_ALLOW does not name
 * with this port.
 */
export class EgressAddressRefusedError extends EgressError {
  override name = 'EgressAddressRefusedError';
  readonly reason = 'address_refused';
  constructor(
    readonly hostname: string,
    readonly address: string,
    readonly port: number,
    why: string,
  ) {
    super(
      `${hostname} resolved to ${address}, which ${why}; outbound connections to it on port ${port} are refused`,
    );
  }
}

/** A URL that is not https (the request itself, or a redirect to plain http). */
export class EgressSchemeRefusedError extends EgressError {
  override name = 'EgressSchemeRefusedError';
  readonly reason = 'scheme_refused';
}

/** A redirect to another host, or more redirects than allowed. */
export class EgressRedirectRefusedError extends EgressError {
  override name = 'EgressRedirectRefusedError';
  readonly reason = 'redirect_refused';
}

export class EgressDnsError extends EgressError {
  override name = 'EgressDnsError';
  readonly reason = 'dns_failed';
}

/**
 * No connection in time, no response headers in time, the body stalled, or the whole call (redirects and
 * body included) outlasted its deadline.
 */
export class EgressTimeoutError extends EgressError {
  override name = 'EgressTimeoutError';
  constructor(
    readonly reason: 'connect_timeout' | 'headers_timeout' | 'body_timeout' | 'call_timeout',
    message: string,
  ) {
    super(message);
  }
}

/** The server's certificate was not trusted or the TLS handshake failed. */
export class EgressTlsError extends EgressError {
  override name = 'EgressTlsError';
  readonly reason = 'tls_failed';
}

/** The connection was refused, reset or closed early. */
export class EgressConnectionError extends EgressError {
  override name = 'EgressConnectionError';
  readonly reason = 'connection_failed';
}

/** The response body is larger than the cap; it is not returned, not even in part. */
export class EgressResponseTooLargeError extends EgressError {
  override name = 'EgressResponseTooLargeError';
  readonly reason = 'response_too_large';
  constructor(readonly maxBytes: number) {
    super(`the response body exceeds ${maxBytes} bytes`);
  }
}
