import { describe, expect, it } from 'vitest';
import { summarizeExperiment } from '../../src/domain/experiments/results.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { expectClose } from '../domain/experiments/reference.js';
import { sequentialReference } from '../domain/experiments/sequential-reference.js';
import type { Caller, TestApp } from '../support/app.js';
import { serveTestAppAndCaller } from '../support/fixtures.js';
import { subscribe } from '../support/ws.js';
import { watchBus } from './agents-support.js';
import {
  CompleteAbTest,
  CreateAbTest,
  codeOf,
  detailOf,
  draftTest,
  RecordAbTestEvents,
  runningTest,
  seedCounts,
} from './experiments-support.js';

const Results = graphql(`
  query ExperimentsSequentialResults($testId: ID!) {
    abTestResults(testId: $testId) {
      analysis
      sequentialDecision
      significant
      chiSquaredPValue
      variants {
        isControl
        sequential {
          difference
          alwaysValidPValue
          adjustedPValue
          confidenceSequence {
            lower
            upper
          }
          confidence
          decision
        }
      }
    }
  }
`);

const SeedResults = graphql(`
  query ExperimentsSeedResults($testId: ID!) {
    abTestResults(testId: $testId) {
      status
      significant
      chiSquaredPValue
      statistic
      pairwise {
        pValue
        adjustedPValue
        significant
      }
      variants {
        observations
        successes
        completionRate
        completionRateCi {
          lower
          upper
        }
      }
    }
  }
`);

const SequentialChanged = graphql(`
  subscription ExperimentsSequentialChanged($testId: ID!) {
    abTestResultsChanged(testId: $testId) {
      testId
      results {
        analysis
        sequentialDecision
        variants {
          sequential {
            alwaysValidPValue
            decision
            confidenceSequence {
              lower
              upper
            }
          }
        }
      }
    }
  }
`);

let t: TestApp;
let server: RunningServer;
let operator: Caller;

serveTestAppAndCaller(['operator'], (made) => ({ t, server, caller: operator } = made));

const twoVariants = [{ name: 'control' }, { name: 'treatment' }];
const familyNamed = (name: string) => {
  const found = sequentialReference.families.find((c) => c.name === name);
  if (!found) throw new Error(`no reference family ${name}`);
  return found;
};
const testsOf = (tenantId: string) => t.db.prisma.abTest.count({ where: { tenantId } });

describe('createAbTest with an analysis', () => {
  it('stores sequential when asked and fixed_horizon by default, and audits the choice', async () => {
    const caller = await t.caller(['chairman']);
    const sequential = await t.graphql(
      CreateAbTest,
      { input: { name: 'Guided tour', variants: twoVariants, analysis: 'sequential' } },
      caller,
    );
    const plain = await t.graphql(CreateAbTest, { input: { name: 'Tour', variants: twoVariants } }, caller);
    expect([sequential.data?.createAbTest.analysis, plain.data?.createAbTest.analysis]).toEqual([
      'sequential',
      'fixed_horizon',
    ]);
    const row = await t.db.prisma.auditEntry.findFirst({
      where: { tenantId: caller.tenantId, targetId: sequential.data?.createAbTest.id },
    });
    expect(row?.details).toMatchObject({ analysis: 'sequential' });
  });

  it.each(['bayesian', 'SEQUENTIAL', ''])(
    'refuses the analysis %j with BAD_USER_INPUT and creates nothing',
    async (analysis) => {
      const caller = await t.caller(['operator']);
      const result = await t.graphql(
        CreateAbTest,
        { input: { name: 'x', variants: twoVariants, analysis } },
        caller,
      );
      expect(codeOf(result)).toBe('BAD_USER_INPUT');
      expect(detailOf(result)).toEqual([
        {
          type: 'enum',
          loc: ['input', 'analysis'],
          msg: "Input should be 'fixed_horizon' or 'sequential'",
          input: analysis,
          ctx: { expected: "'fixed_horizon' or 'sequential'" },
        },
      ]);
      expect(await testsOf(caller.tenantId)).toBe(0);
    },
  );

  it.each([['member'], ['agent']] as const)(
    'is forbidden to the %s role with an analysis too, and creates nothing',
    async (role) => {
      const caller = await t.caller([role]);
      const result = await t.graphql(
        CreateAbTest,
        { input: { name: 'x', variants: twoVariants, analysis: 'sequential' } },
        caller,
      );
      expect(codeOf(result)).toBe('FORBIDDEN');
      expect(await testsOf(caller.tenantId)).toBe(0);
    },
  );
});

describe('abTestResults of a sequential test', () => {
  it('gives each variant its always-valid p-value and confidence sequence, as SciPy', async () => {
    const c = familyNamed('three variants');
    const test = await runningTest(t, operator, c.variants.length, c.alpha, 'sequential');
    await seedCounts(t, operator, test, c.variants);

    const result = await t.graphql(Results, { testId: test.id }, operator);
    expect(result.errors).toBeUndefined();
    const results = result.data?.abTestResults;
    expect([results?.analysis, results?.sequentialDecision]).toEqual(['sequential', 'significant']);
    expect(results?.variants[0]).toEqual({ isControl: true, sequential: null });
    results?.variants.slice(1).forEach((variant, i) => {
      const expected = c.comparisons[i];
      if (!expected) throw new Error('missing comparison');
      expectClose(variant.sequential?.alwaysValidPValue, expected.alwaysValidPValue);
      expectClose(variant.sequential?.adjustedPValue, expected.adjustedPValue);
      expectClose(variant.sequential?.confidenceSequence?.lower, expected.lower);
      expectClose(variant.sequential?.confidenceSequence?.upper, expected.upper);
      expect(variant.sequential?.confidence).toBeCloseTo(1 - c.alpha / 2, 12);
      expect(variant.sequential?.decision).toBe(expected.significant ? 'significant' : 'collecting');
    });
  });

  it('leaves the fixed-horizon fields exactly as for a fixed-horizon test with the same counts', async () => {
    const counts = [
      { observations: 1000, successes: 100 },
      { observations: 1000, successes: 140 },
    ];
    const sequential = await runningTest(t, operator, 2, undefined, 'sequential');
    const fixed = await runningTest(t, operator);
    await seedCounts(t, operator, sequential, counts);
    await seedCounts(t, operator, fixed, counts);

    const [a, b] = await Promise.all(
      [sequential, fixed].map((test) => t.graphql(SeedResults, { testId: test.id }, operator)),
    );
    expect(a?.data).toEqual(b?.data);
    // The z-test, read once, calls 10% against 14% significant; the sequential analysis is still collecting.
    expect(a?.data?.abTestResults.significant).toBe(true);
    const both = await t.graphql(Results, { testId: sequential.id }, operator);
    expect(both.data?.abTestResults.sequentialDecision).toBe('collecting');
  });

  it('decides not_significant once the test is completed without a difference shown', async () => {
    const test = await runningTest(t, operator, 2, undefined, 'sequential');
    await seedCounts(t, operator, test, [
      { observations: 50, successes: 10 },
      { observations: 50, successes: 12 },
    ]);
    const running = await t.graphql(Results, { testId: test.id }, operator);
    await t.graphql(CompleteAbTest, { id: test.id }, operator);
    const completed = await t.graphql(Results, { testId: test.id }, operator);
    expect([
      running.data?.abTestResults.sequentialDecision,
      completed.data?.abTestResults.sequentialDecision,
      completed.data?.abTestResults.variants[1]?.sequential?.decision,
    ]).toEqual(['collecting', 'not_significant', 'not_significant']);
  });

  it('answers null figures while a variant has no observations', async () => {
    const test = await draftTest(t, operator, 2, undefined, 'sequential');
    const result = await t.graphql(Results, { testId: test.id }, operator);
    expect(result.data?.abTestResults.variants[1]?.sequential).toEqual({
      difference: null,
      alwaysValidPValue: null,
      adjustedPValue: null,
      confidenceSequence: null,
      confidence: 0.95,
      decision: 'collecting',
    });
  });

  it('is readable by every role of the tenant and NOT_FOUND to another tenant', async () => {
    const test = await runningTest(t, operator, 2, undefined, 'sequential');
    const member = await t.caller(['member'], { tenantId: operator.tenantId });
    const stranger = await t.caller(['chairman']);
    const mine = await t.graphql(Results, { testId: test.id }, member);
    const theirs = await t.graphql(Results, { testId: test.id }, stranger);
    expect(mine.data?.abTestResults.analysis).toBe('sequential');
    expect([theirs.data ?? null, codeOf(theirs)]).toEqual([null, 'NOT_FOUND']);
  });
});

describe('the sequential state kept at each announcement', () => {
  const observationsOf = (payload: Record<string, unknown>) =>
    (payload.variants as { observations: number }[]).map((variant) => variant.observations);

  it('keeps a comparison significant once an announced look showed it, however the counts move after', async () => {
    const test = await runningTest(t, operator, 2, undefined, 'sequential');
    await t.app.services.relay.kick();
    const watch = await watchBus(t, 'AB_TEST_RESULTS_CHANGED', operator.tenantId);
    // 10% against 50% of 200 each: shown at this look.
    await seedCounts(t, operator, test, [
      { observations: 200, successes: 20 },
      { observations: 200, successes: 100 },
    ]);
    await watch.next((payload) => payload.test_id === test.id && observationsOf(payload)[0] === 200);
    const shown = await t.graphql(Results, { testId: test.id }, operator);
    expect(shown.data?.abTestResults.sequentialDecision).toBe('significant');

    // 2,000 more subjects a variant, half converting in both: the counts alone no longer show it
    // (46% against 50%), but a look that showed it stays valid.
    const more = test.variantIds.flatMap((variantId, index) =>
      Array.from({ length: 2000 }, (_, k) => ({
        subjectId: `more-${index}-${k}`,
        variantId,
        converted: k % 2 === 0,
      })),
    );
    for (let start = 0; start < more.length; start += 1000) {
      const batch = await t.graphql(
        RecordAbTestEvents,
        { testId: test.id, events: more.slice(start, start + 1000) },
        operator,
      );
      expect(batch.errors).toBeUndefined();
    }
    const later = await watch.next(
      (payload) => payload.test_id === test.id && observationsOf(payload).join() === '2200,2200',
    );
    await watch.close();
    const fromCounts = summarizeExperiment(
      [
        { id: 'c', name: 'c', weight: 1, observations: 2200, successes: 1020 },
        { id: 't', name: 't', weight: 1, observations: 2200, successes: 1100 },
      ],
      0.05,
    );
    expect(fromCounts.sequentialDecision).toBe('collecting');

    const read = await t.graphql(Results, { testId: test.id }, operator);
    const variant = read.data?.abTestResults.variants[1]?.sequential;
    expect([read.data?.abTestResults.sequentialDecision, variant?.decision]).toEqual([
      'significant',
      'significant',
    ]);
    expect(variant?.alwaysValidPValue).toBe(
      shown.data?.abTestResults.variants[1]?.sequential?.alwaysValidPValue,
    );
    expect(later.payload.sequential_state).toEqual([
      expect.objectContaining({ observations: 4400, alwaysValidPValue: variant?.alwaysValidPValue }),
    ]);
  });
});

describe('abTestResultsChanged of a sequential test', () => {
  it('delivers the sequential decision and figures with each change', async () => {
    const test = await runningTest(t, operator, 2, undefined, 'sequential');
    const subscription = await subscribe(server.url, operator, SequentialChanged, { testId: test.id });
    const events = test.variantIds.flatMap((variantId, index) =>
      Array.from({ length: 200 }, (_, k) => ({
        subjectId: `live-${index}-${k}`,
        variantId,
        converted: k < (index === 0 ? 20 : 100),
      })),
    );
    expect(
      (await t.graphql(RecordAbTestEvents, { testId: test.id, events }, operator)).errors,
    ).toBeUndefined();

    const { data, errors } = await subscription.next();
    await subscription.close();
    expect(errors).toBeUndefined();
    const delivered = data?.abTestResultsChanged;
    expect(delivered?.results.analysis).toBe('sequential');
    // 20 of 200 against 100 of 200: shown at the first look.
    expect(delivered?.results.sequentialDecision).toBe('significant');
    const reread = await t.graphql(Results, { testId: test.id }, operator);
    expect(delivered?.results.variants[1]?.sequential).toEqual({
      alwaysValidPValue: reread.data?.abTestResults.variants[1]?.sequential?.alwaysValidPValue,
      decision: 'significant',
      confidenceSequence: reread.data?.abTestResults.variants[1]?.sequential?.confidenceSequence,
    });
  });
});
