/** When failed deliveries are tried again, and when a failing webhook is given up on. */
export interface RetryPolicy {
  /** Wait after the first failed attempt; it doubles with each further failure. Default 5 s. */
  firstDelayMs: number;
  /** Longest wait between two attempts. Default 1 h. */
  maxDelayMs: number;
  /** A webhook whose deliveries have failed without a success for this long is disabled. Default 24 h. */
  disableAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  firstDelayMs: 5_000,
  maxDelayMs: 60 * 60 * 1000,
  disableAfterMs: 24 * 60 * 60 * 1000,
};

/**
 * The wait before attempt `attempts + 1`, after `attempts` failed ones: exponential, capped, with jitter
 * that draws from the upper half of the interval ("equal jitter"), so retries of many deliveries that
 * failed together spread out while each still waits at least half its step.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempts: number,
  random: () => number = Math.random,
): number {
  const step = Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** Math.max(0, attempts - 1));
  return Math.round(step / 2 + (random() * step) / 2);
}
