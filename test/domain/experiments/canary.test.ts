import { describe, expect, it } from 'vitest';
import {
  analyzeCanary,
  compareGuardrail,
  type Guardrail,
  type GuardrailCounts,
  type GuardrailInput,
} from '../../../src/domain/experiments/canary.js';
import { counts, expectClose } from './reference.js';
import { sequentialReference } from './sequential-reference.js';

const failureRate = (overrides: Partial<GuardrailInput> = {}): GuardrailInput => ({
  metric: 'failure_rate',
  direction: 'lower_is_better',
  tolerance: 0.02,
  minimumTasks: 200,
  production: counts(18_000, 900),
  canary: counts(2_000, 100),
  ...overrides,
});

describe('compareGuardrail against SciPy', () => {
  const compare = (c: (typeof sequentialReference.guardrails)[number]) =>
    compareGuardrail({ ...c, metric: 'failure_rate' });

  it.each(sequentialReference.guardrails)('reaches the same verdict for $name', (c) => {
    expect(compare(c).verdict).toBe(c.verdict);
  });

  it.each(sequentialReference.guardrails)('matches the difference and its interval for $name', (c) => {
    const result = compare(c);
    expectClose(result.difference, c.difference);
    expectClose(result.confidenceSequence?.lower ?? null, c.lower);
    expectClose(result.confidenceSequence?.upper ?? null, c.upper);
  });
});

describe('compareGuardrail', () => {
  it('is collecting, never worse, while the canary has no outcome', () => {
    const result = compareGuardrail(failureRate({ canary: counts(0, 0), minimumTasks: 1 }));
    expect(result.verdict).toBe('collecting');
    expect(result.confidenceSequence).toBeNull();
  });

  it('names a canary worse beyond the tolerance before its minimum number of tasks', () => {
    const result = compareGuardrail(failureRate({ canary: counts(60, 30), minimumTasks: 500 }));
    expect(result.verdict).toBe('worse');
  });

  it('waits for the minimum number of tasks before finding a canary not worse', () => {
    expect(compareGuardrail(failureRate({ minimumTasks: 2_001 })).verdict).toBe('collecting');
    expect(compareGuardrail(failureRate({ minimumTasks: 2_000 })).verdict).toBe('not_worse');
  });

  it('is inconclusive after the minimum while the interval straddles the tolerance', () => {
    const result = compareGuardrail(failureRate({ production: counts(1_800, 90), canary: counts(200, 14) }));
    expect(result.verdict).toBe('inconclusive');
  });

  it('reads harm in the direction the metric calls bad', () => {
    const higherRateInCanary = {
      production: counts(9_000, 5_400),
      canary: counts(1_000, 700),
      minimumTasks: 100,
    };
    expect(
      compareGuardrail(failureRate({ ...higherRateInCanary, direction: 'higher_is_better' })).verdict,
    ).toBe('not_worse');
    expect(
      compareGuardrail(failureRate({ ...higherRateInCanary, direction: 'lower_is_better' })).verdict,
    ).toBe('worse');
  });

  it('asks a canary to be shown better when the tolerance is 0', () => {
    const equal = { production: counts(18_000, 900), canary: counts(2_000, 100), tolerance: 0 };
    expect(compareGuardrail(failureRate(equal)).verdict).toBe('inconclusive');
    expect(compareGuardrail(failureRate({ ...equal, canary: counts(2_000, 40) })).verdict).toBe('not_worse');
  });

  it('gives the evidence: metric, rates, counts and the interval of canary minus production', () => {
    const result = compareGuardrail(failureRate());
    expect(result).toMatchObject({
      metric: 'failure_rate',
      direction: 'lower_is_better',
      tolerance: 0.02,
      production: { observations: 18_000, successes: 900, rate: 0.05 },
      canary: { observations: 2_000, successes: 100, rate: 0.05 },
      difference: 0,
      confidence: 0.95,
    });
    expect(result.confidenceSequence?.lower).toBeLessThan(0);
    expect(result.confidenceSequence?.upper).toBeGreaterThan(0);
  });

  it('rejects a tolerance outside [0, 1]', () => {
    expect(() => compareGuardrail(failureRate({ tolerance: 1.5 }))).toThrow(RangeError);
  });

  it('rejects a minimum below 1 task', () => {
    expect(() => compareGuardrail(failureRate({ minimumTasks: 0 }))).toThrow(RangeError);
  });

  it('rejects an unknown direction', () => {
    expect(() => compareGuardrail(failureRate({ direction: 'sideways' as never }))).toThrow(RangeError);
  });
});

describe('analyzeCanary', () => {
  const equalFailures: Guardrail & GuardrailCounts = {
    metric: 'failure_rate',
    direction: 'lower_is_better',
    tolerance: 0.02,
    production: counts(18_000, 900),
    canary: counts(2_000, 100),
  };
  const equalAcceptance: Guardrail & GuardrailCounts = {
    metric: 'acceptance_rate',
    direction: 'higher_is_better',
    tolerance: 0.05,
    production: counts(27_000, 16_200),
    canary: counts(3_000, 1_800),
  };
  const worseAccuracy: Guardrail & GuardrailCounts = {
    metric: 'outcome_accuracy',
    direction: 'higher_is_better',
    tolerance: 0.05,
    production: counts(1_500, 900),
    canary: counts(500, 200),
  };

  it('divides alpha among the guardrails', () => {
    const result = analyzeCanary({
      guardrails: [equalFailures, equalAcceptance, worseAccuracy],
      minimumTasks: 100,
      canaryTasks: 3_000,
      alpha: 0.06,
    });
    expect(result.guardrails.map((g) => g.confidence)).toEqual([0.98, 0.98, 0.98]);
  });

  it('finds the canary worse when any guardrail is', () => {
    const result = analyzeCanary({
      guardrails: [equalFailures, worseAccuracy],
      minimumTasks: 100,
      canaryTasks: 3_000,
    });
    expect(result.verdict).toBe('worse');
    expect(result.guardrails.map((g) => g.verdict)).toEqual(['not_worse', 'worse']);
  });

  it('finds the canary not worse only when every guardrail is', () => {
    const result = analyzeCanary({
      guardrails: [equalFailures, equalAcceptance],
      minimumTasks: 100,
      canaryTasks: 3_000,
    });
    expect(result.verdict).toBe('not_worse');
  });

  it("holds the canary's tasks, not a metric's outcomes, against the minimum", () => {
    const tooFewTasks = analyzeCanary({
      guardrails: [equalAcceptance],
      minimumTasks: 5_000,
      canaryTasks: 4_999,
    });
    const enoughTasks = analyzeCanary({
      guardrails: [equalAcceptance],
      minimumTasks: 5_000,
      canaryTasks: 5_000,
    });
    expect(tooFewTasks.verdict).toBe('collecting');
    expect(enoughTasks.verdict).toBe('not_worse');
  });

  it('is collecting while a guardrail is collecting and none is worse', () => {
    const noAcceptanceYet = { ...equalAcceptance, canary: counts(0, 0) };
    const result = analyzeCanary({
      guardrails: [equalFailures, noAcceptanceYet],
      minimumTasks: 100,
      canaryTasks: 3_000,
    });
    expect(result.verdict).toBe('collecting');
  });

  it('is inconclusive when no guardrail is collecting or worse and one is undecided', () => {
    const undecided = { ...equalFailures, production: counts(1_800, 90), canary: counts(200, 14) };
    const result = analyzeCanary({
      guardrails: [undecided, equalAcceptance],
      minimumTasks: 100,
      canaryTasks: 3_000,
    });
    expect(result.verdict).toBe('inconclusive');
  });

  it('refuses an analysis without guardrails', () => {
    expect(() => analyzeCanary({ guardrails: [], minimumTasks: 100, canaryTasks: 3_000 })).toThrow(
      RangeError,
    );
  });
});
