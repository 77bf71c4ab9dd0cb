/**
 * Sends queued webhook deliveries, as the domain and the layers above see it. The dispatcher that claims
 * deliveries and sends them is src/infra/webhook-dispatcher.ts; app.ts builds it.
 */
export interface WebhookDispatcher {
  /** Claims and sends what is due now. */
  kick(): void;
  /** Sends what is due, then whenever deliveries commit or retries fall due; resolves once listening. */
  start(): Promise<void>;
  /** Stops claiming and waits for the attempts in flight. */
  stop(): Promise<void>;
}
