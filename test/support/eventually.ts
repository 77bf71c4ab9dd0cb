import { vi } from 'vitest';

/**
 * How long `eventually` retries: under the 30 s test timeout, so a check that never passes fails with its
 * own assertion rather than the test's timeout.
 */
const SETTLE_MS = 25_000;

/**
 * Retries `check` (every 20 ms) until it passes, and returns what it returned: for what the server does on
 * its own time after a client's step (sockets closed, a claim registered, a delivery recorded). Its only
 * deadline is the test's. Such work takes half a second on an idle machine and several on a loaded CI
 * runner: a test proves that it happens, and how fast belongs to `npm run bench`.
 */
export function eventually<T>(check: () => T | Promise<T>): Promise<T> {
  return vi.waitFor(check, { timeout: SETTLE_MS, interval: 20 });
}

/** `promise`, or a rejection `${what} within ${timeoutMs} ms` once that time has passed first. */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} within ${timeoutMs} ms`)), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
}
