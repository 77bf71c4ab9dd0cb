import { describe, expect, it } from 'vitest';
import { planEvents, type StoredSubject } from '../../../src/domain/experiments/event-plan.js';
import { assignVariant } from '../../../src/domain/experiments/index.js';

const TEST = 'test-1';
const variants = [
  { id: 'a', weight: 1 },
  { id: 'b', weight: 1 },
];
const nothingStored = new Map<string, StoredSubject>();
const otherThan = (id: string) => (id === 'a' ? 'b' : 'a');

describe('planEvents', () => {
  it('assigns a new subject by the sticky rule when the event names no variant', () => {
    const plan = planEvents(TEST, variants, nothingStored, [{ subjectId: 's1' }]);
    expect(plan.inserts).toEqual([
      { subjectId: 's1', variantId: assignVariant(TEST, 's1', variants), converted: false },
    ]);
  });

  it('assigns a new subject to the variant the event names', () => {
    const hashed = assignVariant(TEST, 's1', variants);
    const plan = planEvents(TEST, variants, nothingStored, [
      { subjectId: 's1', variantId: otherThan(hashed) },
    ]);
    expect(plan.inserts[0]?.variantId).toBe(otherThan(hashed));
  });

  it('counts a repeated subject of one batch once as an observation and once as a success', () => {
    const plan = planEvents(TEST, variants, nothingStored, [
      { subjectId: 's1', variantId: 'a' },
      { subjectId: 's1', variantId: 'a', converted: true },
      { subjectId: 's1', converted: true },
    ]);
    expect(plan.inserts).toEqual([{ subjectId: 's1', variantId: 'a', converted: true }]);
    expect(plan.outcomes).toEqual(['new_observation', 'new_success', 'repeat']);
  });

  it('converts a stored subject that has not converted yet', () => {
    const stored = new Map([['s1', { variantId: 'a', converted: false }]]);
    const plan = planEvents(TEST, variants, stored, [{ subjectId: 's1', converted: true }]);
    expect([plan.inserts, plan.conversions, plan.outcomes]).toEqual([[], ['s1'], ['new_success']]);
  });

  it('reports a stored, converted subject as a repeat', () => {
    const stored = new Map([['s1', { variantId: 'a', converted: true }]]);
    const plan = planEvents(TEST, variants, stored, [{ subjectId: 's1', converted: true }]);
    expect([plan.conversions, plan.outcomes]).toEqual([[], ['repeat']]);
  });

  it('keeps the first assignment and ignores an event naming another variant', () => {
    const stored = new Map([['s1', { variantId: 'a', converted: false }]]);
    const plan = planEvents(TEST, variants, stored, [{ subjectId: 's1', variantId: 'b', converted: true }]);
    expect([plan.inserts, plan.conversions, plan.outcomes]).toEqual([[], [], ['variant_mismatch']]);
  });

  it('keeps the assignment made earlier in the same batch over a later contradicting event', () => {
    const plan = planEvents(TEST, variants, nothingStored, [
      { subjectId: 's1', variantId: 'a' },
      { subjectId: 's1', variantId: 'b', converted: true },
    ]);
    expect(plan.inserts).toEqual([{ subjectId: 's1', variantId: 'a', converted: false }]);
    expect(plan.outcomes).toEqual(['new_observation', 'variant_mismatch']);
  });

  it('lets an event without a variant follow the stored assignment even where the sticky rule differs', () => {
    const hashed = assignVariant(TEST, 's1', variants);
    const stored = new Map([['s1', { variantId: otherThan(hashed), converted: false }]]);
    const plan = planEvents(TEST, variants, stored, [{ subjectId: 's1', converted: true }]);
    expect(plan.outcomes).toEqual(['new_success']);
  });
});
