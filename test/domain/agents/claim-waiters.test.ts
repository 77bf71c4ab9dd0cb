import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ClaimWaiters, type Waiter } from '../../../src/domain/agents/claim-wait.js';
import type { ClaimOutcome } from '../../../src/domain/agents/queue.js';
import { createEventBus, type EventBus } from '../../../src/events/bus.js';
import type { EventType } from '../../../src/events/topics.js';

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

function waiter(outcome: ClaimOutcome = 'queue_empty') {
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
