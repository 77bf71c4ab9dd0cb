/**
 * The long-lived connections each caller holds open on this instance: graphql-ws sockets and subscriptions
 * over server-sent events, counted together against one limit (MAX_STREAMS_PER_CALLER). Per instance, in
 * memory: what it protects (sockets, memory, bus listeners) is the instance's own.
 */
export interface StreamSlots {
  /** The most streams one caller may hold open at once. */
  readonly maxPerCaller: number;
  /**
   * Takes a slot for `callerKey` (see `callerKey` in src/rate-limit.ts); returns what gives it back (once,
   * whatever the number of calls), or undefined when the caller already holds `maxPerCaller`.
   */
  take(callerKey: string): (() => void) | undefined;
  /** Slots `callerKey` holds now. */
  held(callerKey: string): number;
}

export function createStreamSlots(maxPerCaller: number): StreamSlots {
  const heldByCaller = new Map<string, number>();
  const held = (callerKey: string) => heldByCaller.get(callerKey) ?? 0;
  return {
    maxPerCaller,
    held,
    take(callerKey) {
      const now = held(callerKey);
      if (now >= maxPerCaller) return undefined;
      heldByCaller.set(callerKey, now + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = held(callerKey) - 1;
        if (left > 0) heldByCaller.set(callerKey, left);
        else heldByCaller.delete(callerKey);
      };
    },
  };
}
