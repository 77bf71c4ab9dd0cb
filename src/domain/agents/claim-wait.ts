import type { EventBus } from '../../events/bus.js';
import type { BusEvent } from '../../events/topics.js';
import type { Actor } from '../actor.js';
import { type ClaimOptions, type ClaimOutcome, type ClaimResult, claimNextTask } from './queue.js';
import { requireWorksFor } from './role-binding.js';
import { normalizeRole } from './roles.js';

/** Longest wait a claim may ask for, in seconds. */
export const MAX_CLAIM_WAIT_SECONDS = 30;

/** A claim waiting for work. */
export interface Waiter {
  /**
   * What its answer said, which tells what kind of change may give it a task; null while it has none (its
   * first answer, or a newer one after a wake-up, is on its way), when every waking event concerns it.
   */
  outcome: ClaimOutcome | null;
  /** Woken since its answer began: it needs a newer one. */
  woken: boolean;
  wake(): void;
}

/** A claim's answer, with the number (per role and instance) of the attempt that gave it. */
interface Answer {
  result: ClaimResult;
  attempt: number;
}

/** The refusals of a claim by a budget, which a change of that budget may end. */
type BudgetRefusal = 'role_budget_exhausted' | 'tenant_budget_exhausted';
const BUDGET_REFUSALS: readonly BudgetRefusal[] = ['role_budget_exhausted', 'tenant_budget_exhausted'];

interface Entry {
  /** Its answer; undefined while it gets one. */
  answer: Answer | undefined;
  /** Attempts of the role begun when it registered or was last woken: any later one answers it. */
  since: number;
  /** Whether it was woken since it registered. */
  wokenOnce: boolean;
  /**
   * By refusal: attempts begun when a budget that gives such a refusal last got room while it got an answer
   * (a task ended, a limit was raised); -1 when none did.
   */
  freedAt: Record<BudgetRefusal, number>;
}

/**
 * How an attempt ended, for the claims that waited for it: those waiting for one that failed (an unknown
 * role, the database unavailable) fail with it rather than each trying in turn.
 */
type Ended = { failed: false } | { failed: true; error: unknown };

const refusedByBudget = (outcome: ClaimOutcome | null): outcome is BudgetRefusal =>
  outcome === 'role_budget_exhausted' || outcome === 'tenant_budget_exhausted';

/**
 * How far ahead the end of a refusing budget's period arms a wake-up: the longest wait, and a little more
 * (the claims waiting now end before it; an answer given later arms it again).
 */
const PERIOD_WATCH_MS = (MAX_CLAIM_WAIT_SECONDS + 5) * 1000;
/** After the end of a period: the claim's database decides when it ended, on its own clock. */
const PERIOD_END_MARGIN_MS = 20;
/** When a claim woken at a period's end was refused again in that period (the database's clock is behind). */
const PERIOD_RECHECK_MS = 1000;

/**
 * Attempts of one role an instance's waiting claims make at once while the role's last attempt claimed a
 * task (the queue may hold more); one while it claimed nothing.
 */
const ATTEMPTS_WHILE_CLAIMING = 4;

/** The waiters of one tenant's role on this instance, and their attempts. */
class RoleWaiters {
  readonly entries = new Map<Waiter, Entry>();
  /** Attempts begun, which numbers them. */
  begun = 0;
  /** Attempts in flight. */
  running = 0;
  /** Whether the last attempt to end claimed a task. */
  busy = false;
  /** The answer, other than a claim, of the latest attempt that gave one. */
  last: Answer | undefined;
  /** Told once when the next attempt ends: with its error when it failed. */
  private onSettle: ((ended: Ended) => void)[] = [];
  /** Wakes the waiters budgets refused when the refusing budget's period ends (see watchPeriod). */
  private periodTimer: NodeJS.Timeout | undefined;
  /** When periodTimer fires, and the end of the period it waits for. */
  private periodWake = { at: Number.POSITIVE_INFINITY, end: 0 };
  /** The end of the period the last periodTimer fired for. */
  private periodWoken = 0;

  add(waiter: Waiter): void {
    this.entries.set(waiter, {
      answer: undefined,
      since: this.begun,
      wokenOnce: false,
      freedAt: { role_budget_exhausted: -1, tenant_budget_exhausted: -1 },
    });
  }

  /** No waiter left: nothing more to wake. */
  close(): void {
    clearTimeout(this.periodTimer);
    this.periodTimer = undefined;
  }

  private wake(waiter: Waiter, entry: Entry): void {
    entry.since = this.begun;
    entry.wokenOnce = true;
    waiter.wake();
  }

  /** A task became pending: wakes the oldest waiter not already woken that may take it. */
  wakeOne(): void {
    for (const [waiter, entry] of this.entries) {
      if (waiter.woken || (waiter.outcome !== null && waiter.outcome !== 'queue_empty')) continue;
      this.wake(waiter, entry);
      return;
    }
  }

  wakeAll(): void {
    for (const [waiter, entry] of this.entries) this.wake(waiter, entry);
  }

  /**
   * A budget got room (a task released its reservation, a limit was raised, a period began): wakes the
   * waiters it may have turned away (`refusals`: the role's budget, the tenant's, or either), and marks
   * those getting an answer, which wake at once should it be such a refusal.
   */
  budgetFreed(refusals: readonly BudgetRefusal[] = BUDGET_REFUSALS): void {
    for (const [waiter, entry] of this.entries) {
      if (refusedByBudget(waiter.outcome) && refusals.includes(waiter.outcome)) this.wake(waiter, entry);
      else if (waiter.outcome === null) for (const refusal of refusals) entry.freedAt[refusal] = this.begun;
    }
  }

  /**
   * A budget's refusal ends with the budget's period, which no event announces: when that end comes
   * within the longest wait, a timer wakes the waiters budgets refused then (one timer per role, for the
   * earliest end). Waking early costs an attempt that is refused again; so that a database clock behind
   * this one does not make that a loop, a refusal in a period already woken for waits a second.
   */
  private watchPeriod(result: ClaimResult): void {
    const end = result.budget?.periodEnd.getTime();
    if (!refusedByBudget(result.outcome) || end === undefined) return;
    const now = Date.now();
    const at = end > this.periodWoken ? end + PERIOD_END_MARGIN_MS : now + PERIOD_RECHECK_MS;
    if (at - now > PERIOD_WATCH_MS || at >= this.periodWake.at) return;
    clearTimeout(this.periodTimer);
    this.periodWake = { at, end };
    this.periodTimer = setTimeout(
      () => {
        this.periodTimer = undefined;
        this.periodWoken = Math.max(this.periodWoken, this.periodWake.end);
        this.periodWake = { at: Number.POSITIVE_INFINITY, end: 0 };
        this.budgetFreed();
      },
      Math.max(0, at - now),
    );
    this.periodTimer.unref();
  }

  /**
   * Gives `waiter` `answer`, and leaves it woken when it was woken after the answer's attempt began (or,
   * for a budget's refusal, that budget got room meanwhile): it needs a newer answer.
   */
  take(waiter: Waiter, entry: Entry, answer: Answer): void {
    const { outcome } = answer.result;
    if (refusedByBudget(outcome) && entry.freedAt[outcome] >= answer.attempt) {
      entry.since = Math.max(entry.since, entry.freedAt[outcome]);
      entry.wokenOnce = true;
    }
    waiter.woken = entry.wokenOnce && entry.since >= answer.attempt;
    if (answer.result.outcome === 'claimed') return;
    entry.answer = answer;
    waiter.outcome = answer.result.outcome;
  }

  /** Whether another attempt may begin now. */
  mayAttempt(): boolean {
    return this.running < (this.busy ? ATTEMPTS_WHILE_CLAIMING : 1);
  }

  /**
   * An answer `entry` may take as its own, without an attempt: the latest attempt's answer when that
   * attempt began after `entry` registered or was last woken (what its own attempt would have told it); or
   * `queue_empty` from a waiter that has it and has not been woken since that answer's attempt began, when
   * `entry` was never woken or that attempt began after its wake-up. Since such a waiter has been there,
   * taking tasks, every task that became pending after its attempt's snapshot woke a waiter (one per task,
   * and one that may take it was always registered), so the answer still stands for `entry`, and what
   * changes it from now on wakes `entry` as well. Only `queue_empty` stands this way: a budget's refusal
   * also ends with its period, which no event announces (watchPeriod wakes only the claims it refused).
   */
  standing(entry: Entry): Answer | undefined {
    if (this.last && this.last.attempt > entry.since) return this.last;
    for (const [waiter, other] of this.entries) {
      const answer = other.answer;
      if (other === entry || waiter.woken || answer?.result.outcome !== 'queue_empty') continue;
      if (!entry.wokenOnce || answer.attempt > entry.since) return answer;
    }
    return undefined;
  }

  /** Resolves when the next attempt in flight ends and its claim has taken its answer. */
  settled(): Promise<Ended> {
    return new Promise((resolve) => this.onSettle.push(resolve));
  }

  /** Makes an attempt for `waiter`, which takes its answer before the claims waiting for it look. */
  async attempt(waiter: Waiter, entry: Entry, run: () => Promise<ClaimResult>): Promise<ClaimResult> {
    const attempt = ++this.begun;
    this.running += 1;
    let ended: Ended = { failed: false };
    try {
      const answer = { result: await run(), attempt };
      this.watchPeriod(answer.result);
      this.busy = answer.result.outcome === 'claimed';
      if (!this.busy && attempt > (this.last?.attempt ?? 0)) this.last = answer;
      this.take(waiter, entry, answer);
      return answer.result;
    } catch (error) {
      ended = { failed: true, error };
      throw error;
    } finally {
      this.running -= 1;
      const settled = this.onSettle;
      this.onSettle = [];
      for (const resolve of settled) resolve(ended);
    }
  }
}

/** The events that can make a role's task claimable. */
const WAKING_TYPES = ['TASK_UPDATED', 'DOGFOOD_AGENT_RESUMED', 'BUDGET_CHANGED'] as const;

export interface AnswerOptions {
  /** Told before the claim waits for another claim's attempt. */
  beforeQueue?: () => void;
  /** The claim's answer so far: answered when `stop()` says so while it waits for another's attempt. */
  previous?: ClaimResult;
  stop?: () => boolean;
}

/**
 * The claims waiting on this instance, by tenant and role, woken by the bus's events (which the outbox
 * relay publishes after the commit, to every instance). One bus listener per tenant with waiters; an idle
 * waiter is a promise, a deadline timer and an entry in a map: nothing runs until an event arrives.
 *
 * A task becoming `pending` wakes the role's oldest waiter whose answer was `queue_empty` (or that is
 * getting one), one per event, so a thousand waiters do not race for one task; if that waiter finds
 * nothing (another instance or a claimer that did not wait took it) it waits again, and one that leaves
 * without using its wake-up (it claimed another task, its wait ended) hands it on. A resume of the role
 * wakes every waiter its pause turned away. A budget getting room wakes the waiters that budget turned
 * away: a task leaving `running` (its reservation released on its role's budget and the tenant's, which
 * binds every role), BUDGET_CHANGED (the chairman set a limit, an estimate or a period), and the end of
 * the refusing budget's period, the one change no commit announces (RoleWaiters.watchPeriod, a timer). A
 * gap in the bus's events (Redis subscribed again) wakes every waiter of the tenant.
 *
 * A claim gets its answers through `answer`: one that stands (RoleWaiters.standing) costs no database
 * work, and while the role's last attempt claimed nothing a claim makes its own attempt only after the
 * one in flight, so a thousand agents that start waiting at once cost one transaction, not a thousand in
 * front of the database (PGlite runs one at a time). A lease that lapses meanwhile is no event: the lease
 * sweeper returns the task to the queue, which wakes a waiter.
 */
export class ClaimWaiters {
  private readonly byTenant = new Map<string, { roles: Map<string, RoleWaiters>; stop: () => void }>();
  /** Attempts (claimNextTask transactions) the waiting claims of this instance made. */
  attempts = 0;

  constructor(private readonly bus: EventBus) {}

  /** Waiters registered now (all tenants). */
  get size(): number {
    let size = 0;
    for (const tenant of this.byTenant.values())
      for (const role of tenant.roles.values()) size += role.entries.size;
    return size;
  }

  /** Registered waiters that wait with an answer, not woken since (all tenants). */
  get waiting(): number {
    let waiting = 0;
    for (const tenant of this.byTenant.values())
      for (const role of tenant.roles.values())
        for (const [waiter, entry] of role.entries) if (entry.answer && !waiter.woken) waiting += 1;
    return waiting;
  }

  /** Registers a waiter for events dispatched from now on; returns the function that removes it. */
  add(tenantId: string, role: string, waiter: Waiter): () => void {
    let tenant = this.byTenant.get(tenantId);
    if (!tenant) {
      const roles = new Map<string, RoleWaiters>();
      const stop = this.bus.listen(
        WAKING_TYPES,
        tenantId,
        (event) => this.dispatch(roles, event),
        () => {
          for (const waiters of roles.values()) waiters.wakeAll();
        },
      );
      tenant = { roles, stop };
      this.byTenant.set(tenantId, tenant);
    }
    let waiters = tenant.roles.get(role);
    if (!waiters) {
      waiters = new RoleWaiters();
      tenant.roles.set(role, waiters);
    }
    waiters.add(waiter);
    return () => {
      const current = this.byTenant.get(tenantId);
      const entries = current?.roles.get(role);
      if (!current || !entries?.entries.delete(waiter)) return;
      // A wake-up it did not use goes to another waiter: the task it announced may still be pending.
      if (waiter.woken) entries.wakeOne();
      if (entries.entries.size > 0) return;
      entries.close();
      current.roles.delete(role);
      if (current.roles.size > 0) return;
      current.stop();
      this.byTenant.delete(tenantId);
    };
  }

  /**
   * A new answer for a registered waiter: one that stands, or else its own attempt (`run`), made once no
   * other attempt of the role is in flight (ATTEMPTS_WHILE_CLAIMING when the last one claimed). Leaves
   * `woken` set when the waiter was woken after the answer's attempt began.
   */
  async answer(
    tenantId: string,
    role: string,
    waiter: Waiter,
    run: () => Promise<ClaimResult>,
    { beforeQueue = () => {}, previous, stop = () => false }: AnswerOptions = {},
  ): Promise<ClaimResult> {
    const waiters = this.byTenant.get(tenantId)?.roles.get(role);
    const entry = waiters?.entries.get(waiter);
    if (!waiters || !entry) throw new Error('a claim asked for an answer without being registered');
    entry.answer = undefined;
    waiter.outcome = null;
    let answer = waiters.standing(entry);
    while (!answer) {
      if (waiters.mayAttempt()) {
        this.attempts += 1;
        return waiters.attempt(waiter, entry, run);
      }
      beforeQueue();
      const ended = await waiters.settled();
      if (previous && stop()) return previous;
      if (ended.failed) throw ended.error;
      answer = waiters.standing(entry);
    }
    waiters.take(waiter, entry, answer);
    return answer.result;
  }

  private dispatch(roles: Map<string, RoleWaiters>, event: BusEvent): void {
    const role = typeof event.payload.role === 'string' ? event.payload.role : null;
    if (event.type === 'BUDGET_CHANGED') {
      // The tenant's budget (no role) binds the claims of every role; a role's budget, that role's.
      if (role === null)
        for (const waiters of roles.values()) waiters.budgetFreed(['tenant_budget_exhausted']);
      else roles.get(role)?.budgetFreed(['role_budget_exhausted']);
      return;
    }
    if (role === null) return;
    const waiters = roles.get(role);
    if (event.type === 'DOGFOOD_AGENT_RESUMED') {
      waiters?.wakeAll();
      return;
    }
    const status = event.payload.status;
    if (status === 'pending') waiters?.wakeOne();
    if (status === 'running') return;
    // A task leaving `running` (completed, failed, awaiting a decision, or pending again: released, or its
    // lease lapsed) gave back what it reserved on its role's budget and on the tenant's, which binds every
    // role. A pending task that a chat queued reserved nothing; the event does not tell, so it wakes too.
    waiters?.budgetFreed();
    for (const [other, otherWaiters] of roles) {
      if (other !== role) otherWaiters.budgetFreed(['tenant_budget_exhausted']);
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
   * Told right before the claim first waits (for an event, or for another claim's attempt): a waiting
   * claim does no database work, so the request gives its place in the database budget back there.
   * Default: nothing.
   */
  beforeWait?: () => void;
}

/**
 * claimNextTask, waiting up to `waitMs` for a claimable task when there is none: the claim is tried again
 * when an event says the role may have one (see ClaimWaiters), never on a timer. The waiter is registered
 * before its first answer, so a task queued between that answer's transaction and the wait is not
 * missed. Answers the claim, or the last answer's reason once the deadline passes or `signal` aborts.
 */
export async function claimNextTaskWaiting(
  context: Actor,
  bus: EventBus,
  rawRole: string,
  { waitMs = 0, signal, beforeWait = () => {}, ...options }: WaitOptions = {},
): Promise<ClaimResult> {
  if (waitMs <= 0 || signal?.aborted) return claimNextTask(context, rawRole, options);
  const role = normalizeRole(rawRole);
  // Before it waits: its attempts answer the other claims waiting for the role too.
  requireWorksFor(context.viewer, role);
  const { tenantId } = context.viewer;
  const waiters = claimWaitersOf(bus);
  let release: (() => void) | undefined;
  let ended = false;
  const waiter: Waiter = {
    outcome: null,
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
  const remove = waiters.add(tenantId, role, waiter);
  const run = () => claimNextTask(context, role, options);
  try {
    let result = await waiters.answer(tenantId, role, waiter, run, { beforeQueue: beforeWait });
    for (;;) {
      if (result.outcome === 'claimed' || ended) return result;
      if (!waiter.woken) {
        beforeWait();
        await new Promise<void>((resolve) => {
          release = resolve;
          if (ended || waiter.woken) resolve();
        });
        release = undefined;
        if (ended) return result;
      }
      result = await waiters.answer(tenantId, role, waiter, run, {
        beforeQueue: beforeWait,
        previous: result,
        stop: () => ended,
      });
    }
  } finally {
    remove();
    clearTimeout(timer);
    signal?.removeEventListener('abort', end);
  }
}
