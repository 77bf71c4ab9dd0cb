import type { Viewer } from './viewer.js';

/** setTimeout's longest delay; a later `exp` is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Whether the token that proved `viewer` has expired (never, for a viewer made without a token). */
export function hasExpired(viewer: Pick<Viewer, 'expiresAt'>): boolean {
  return viewer.expiresAt !== undefined && Date.now() >= viewer.expiresAt;
}

/**
 * Calls `onExpired` once, when the token that proved `viewer` expires; returns what cancels it. The clock is
 * `Date.now()`, read again when the timer fires: a timer that fires early waits again. Every stream of a
 * caller (a graphql-ws socket, an SSE subscription) ends through this at its token's `exp`.
 */
export function onExpiry(viewer: Pick<Viewer, 'expiresAt'>, onExpired: () => void): () => void {
  const { expiresAt } = viewer;
  if (expiresAt === undefined) return () => {};
  let timer: NodeJS.Timeout | undefined;
  const check = () => {
    if (Date.now() >= expiresAt) {
      timer = undefined;
      onExpired();
      return;
    }
    timer = setTimeout(check, Math.min(expiresAt - Date.now(), MAX_TIMER_MS));
    timer.unref();
  };
  check();
  return () => clearTimeout(timer);
}
