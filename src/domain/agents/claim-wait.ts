import type { EventBus } from '../../events/bus.js';
import type { BusEvent } from '../../events/topics.js';
import type { Actor } from '../actor.js';
import { type ClaimOptions, type ClaimOutcome, type ClaimResult, claimNextTask } from './queue.js';
import { normalizeRole } from './roles.js';

/** Longest wait a claim may ask for, in seconds. */
export const MAX_CLAIM_WAIT_SECONDS = 30;

/** A claim waiting for work: woken at most once per registration. */
export interface Waiter {
  /** What its last attempt answered: what kind of change may give it a task. */
  outcome: ClaimOutcome;
  woken: boolean;
  wake(): void;
}

/** The events that can make a role's task claimable. */
const WAKING_TYPES = ['TASK_UPDATED', 'DOGFOOD_AGENT_RESUMED'] as const;

/**
 * The claims waiting on this instance, by tenant and role, woken by the bus's events (which the outbox
 * relay publishes after the commit, to every instance). One bus listener per tenant with waiters; an idle
 * waiter is a promise, a deadline timer and an entry in a set: nothing runs until an event arrives.
 *
 * A task becoming `pending` wakes the role's oldest waiter whose last answer was `queue_empty` (one per
 * event, so a thousand waiters do not race for one task); if that waiter finds nothing (another instance or
 * a claimer that did not wait took it) it waits again. A resume of the role, and a task of the role ending
 * (which releases its budget reservation), wake every waiter the role's pause or a budget turned away.
 */
export class ClaimWaiters {
  private readonly byTenant = new Map<string, { roles: Map<string, Set<Waiter>>; stop: () => void }>();

  constructor(private readonly bus: EventBus) {}

  /** Waiters registered now (all tenants). */
  get size(): number {
    let size = 0;
    for (const tenant of this.byTenant.values())
      for (const waiters of tenant.roles.values()) size += waiters.size;
    return size;
  }

  /** Registers a waiter for events dispatched from now on; returns the function that removes it. */
  add(tenantId: string, role: string, waiter: Waiter): () => void {
    let tenant = this.byTenant.get(tenantId);
    if (!tenant) {
      const roles = new Map<string, Set<Waiter>>();
      const stop = this.bus.listen(WAKING_TYPES, tenantId, (event) => this.dispatch(roles, event));
      tenant = { roles, stop };
      this.byTenant.set(tenantId, tenant);
    }
    let waiters = tenant.roles.get(role);
    if (!waiters) {
      waiters = new Set();
      tenant.roles.set(role, waiters);
    }
    waiters.add(waiter);
    return () => {
      const current = this.byTenant.get(tenantId);
      const set = current?.roles.get(role);
      if (!current || !set?.delete(waiter) || set.size > 0) return;
      current.roles.delete(role);
      if (current.roles.size > 0) return;
      current.stop();
      this.byTenant.delete(tenantId);
    };
  }

  private dispatch(roles: Map<string, Set<Waiter>>, event: BusEvent): void {
    const role = typeof event.payload.role === 'string' ? event.payload.role : undefined;
    const waiters = role === undefined ? undefined : roles.get(role);
    if (!waiters) return;
    if (event.type === 'DOGFOOD_AGENT_RESUMED') {
      for (const waiter of waiters) waiter.wake();
      return;
    }
    const status = event.payload.status;
    if (status === 'pending') {
      for (const waiter of waiters) {
        if (waiter.woken || waiter.outcome !== 'queue_empty') continue;
        waiter.wake();
        return;
      }
    } else if (status === 'completed' || status === 'failed') {
      for (const waiter of waiters)
        if (waiter.outcome === 'role_budget_exhausted' || waiter.outcome === 'tenant_budget_exhausted')
          waiter.wake();
    }
  }
}

const registries = new WeakMap<EventBus, ClaimWaiters>();

/** The waiting claims of the instance that owns `bus`. */
export function claimWaitersOf(bus: EventBus): ClaimWaiters {
  let waiters = registries.get(bus);
  if (!waiters) {
    waiters = new ClaimWaiters(bus);
    registries.set(bus, waiters);
  }
  return waiters;
}

export interface WaitOptions extends ClaimOptions {
  /** How long to wait for a claimable task, 0 to MAX_CLAIM_WAIT_SECONDS * 1000 ms. 0: claim once. */
  waitMs?: number;
  /** Ends the wait early (the client went away): the last answer is returned. */
  signal?: AbortSignal | undefined;
  /**
   * Told once, right before the claim first waits for an event: a waiting claim does no database work, so
   * the request gives its place in the database budget back there. Default: nothing.
   */
  beforeWait?: () => void;
}

/**
 * claimNextTask, waiting up to `waitMs` for a claimable task when there is none: the claim is tried again
 * when an event says the role may have one (see ClaimWaiters), never on a timer. The waiter is registered
 * before the first attempt, so a task queued between that attempt's transaction and the wait is not
 * missed. Answers the claim, or the last attempt's reason once the deadline passes or `signal` aborts.
 */
export async function claimNextTaskWaiting(
  context: Actor,
  bus: EventBus,
  rawRole: string,
  { waitMs = 0, signal, beforeWait = () => {}, ...options }: WaitOptions = {},
): Promise<ClaimResult> {
  if (waitMs <= 0 || signal?.aborted) return claimNextTask(context, rawRole, options);
  const role = normalizeRole(rawRole);
  let release: (() => void) | undefined;
  let ended = false;
  const waiter: Waiter = {
    outcome: 'queue_empty',
    woken: false,
    wake() {
      waiter.woken = true;
      release?.();
    },
  };
  const end = () => {
    ended = true;
    release?.();
  };
  const timer = setTimeout(end, waitMs);
  signal?.addEventListener('abort', end, { once: true });
  const remove = claimWaitersOf(bus).add(context.viewer.tenantId, role, waiter);
  try {
    for (;;) {
      waiter.woken = false;
      const result = await claimNextTask(context, role, options);
      if (result.outcome === 'claimed' || ended) return result;
      waiter.outcome = result.outcome;
      if (!waiter.woken) {
        beforeWait();
        await new Promise<void>((resolve) => {
          release = resolve;
          if (ended || waiter.woken) resolve();
        });
        release = undefined;
      }
      if (ended) return result;
    }
  } finally {
    remove();
    clearTimeout(timer);
    signal?.removeEventListener('abort', end);
  }
}
