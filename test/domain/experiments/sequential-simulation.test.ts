import { describe, expect, it } from 'vitest';
import {
  type AbScenario,
  type CanaryScenario,
  simulateAbTest,
  simulateCanary,
  simulationError,
} from '../../../scripts/sequential-simulation.js';

// Seeded Monte Carlo runs, small enough for the unit suite; `npm run simulate:sequential` runs more and
// more scenarios. A rate "at most alpha within simulation error" is below alpha plus 2.33 standard errors
// of a rate of alpha (one-sided 99%).
const alpha = 0.05;
const atMostAlpha = (replications: number) => alpha + 2.33 * simulationError(alpha, replications);

describe('a test watched after every batch and stopped at its first decision', () => {
  const replications = 2_000;
  const noEffect: AbScenario = {
    name: 'no effect',
    rates: [0.1, 0.1],
    batch: [100, 100],
    looks: 50,
    alpha,
  };
  const run = simulateAbTest(noEffect, replications, 2026);

  it('is wrongly significant at most alpha of the time with the always-valid p-value', () => {
    expect(run.sequential.falsePositiveRate).toBeLessThanOrEqual(atMostAlpha(replications));
  });

  it('is wrongly significant far more than alpha of the time with the fixed-horizon z-test', () => {
    expect(run.fixedHorizonPeeking.falsePositiveRate).toBeGreaterThan(
      alpha + 10 * simulationError(alpha, replications),
    );
  });

  it('keeps the z-test at alpha when it is looked at once, so the excess comes from watching', () => {
    expect(run.fixedHorizonOnce.falsePositiveRate).toBeLessThanOrEqual(atMostAlpha(replications));
  });

  it('keeps the chance of any wrong significance at most alpha across three treatments', () => {
    const threeTreatments = simulateAbTest(
      {
        ...noEffect,
        name: 'no effect, four variants',
        rates: [0.1, 0.1, 0.1, 0.1],
        batch: [100, 100, 100, 100],
        looks: 30,
      },
      1_000,
      2027,
    );
    expect(threeTreatments.sequential.falsePositiveRate).toBeLessThanOrEqual(atMostAlpha(1_000));
    expect(threeTreatments.fixedHorizonPeeking.falsePositiveRate).toBeGreaterThan(atMostAlpha(1_000));
  });

  it('finds a real rise from 10% to 13% in over 90% of tests, in its direction, before the last look', () => {
    const effect = simulateAbTest({ ...noEffect, name: '10% to 13%', rates: [0.1, 0.13] }, 500, 2028);
    const { power, falsePositiveRate, meanObservationsAtDecision } = effect.sequential;
    expect(power, `power ${power}`).toBeGreaterThan(0.9);
    expect(falsePositiveRate).toBe(0);
    expect(meanObservationsAtDecision).toBeLessThan(noEffect.looks * 200);
  });
});

describe('a canary analysed after every batch of tasks', () => {
  const replications = 500;
  const canary: CanaryScenario = {
    name: 'failures equal',
    productionRate: 0.05,
    canaryRate: 0.05,
    direction: 'lower_is_better',
    tolerance: 0.02,
    canaryShare: 0.1,
    batch: 100,
    looks: 100,
    minimumTasks: 200,
    alpha,
  };

  const atTolerance = simulateCanary({ ...canary, canaryRate: 0.07 }, replications, 2029);

  it('is rolled back at most alpha of the time when it fails exactly at the tolerance', () => {
    expect(atTolerance.worseRate).toBeLessThanOrEqual(atMostAlpha(replications));
  });

  it('is promoted at most alpha of the time when it fails exactly at the tolerance', () => {
    expect(atTolerance.notWorseRate).toBeLessThanOrEqual(atMostAlpha(replications));
  });

  it('is rolled back nearly always when it fails far beyond the tolerance', () => {
    const worse = simulateCanary({ ...canary, canaryRate: 0.15 }, replications, 2031);
    expect(worse.worseRate).toBeGreaterThan(0.95);
  });

  it('is never rolled back, and mostly promoted, when it fails as often as production', () => {
    const equal = simulateCanary({ ...canary, looks: 200 }, replications, 2032);
    expect(equal.worseRate).toBeLessThanOrEqual(atMostAlpha(replications));
    expect(equal.notWorseRate).toBeGreaterThan(0.5);
  });
});
