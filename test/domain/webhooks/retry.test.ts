import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY, retryDelayMs } from '../../../src/domain/webhooks/retry.js';

describe('retryDelayMs', () => {
  it('doubles from 5 s and caps at 1 h, drawing from the upper half of each step', () => {
    const lowest = (attempts: number) => retryDelayMs(DEFAULT_RETRY_POLICY, attempts, () => 0);
    const highest = (attempts: number) => retryDelayMs(DEFAULT_RETRY_POLICY, attempts, () => 1);
    expect([1, 2, 3, 4].map(highest)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect([1, 2, 3, 4].map(lowest)).toEqual([2_500, 5_000, 10_000, 20_000]);
    expect(highest(12)).toBe(3_600_000);
    expect(lowest(60)).toBe(1_800_000);
  });

  it('reaches the 24 h disable threshold after about 40 attempts', () => {
    let elapsed = 0;
    let attempts = 0;
    while (elapsed < DEFAULT_RETRY_POLICY.disableAfterMs) {
      attempts += 1;
      elapsed += retryDelayMs(DEFAULT_RETRY_POLICY, attempts, () => 0.5);
    }
    expect(attempts).toBeGreaterThan(30);
    expect(attempts).toBeLessThan(50);
  });
});
