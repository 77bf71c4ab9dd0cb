import { describe, expect, it } from 'vitest';
import { ratio, type VitalsTotals, vitalsFrom } from '../../../src/domain/agents/vitals.js';

const periodEnd = new Date('2026-11-21T12:00:00.000Z');
const periodStart = new Date('2026-11-20T12:00:00.000Z');

const totals = (overrides: Partial<VitalsTotals> = {}): VitalsTotals => ({
  periodStart,
  periodEnd,
  completed: 0,
  failed: 0,
  avgSeconds: null,
  tokens: '0',
  cost: '0',
  accepted: 0,
  decided: 0,
  matched: 0,
  evaluated: 0,
  ...overrides,
});

describe('ratio', () => {
  it.each([
    { part: 0, whole: 0, expected: null },
    { part: 3, whole: 0, expected: null },
    { part: 0, whole: 4, expected: 0 },
    { part: 3, whole: 4, expected: 0.75 },
    { part: 4, whole: 4, expected: 1 },
  ])('answers $expected for $part / $whole', ({ part, whole, expected }) => {
    expect(ratio(part, whole)).toBe(expected);
  });
});

describe('vitalsFrom', () => {
  it('answers zeros and nulls for a period without activity', () => {
    expect(vitalsFrom('ceo', totals())).toEqual({
      agentRole: 'ceo',
      tasksCompleted: 0,
      tasksFailed: 0,
      avgExecutionTimeSeconds: null,
      acceptanceRate: null,
      outcomeAccuracy: null,
      tokensUsed: 0,
      costUsd: 0,
      periodStart,
      periodEnd,
    });
  });

  it('turns the decimal cost into a number and divides the rates', () => {
    const vitals = vitalsFrom(
      'cfo',
      totals({
        completed: 2,
        avgSeconds: 12.5,
        tokens: '300',
        cost: '1.234567',
        accepted: 1,
        decided: 4,
        matched: 2,
        evaluated: 3,
      }),
    );

    expect(vitals).toMatchObject({
      avgExecutionTimeSeconds: 12.5,
      costUsd: 1.234567,
      acceptanceRate: 0.25,
      outcomeAccuracy: 2 / 3,
    });
  });

  it('answers a null average when no task completed, whatever the database averaged', () => {
    expect(vitalsFrom('coo', totals({ failed: 3, avgSeconds: 0 })).avgExecutionTimeSeconds).toBeNull();
  });
});

describe('token sums', () => {
  it('carries a sum beyond 32 bits exactly', () => {
    expect(vitalsFrom('cmo', totals({ tokens: '6000000000' })).tokensUsed).toBe(6_000_000_000);
  });

  it('carries 2^53 - 1 exactly and saturates beyond it', () => {
    expect(vitalsFrom('cmo', totals({ tokens: '9007199254740991' })).tokensUsed).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    expect(vitalsFrom('cmo', totals({ tokens: '18014398509481982' })).tokensUsed).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });
});
