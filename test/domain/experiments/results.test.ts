import { describe, expect, it } from 'vitest';
import { SRM_ALPHA } from '../../../src/domain/experiments/index.js';
import {
  storedSequentialState,
  summarizeExperiment,
  type VariantTally,
} from '../../../src/domain/experiments/results.js';
import { expectClose, reference } from './reference.js';
import { sequentialReference } from './sequential-reference.js';

const tallies = (counts: { observations: number; successes: number }[], weights?: number[]): VariantTally[] =>
  counts.map((c, i) => ({ id: `v${i}`, name: `variant ${i}`, weight: weights?.[i] ?? 1, ...c }));

const caseNamed = (name: string) => {
  const found = reference.significance.find((c) => c.name === name);
  if (!found) throw new Error(`no reference case ${name}`);
  return found;
};

describe('summarizeExperiment', () => {
  it.each(reference.significance)('reports the reference p-value and decision for $name', (c) => {
    const results = summarizeExperiment(tallies(c.variants), 0.05);
    expectClose(results.chiSquaredPValue, c.pValue);
    expect(results.significant).toBe(c.significant);
  });

  it.each(reference.significance)('reports the small-sample warning and exact test for $name', (c) => {
    const results = summarizeExperiment(tallies(c.variants), 0.05);
    expect(results.smallSample).toBe(c.smallSample);
    expectClose(results.exactPValue, c.exactPValue);
  });

  it.each(reference.significance)('reports the Holm-adjusted comparisons with the control for $name', (c) => {
    const { pairwise } = summarizeExperiment(tallies(c.variants), 0.05);
    expect(pairwise).toHaveLength(c.pairwise.length);
    pairwise.forEach((comparison, i) => {
      expectClose(comparison.adjustedPValue, c.pairwise[i]?.adjustedPValue ?? null);
      expect(comparison.significant).toBe(c.pairwise[i]?.significant);
      expect(comparison.smallSample).toBe(c.pairwise[i]?.smallSample);
      expectClose(comparison.exactPValue, c.pairwise[i]?.exactPValue ?? null);
    });
  });

  it('applies the alpha of the test', () => {
    const c = caseNamed('two variants, modest difference');
    expect(summarizeExperiment(tallies(c.variants), 0.2).significant).toBe(true);
  });

  it('marks the first variant as the control and gives it no lift', () => {
    const [control, treatment] = summarizeExperiment(
      tallies([
        { observations: 100, successes: 10 },
        { observations: 100, successes: 20 },
      ]),
      0.05,
    ).variants;
    expect([control?.isControl, control?.lift, treatment?.isControl, treatment?.lift?.lift]).toEqual([
      true,
      null,
      false,
      1,
    ]);
  });

  it('gives a variant without observations a completion rate of 0 and no interval', () => {
    const [, empty] = summarizeExperiment(
      tallies([
        { observations: 10, successes: 1 },
        { observations: 0, successes: 0 },
      ]),
      0.05,
    ).variants;
    expect([empty?.completionRate, empty?.completionRateCi]).toEqual([0, null]);
  });

  it('matches the reference Wilson interval of a variant', () => {
    const w = reference.wilson.find((x) => x.confidence === 0.95 && x.observations > 0);
    if (!w) throw new Error('no 95% Wilson reference case');
    const [variant] = summarizeExperiment(tallies([w, { observations: 10, successes: 1 }]), 0.05).variants;
    expectClose(variant?.completionRateCi?.lower, w.lower);
    expectClose(variant?.completionRateCi?.upper, w.upper);
  });

  it('flags a sample-ratio mismatch against the weights', () => {
    const results = summarizeExperiment(
      tallies(
        [
          { observations: 1000, successes: 10 },
          { observations: 1000, successes: 10 },
        ],
        [1, 3],
      ),
      0.05,
    );
    expect([results.sampleRatioMismatch.mismatch, results.sampleRatioMismatch.alpha]).toEqual([
      true,
      SRM_ALPHA,
    ]);
  });

  it('sees no mismatch when the observations follow the weights', () => {
    const results = summarizeExperiment(
      tallies(
        [
          { observations: 1000, successes: 10 },
          { observations: 3000, successes: 10 },
        ],
        [1, 3],
      ),
      0.05,
    );
    expect(results.sampleRatioMismatch.mismatch).toBe(false);
  });
});

describe('summarizeExperiment, sequential analysis', () => {
  const family = (name: string) => {
    const found = sequentialReference.families.find((c) => c.name === name);
    if (!found) throw new Error(`no reference family ${name}`);
    return found;
  };

  it('is fixed_horizon unless told, and computes the sequential figures for every test', () => {
    const c = family('three variants');
    const results = summarizeExperiment(tallies(c.variants), c.alpha);
    expect([results.analysis, results.sequentialDecision]).toEqual(['fixed_horizon', 'significant']);
    expect(results.variants[0]?.sequential).toBeNull();
    results.variants.slice(1).forEach((variant, i) => {
      const expected = c.comparisons[i];
      expectClose(variant.sequential?.alwaysValidPValue, expected?.alwaysValidPValue ?? null);
      expectClose(variant.sequential?.adjustedPValue, expected?.adjustedPValue ?? null);
      expectClose(variant.sequential?.confidenceSequence?.lower, expected?.lower ?? null);
      expectClose(variant.sequential?.confidenceSequence?.upper, expected?.upper ?? null);
    });
  });

  it('leaves every fixed-horizon figure as it is whichever analysis decides', () => {
    const c = family('three variants');
    const strip = ({ analysis: _a, ...rest }: ReturnType<typeof summarizeExperiment>) => rest;
    expect(strip(summarizeExperiment(tallies(c.variants), c.alpha, { analysis: 'sequential' }))).toEqual(
      strip(summarizeExperiment(tallies(c.variants), c.alpha)),
    );
  });

  it.each([
    [false, 'collecting'],
    [true, 'not_significant'],
  ] as const)('without a difference shown, ended %s decides %s', (ended, decision) => {
    const c = family('four variants, no difference');
    const results = summarizeExperiment(tallies(c.variants), c.alpha, { analysis: 'sequential', ended });
    expect(results.sequentialDecision).toBe(decision);
    expect(results.variants.slice(1).map((v) => v.sequential?.decision)).toEqual([
      decision,
      decision,
      decision,
    ]);
  });

  it('stays significant with the state of an earlier look that showed it, once the counts no longer do', () => {
    const early = summarizeExperiment(
      tallies([
        { observations: 200, successes: 20 },
        { observations: 200, successes: 100 },
      ]),
      0.05,
    );
    const state = [
      {
        observations: 400,
        alwaysValidPValue: early.variants[1]?.sequential?.alwaysValidPValue as number,
        ...(early.variants[1]?.sequential?.confidenceSequence as { lower: number; upper: number }),
      },
    ];
    const diluted = tallies([
      { observations: 2200, successes: 1020 },
      { observations: 2200, successes: 1100 },
    ]);
    expect(summarizeExperiment(diluted, 0.05).sequentialDecision).toBe('collecting');
    const kept = summarizeExperiment(diluted, 0.05, { storedState: state, ended: true });
    expect(kept.sequentialDecision).toBe('significant');
    expect(kept.variants[1]?.sequential?.alwaysValidPValue).toBe(state[0]?.alwaysValidPValue);
  });

  it.each([
    ['not an array', { observations: 1 }],
    ['one entry too many', [null, null]],
  ])('ignores a stored state that is %s', (_name, stored) => {
    expect(
      storedSequentialState(
        stored,
        tallies([
          { observations: 1, successes: 0 },
          { observations: 1, successes: 1 },
        ]),
      ),
    ).toBeNull();
  });

  it.each([
    ['more observations than the counts', { observations: 3, alwaysValidPValue: 0.5, lower: -1, upper: 1 }],
    ['a p-value above 1', { observations: 1, alwaysValidPValue: 2, lower: -1, upper: 1 }],
    ['an empty interval', { observations: 1, alwaysValidPValue: 0.5, lower: 1, upper: -1 }],
    ['a string', 'significant'],
  ])('drops a stored entry with %s, so a read never fails on it', (_name, entry) => {
    const variants = tallies([
      { observations: 1, successes: 0 },
      { observations: 1, successes: 1 },
    ]);
    expect(storedSequentialState([entry], variants)).toEqual([null]);
    expect(() => summarizeExperiment(variants, 0.05, { storedState: [entry] })).not.toThrow();
  });

  it('stays significant when the test ends after a difference was shown', () => {
    const c = family('three variants');
    expect(summarizeExperiment(tallies(c.variants), c.alpha, { ended: true }).sequentialDecision).toBe(
      'significant',
    );
  });
});

/** Every number in a value, however deep. */
function numbersIn(value: unknown): number[] {
  if (typeof value === 'number') return [value];
  if (typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap(numbersIn);
}

describe('summarizeExperiment with extreme weights', () => {
  const counts = [
    { observations: 500, successes: 50 },
    { observations: 0, successes: 0 },
    { observations: 480, successes: 70 },
  ];

  it.each([
    { name: 'huge equal weights', weights: [1e308, 1e308, 1e308] },
    { name: 'a huge and a tiny weight', weights: [1e308, 5e-324, 1] },
    { name: 'tiny weights', weights: [1e-300, 1e-300, 2e-300] },
  ])('produces no NaN or infinity for $name', ({ weights }) => {
    const results = summarizeExperiment(tallies(counts, weights), 0.05);

    expect(numbersIn(results).filter((n) => !Number.isFinite(n))).toEqual([]);
  });

  it('checks huge equal weights as an equal split', () => {
    const equal = summarizeExperiment(tallies(counts, [1, 1, 1]), 0.05);
    const huge = summarizeExperiment(tallies(counts, [1e308, 1e308, 1e308]), 0.05);

    expect(huge.sampleRatioMismatch).toEqual(equal.sampleRatioMismatch);
  });
});
