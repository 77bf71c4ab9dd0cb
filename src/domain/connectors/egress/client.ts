/**
 * The one way connector calls and webhook deliveries leave the instance, as the domain sees it. The client
 * that resolves, checks addresses and connects is src/infra/egress-client.ts; app.ts builds it.
 */
export interface EgressRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
  redirects: number;
}

/** A deadline shared by several requests (an OAuth token request and the call it is for). */
export interface EgressDeadline {
  /** Epoch milliseconds by which the requests must be over. */
  at: number;
  /** The time they were given in all, for the message of a refusal. */
  ms: number;
}

export interface EgressSendOptions {
  /** Ends the call earlier than its own `callTimeoutMs` when it comes first. */
  deadline?: EgressDeadline | undefined;
}

export interface EgressClient {
  /** Sends one request; resolves with any HTTP status, rejects with an EgressError. */
  send(request: EgressRequest, options?: EgressSendOptions): Promise<EgressResponse>;
  /**
   * Resolves the host of an https `url` and checks every address as a connection would (allowlist
   * included), without connecting: rejects with the EgressError a request would meet. For refusing a
   * target when it is registered; requests are checked again when they connect.
   */
  checkTarget(url: string): Promise<void>;
  close(): Promise<void>;
}
