import { describe, expect, it } from 'vitest';
import { periodBounds } from '../../../src/domain/agents/budget-period.js';
import {
  admitsTask,
  budgetState,
  isExhausted,
  passedWarning,
  remainingUsd,
} from '../../../src/domain/agents/budgets.js';

const row = (
  changes: Partial<Parameters<typeof budgetState>[0]> = {},
): Parameters<typeof budgetState>[0] => ({
  id: 'b',
  tenant_id: 't',
  role: 'cfo',
  period: 'month',
  limit_usd: '10',
  limit_tokens: null,
  warning_threshold: '0.8',
  estimate_usd: '1',
  estimate_tokens: 0n,
  period_start: new Date('2026-11-01T00:00:00Z'),
  spent_usd: '8.5',
  spent_tokens: 900n,
  reserved_usd: '0.5',
  reserved_tokens: 0n,
  overshoot_usd: '0.25',
  warned_at: new Date('2026-11-20T10:00:00Z'),
  exhausted_at: null,
  updated_at: new Date('2026-11-20T10:00:00Z'),
  now: new Date('2026-11-25T12:00:00Z'),
  ...changes,
});

describe('periodBounds', () => {
  it('is the UTC day around an instant', () => {
    expect(periodBounds('day', new Date('2026-11-25T23:59:59.999Z'))).toEqual({
      start: new Date('2026-11-25T00:00:00Z'),
      end: new Date('2026-11-26T00:00:00Z'),
    });
  });

  it('is the UTC calendar month, across a year end and a leap February', () => {
    expect(periodBounds('month', new Date('2026-12-31T23:00:00Z'))).toEqual({
      start: new Date('2026-12-01T00:00:00Z'),
      end: new Date('2027-01-01T00:00:00Z'),
    });
    expect(periodBounds('month', new Date('2028-02-29T12:00:00Z')).end).toEqual(
      new Date('2028-03-01T00:00:00Z'),
    );
  });
});

describe('budgetState', () => {
  it('keeps the counters within the period', () => {
    const budget = budgetState(row(), new Date('2026-11-30T23:59:59Z'));

    expect(budget.spentUsd.toFixed()).toBe('8.5');
    expect(budget.periodEnd).toEqual(new Date('2026-12-01T00:00:00Z'));
    expect(remainingUsd(budget).toFixed()).toBe('1');
    expect(admitsTask(budget)).toBe(true);
    expect(passedWarning(budget)).toBe(true);
  });

  it('rolls over once the period ended: spent, overshoot and alerts reset, reservations stay', () => {
    const budget = budgetState(row(), new Date('2026-12-01T00:00:00Z'));

    expect(budget).toMatchObject({
      periodStart: new Date('2026-12-01T00:00:00Z'),
      periodEnd: new Date('2027-01-01T00:00:00Z'),
      spentTokens: 0n,
      warnedAt: null,
      exhaustedAt: null,
    });
    expect(budget.spentUsd.toFixed()).toBe('0');
    expect(budget.overshootUsd.toFixed()).toBe('0');
    expect(budget.reservedUsd.toFixed()).toBe('0.5');
  });

  it('never moves a period back when a clock lags behind the stored one', () => {
    const budget = budgetState(
      row({ period_start: new Date('2026-12-01T00:00:00Z') }),
      new Date('2026-11-30T23:59:59Z'),
    );

    expect(budget.periodStart).toEqual(new Date('2026-12-01T00:00:00Z'));
    expect(budget.spentUsd.toFixed()).toBe('8.5');
  });

  it('admits a task only while spent + reserved + estimate stays within the limit, exactly', () => {
    expect(admitsTask(budgetState(row({ spent_usd: '8.999999' }), new Date('2026-11-25T00:00:00Z')))).toBe(
      false,
    );
    expect(admitsTask(budgetState(row({ spent_usd: '8.5' }), new Date('2026-11-25T00:00:00Z')))).toBe(true);
    // 0.1 + 0.2 is not 0.3 in floating point; in decimals it is.
    const tight = budgetState(
      row({ limit_usd: '0.3', spent_usd: '0.1', reserved_usd: '0', estimate_usd: '0.2' }),
      new Date('2026-11-25T00:00:00Z'),
    );
    expect(admitsTask(tight)).toBe(true);
  });

  it('is exhausted when not one estimate fits beside what is spent, whatever is reserved', () => {
    const at = new Date('2026-11-25T00:00:00Z');
    expect(isExhausted(budgetState(row({ spent_usd: '9', reserved_usd: '5' }), at))).toBe(false);
    expect(isExhausted(budgetState(row({ spent_usd: '9.000001' }), at))).toBe(true);
    expect(isExhausted(budgetState(row({ limit_tokens: 1000n, estimate_tokens: 200n }), at))).toBe(true);
  });
});
