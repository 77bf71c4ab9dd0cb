import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { BudgetState } from '../../../src/domain/agents/budgets.js';
import { ClaimWaiters, type Waiter } from '../../../src/domain/agents/claim-wait.js';
import type { ClaimOutcome, ClaimResult } from '../../../src/domain/agents/queue.js';
import { createEventBus, type EventBus } from '../../../src/events/bus.js';
import type { GapListener } from '../../../src/events/fanout.js';
import type { BusEvent, EventType } from '../../../src/events/topics.js';
import type { Task } from '../../../src/generated/prisma/client.js';

let bus: EventBus;
let listeners = 0;

beforeAll(async () => {
  const inner = await createEventBus();
  // The in-process bus, counting the listeners registered on it.
  bus = {
    ...inner,
    listen(types, tenantId, listener, onGap) {
      listeners += 1;
      const stop = inner.listen(types, tenantId, listener, onGap);
      return () => {
        listeners -= 1;
        stop();
      };
    },
  };
});
afterAll(() => bus.close());

function waiter(outcome: ClaimOutcome | null = 'queue_empty') {
  const entry: Waiter & { wakes: number } = {
    outcome,
    woken: false,
    wakes: 0,
    wake() {
      entry.woken = true;
      entry.wakes += 1;
    },
  };
  return entry;
}

const publish = (type: EventType, tenantId: string, payload: Record<string, unknown>) =>
  bus.publish({ eventId: randomUUID(), type, tenantId, payload });

describe('ClaimWaiters', () => {
  it('holds 1,000 waiters of a tenant on one bus listener, and lets it go with the last', () => {
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const removals = Array.from({ length: 1000 }, () => registry.add(tenantId, 'cfo', waiter()));

    expect(registry.size).toBe(1000);
    expect(listeners).toBe(1);
    for (const remove of removals) remove();
    expect(registry.size).toBe(0);
    expect(listeners).toBe(0);
  });

  it('a task becoming pending wakes one waiter of its role that found the queue empty', async () => {
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const paused = waiter('role_paused');
    const waiters = [waiter(), waiter(), waiter()];
    const other = waiter();
    const removals = [paused, ...waiters].map((entry) => registry.add(tenantId, 'cfo', entry));
    removals.push(registry.add(tenantId, 'cto', other));

    await publish('TASK_UPDATED', tenantId, { role: 'cfo', status: 'pending' });
    await vi.waitFor(() => expect(waiters[0]?.wakes).toBe(1));
    await publish('TASK_UPDATED', tenantId, { role: 'cfo', status: 'pending' });
    await vi.waitFor(() => expect(waiters[1]?.wakes).toBe(1));
    // Another tenant's event, then a running task: neither wakes anyone; a resume wakes every waiter.
    await publish('TASK_UPDATED', randomUUID(), { role: 'cfo', status: 'pending' });
    await publish('TASK_UPDATED', tenantId, { role: 'cfo', status: 'running' });
    await publish('DOGFOOD_AGENT_RESUMED', tenantId, { role: 'cfo' });
    await vi.waitFor(() => expect(paused.wakes).toBe(1));

    expect(waiters.map((entry) => entry.wakes)).toEqual([2, 2, 1]);
    expect(other.wakes).toBe(0);
    for (const remove of removals) remove();
  });

  it('a budget change wakes the waiters it turned away: the tenant’s of every role, a role’s of its role', async () => {
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const cfoByRole = waiter('role_budget_exhausted');
    const cfoByTenant = waiter('tenant_budget_exhausted');
    const ctoByRole = waiter('role_budget_exhausted');
    const ctoByTenant = waiter('tenant_budget_exhausted');
    const empty = waiter();
    const removals = [
      registry.add(tenantId, 'cfo', cfoByRole),
      registry.add(tenantId, 'cfo', cfoByTenant),
      registry.add(tenantId, 'cto', ctoByRole),
      registry.add(tenantId, 'cto', ctoByTenant),
      registry.add(tenantId, 'cto', empty),
    ];

    await publish('BUDGET_CHANGED', tenantId, { role: 'cfo' });
    await vi.waitFor(() => expect(cfoByRole.wakes).toBe(1));
    await publish('BUDGET_CHANGED', tenantId, { role: null });
    await vi.waitFor(() => expect(ctoByTenant.wakes).toBe(1));

    expect([cfoByRole, cfoByTenant, ctoByRole, ctoByTenant, empty].map((entry) => entry.wakes)).toEqual([
      1, 1, 0, 1, 0,
    ]);
    for (const remove of removals) remove();
  });

  it('a task leaving running frees budgets: its role’s waiters, and the tenant’s waiters of every role', async () => {
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const cfoByRole = waiter('role_budget_exhausted');
    const ctoByRole = waiter('role_budget_exhausted');
    const ctoByTenant = waiter('tenant_budget_exhausted');
    const removals = [
      registry.add(tenantId, 'cfo', cfoByRole),
      registry.add(tenantId, 'cto', ctoByRole),
      registry.add(tenantId, 'cto', ctoByTenant),
    ];

    // A release (pending again), a request for a decision: each gives the task's reservation back.
    await publish('TASK_UPDATED', tenantId, { role: 'cfo', status: 'pending' });
    await vi.waitFor(() => expect(ctoByTenant.wakes).toBe(1));
    await publish('TASK_UPDATED', tenantId, { role: 'cfo', status: 'awaiting_approval' });
    await vi.waitFor(() => expect(ctoByTenant.wakes).toBe(2));

    expect([cfoByRole.wakes, ctoByRole.wakes]).toEqual([2, 0]);
    for (const remove of removals) remove();
  });

  it('a task of the role ending wakes the waiters a budget turned away', async () => {
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const budget = waiter('role_budget_exhausted');
    const empty = waiter();
    const removals = [registry.add(tenantId, 'cfo', budget), registry.add(tenantId, 'cfo', empty)];

    await publish('TASK_UPDATED', tenantId, { role: 'cfo', status: 'completed' });
    await vi.waitFor(() => expect(budget.wakes).toBe(1));

    expect(empty.wakes).toBe(0);
    for (const remove of removals) remove();
  });
});

/** A bus that hands events (and gaps) to the listeners at once, in the caller's turn. */
function syncBus() {
  const listeners = new Set<{ tenantId: string; listener: (event: BusEvent) => void; gap?: GapListener }>();
  const bus = {
    listen(
      _types: readonly EventType[],
      tenantId: string,
      listener: (event: BusEvent) => void,
      gap?: GapListener,
    ) {
      const entry = { tenantId, listener, gap };
      listeners.add(entry);
      return () => listeners.delete(entry);
    },
  } as unknown as EventBus;
  const emit = (tenantId: string, type: EventType, payload: Record<string, unknown>) => {
    for (const entry of listeners)
      if (entry.tenantId === tenantId) entry.listener({ eventId: randomUUID(), type, tenantId, payload });
  };
  return {
    bus,
    pending: (tenantId: string, role = 'cfo') => emit(tenantId, 'TASK_UPDATED', { role, status: 'pending' }),
    completed: (tenantId: string, role = 'cfo') =>
      emit(tenantId, 'TASK_UPDATED', { role, status: 'completed' }),
    gap: (tenantId: string) => {
      for (const entry of listeners) if (entry.tenantId === tenantId) entry.gap?.(() => false);
    },
  };
}

const answerOf = (outcome: ClaimOutcome, periodEnd?: Date): ClaimResult => ({
  outcome,
  task: outcome === 'claimed' ? ({ id: randomUUID() } as Task) : null,
  budget: periodEnd ? ({ periodEnd } as BudgetState) : null,
  routing: null,
});

/** Claim attempts the test answers one by one, in the order they began. */
function attempts() {
  const begun: { answer(outcome: ClaimOutcome): void }[] = [];
  return {
    begun,
    run: () =>
      new Promise<ClaimResult>((resolve) => {
        begun.push({ answer: (outcome) => resolve(answerOf(outcome)) });
      }),
    /** The attempt numbered `index` (from 0), once it began. */
    async nth(index: number) {
      await vi.waitFor(() => expect(begun.length).toBeGreaterThan(index));
      return begun[index] as { answer(outcome: ClaimOutcome): void };
    },
  };
}

describe('ClaimWaiters.answer', () => {
  it('claims that start waiting while an attempt is in flight take its answer: one attempt for 1,000', async () => {
    const { bus } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const db = attempts();
    const claims = Array.from({ length: 1000 }, () => waiter(null));
    const answers = claims.map((claim) => {
      registry.add(tenantId, 'cfo', claim);
      return registry.answer(tenantId, 'cfo', claim, db.run);
    });

    (await db.nth(0)).answer('queue_empty');
    const outcomes = await Promise.all(answers);

    expect(outcomes.every((outcome) => outcome.outcome === 'queue_empty')).toBe(true);
    expect(db.begun).toHaveLength(1);
    expect(registry.attempts).toBe(1);
    expect(registry.waiting).toBe(1000);
    // One more, later, takes the answer the others wait with.
    const late = waiter(null);
    registry.add(tenantId, 'cfo', late);
    expect((await registry.answer(tenantId, 'cfo', late, db.run)).outcome).toBe('queue_empty');
    expect(db.begun).toHaveLength(1);
  });

  it('a claim that starts waiting after a task became pending does not take the answer from before it', async () => {
    const { bus, pending } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const db = attempts();
    const first = waiter(null);
    registry.add(tenantId, 'cfo', first);
    const answered = registry.answer(tenantId, 'cfo', first, db.run);
    (await db.nth(0)).answer('queue_empty');
    await answered;

    // A chat commits; its event wakes the waiting claim; then another claim starts waiting.
    pending(tenantId);
    expect(first.woken).toBe(true);
    const second = waiter(null);
    registry.add(tenantId, 'cfo', second);
    const secondAnswer = registry.answer(tenantId, 'cfo', second, db.run);
    const firstAgain = registry.answer(tenantId, 'cfo', first, db.run);

    // An attempt after the event finds the task; the queue may hold more, so the other claim tries too.
    (await db.nth(1)).answer('claimed');
    (await db.nth(2)).answer('queue_empty');
    const outcomes = await Promise.all([secondAnswer, firstAgain]);
    expect(outcomes.map((outcome) => outcome.outcome).sort()).toEqual(['claimed', 'queue_empty']);
    expect(db.begun).toHaveLength(3);
  });

  it('a task that becomes pending during an attempt makes that answer stale', async () => {
    const { bus, pending } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const db = attempts();
    const first = waiter(null);
    registry.add(tenantId, 'cfo', first);
    const answered = registry.answer(tenantId, 'cfo', first, db.run);
    const attempt = await db.nth(0);
    // Registered while the attempt is in flight: it waits for that attempt.
    const second = waiter(null);
    registry.add(tenantId, 'cfo', second);
    const secondAnswer = registry.answer(tenantId, 'cfo', second, db.run);

    pending(tenantId);
    attempt.answer('queue_empty');

    // The attempt began before the task was committed: the claim it woke tries again, and so does the claim
    // that waited for it (the event came after it registered, but the attempt began before).
    expect((await answered).outcome).toBe('queue_empty');
    expect(first.woken).toBe(true);
    const firstAgain = registry.answer(tenantId, 'cfo', first, db.run);
    (await db.nth(1)).answer('claimed');
    (await db.nth(2)).answer('queue_empty');
    const outcomes = await Promise.all([secondAnswer, firstAgain]);
    expect(outcomes.map((outcome) => outcome.outcome).sort()).toEqual(['claimed', 'queue_empty']);
  });

  it('a task that becomes pending after the claims took their answer wakes one of them', async () => {
    const { bus, pending } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const db = attempts();
    const claims = [waiter(null), waiter(null), waiter(null)];
    const answers = claims.map((claim) => {
      registry.add(tenantId, 'cfo', claim);
      return registry.answer(tenantId, 'cfo', claim, db.run);
    });
    (await db.nth(0)).answer('queue_empty');
    await Promise.all(answers);

    pending(tenantId);

    expect(claims.map((claim) => claim.wakes)).toEqual([1, 0, 0]);
    expect(registry.waiting).toBe(2);
    // The woken claim does not take the answer the others wait with (it began before the task): it tries.
    const again = registry.answer(tenantId, 'cfo', claims[0] as Waiter, db.run);
    (await db.nth(1)).answer('claimed');
    expect((await again).outcome).toBe('claimed');
  });

  it('a claim that leaves without using its wake-up hands it to another', async () => {
    const { bus, pending } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const db = attempts();
    // `a` tries; a task's event wakes it while it does, but it claims an older task and leaves.
    const a = waiter(null);
    const removeA = registry.add(tenantId, 'cfo', a);
    const aAnswer = registry.answer(tenantId, 'cfo', a, db.run);
    const b = waiter(null);
    registry.add(tenantId, 'cfo', b);
    const bAnswer = registry.answer(tenantId, 'cfo', b, db.run);
    pending(tenantId);
    expect([a.wakes, b.wakes]).toEqual([1, 0]);
    (await db.nth(0)).answer('claimed');
    expect((await aAnswer).outcome).toBe('claimed');
    expect(a.woken).toBe(true);
    // `b`, waiting for that attempt, tries on its own (the queue may hold more)...
    const bAttempt = await db.nth(1);

    removeA();

    // ...and gets the unused wake-up: the answer it is getting began before it, so it tries again.
    expect(b.wakes).toBe(1);
    bAttempt.answer('queue_empty');
    await bAnswer;
    expect(b.woken).toBe(true);
    const bAgain = registry.answer(tenantId, 'cfo', b, db.run);
    (await db.nth(2)).answer('queue_empty');
    await bAgain;
    expect(b.woken).toBe(false);

    // A claim woken whose wait ends before it tries again hands its wake-up on as well.
    const c = waiter(null);
    const removeC = registry.add(tenantId, 'cfo', c);
    await registry.answer(tenantId, 'cfo', c, db.run);
    const d = waiter(null);
    registry.add(tenantId, 'cfo', d);
    await registry.answer(tenantId, 'cfo', d, db.run);
    pending(tenantId);
    pending(tenantId);
    expect([b.wakes, c.wakes, d.wakes]).toEqual([2, 1, 0]);

    removeC();

    expect(d.wakes).toBe(1);
    expect(db.begun).toHaveLength(3);
  });

  it('a task ending during an attempt that a budget refused makes the claim try again', async () => {
    const { bus, completed } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const db = attempts();
    const refused = waiter(null);
    const empty = waiter(null);
    registry.add(tenantId, 'cfo', refused);
    registry.add(tenantId, 'cto', empty);
    const refusedAnswer = registry.answer(tenantId, 'cfo', refused, db.run);
    const refusedAttempt = await db.nth(0);
    const emptyAnswer = registry.answer(tenantId, 'cto', empty, db.run);
    const emptyAttempt = await db.nth(1);

    completed(tenantId, 'cfo');
    completed(tenantId, 'cto');
    refusedAttempt.answer('role_budget_exhausted');
    emptyAttempt.answer('queue_empty');

    expect((await refusedAnswer).outcome).toBe('role_budget_exhausted');
    expect((await emptyAnswer).outcome).toBe('queue_empty');
    expect(refused.woken).toBe(true);
    expect(empty.woken).toBe(false);
    expect(refused.wakes + empty.wakes).toBe(0);
  });

  it('a budget’s refusal wakes its claim when the budget’s period ends', async () => {
    vi.useFakeTimers();
    try {
      const { bus } = syncBus();
      const registry = new ClaimWaiters(bus);
      const tenantId = randomUUID();
      const refused = waiter(null);
      const empty = waiter(null);
      const removals = [registry.add(tenantId, 'cfo', refused), registry.add(tenantId, 'cto', empty)];
      const periodEnd = new Date(Date.now() + 5000);
      await registry.answer(tenantId, 'cfo', refused, async () =>
        answerOf('tenant_budget_exhausted', periodEnd),
      );
      await registry.answer(tenantId, 'cto', empty, async () => answerOf('queue_empty'));

      await vi.advanceTimersByTimeAsync(4999);
      expect(refused.wakes).toBe(0);
      await vi.advanceTimersByTimeAsync(100);
      expect(refused.wakes).toBe(1);
      expect(empty.wakes).toBe(0);

      // Refused again in the same period (the database's clock is behind): it checks again a second later.
      const again = registry.answer(tenantId, 'cfo', refused, async () =>
        answerOf('tenant_budget_exhausted', periodEnd),
      );
      await again;
      await vi.advanceTimersByTimeAsync(999);
      expect(refused.wakes).toBe(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(refused.wakes).toBe(2);
      for (const remove of removals) remove();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a period that ends after the longest wait arms nothing', async () => {
    vi.useFakeTimers();
    try {
      const { bus } = syncBus();
      const registry = new ClaimWaiters(bus);
      const tenantId = randomUUID();
      const refused = waiter(null);
      const remove = registry.add(tenantId, 'cfo', refused);
      const nextMonth = new Date(Date.now() + 30 * 24 * 3600 * 1000);

      await registry.answer(tenantId, 'cfo', refused, async () =>
        answerOf('role_budget_exhausted', nextMonth),
      );

      expect(vi.getTimerCount()).toBe(0);
      remove();
    } finally {
      vi.useRealTimers();
    }
  });

  it('only queue_empty stands for a claim that registers later: a budget refusal is tried again', async () => {
    const { bus } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const db = attempts();
    const first = waiter(null);
    registry.add(tenantId, 'cfo', first);
    const answered = registry.answer(tenantId, 'cfo', first, db.run);
    (await db.nth(0)).answer('tenant_budget_exhausted');
    await answered;

    const later = waiter(null);
    registry.add(tenantId, 'cfo', later);
    const laterAnswer = registry.answer(tenantId, 'cfo', later, db.run);
    (await db.nth(1)).answer('tenant_budget_exhausted');

    expect((await laterAnswer).outcome).toBe('tenant_budget_exhausted');
    expect(db.begun).toHaveLength(2);
  });

  it('a gap in the bus wakes every waiter of the tenant, and no answer from before it stands', async () => {
    const { bus, gap } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const db = attempts();
    const claims = [waiter(null), waiter(null)];
    const answers = claims.map((claim) => {
      registry.add(tenantId, 'cfo', claim);
      return registry.answer(tenantId, 'cfo', claim, db.run);
    });
    (await db.nth(0)).answer('queue_empty');
    await Promise.all(answers);

    gap(tenantId);

    expect(claims.map((claim) => claim.wakes)).toEqual([1, 1]);
    const again = claims.map((claim) => registry.answer(tenantId, 'cfo', claim, db.run));
    (await db.nth(1)).answer('queue_empty');
    await Promise.all(again);
    expect(db.begun).toHaveLength(2);
    expect(registry.waiting).toBe(2);
  });

  it('an attempt that fails fails the claims that waited for it, not one after another', async () => {
    const { bus } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    let runs = 0;
    let fail: (error: Error) => void = () => {};
    const run = () => {
      runs += 1;
      return new Promise<ClaimResult>((_resolve, reject) => {
        fail = reject;
      });
    };
    const claims = Array.from({ length: 3 }, () => waiter(null));
    const answers = claims.map((claim) => {
      registry.add(tenantId, 'cfo', claim);
      return registry.answer(tenantId, 'cfo', claim, run).catch((error: Error) => error.message);
    });

    fail(new Error('database unavailable'));

    expect(await Promise.all(answers)).toEqual(claims.map(() => 'database unavailable'));
    expect(runs).toBe(1);
  });

  it('while the last attempt claimed, a few attempts run at once', async () => {
    const { bus } = syncBus();
    const registry = new ClaimWaiters(bus);
    const tenantId = randomUUID();
    const db = attempts();
    const first = waiter(null);
    registry.add(tenantId, 'cfo', first);
    const answered = registry.answer(tenantId, 'cfo', first, db.run);
    (await db.nth(0)).answer('claimed');
    await answered;

    const claims = Array.from({ length: 6 }, () => waiter(null));
    const answers = claims.map((claim) => {
      registry.add(tenantId, 'cfo', claim);
      return registry.answer(tenantId, 'cfo', claim, db.run);
    });
    await db.nth(4);
    await new Promise((resolve) => setImmediate(resolve));
    // Four at once; the other two wait for one of them.
    expect(db.begun).toHaveLength(5);
    for (let index = 1; index <= 4; index += 1) (await db.nth(index)).answer('claimed');
    (await db.nth(5)).answer('queue_empty');
    (await db.nth(6)).answer('queue_empty');
    const outcomes = (await Promise.all(answers)).map((answer) => answer.outcome);
    expect(outcomes.filter((outcome) => outcome === 'claimed')).toHaveLength(4);
    expect(db.begun).toHaveLength(7);
  });
});
