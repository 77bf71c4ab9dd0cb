import { describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import { expectClose, reference } from '../domain/experiments/reference.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestAppAndCaller } from '../support/fixtures.js';
import { runningTest, seedCounts } from './experiments-support.js';

const Results = graphql(`
  query ExperimentsSignificance($testId: ID!) {
    abTestResults(testId: $testId) {
      significant
      chiSquaredPValue
      minExpectedCount
      smallSample
      exactPValue
      pairwise {
        significant
        smallSample
        exactPValue
      }
    }
  }
`);

let t: TestApp;
let operator: Caller;

withTestAppAndCaller(['operator'], (made) => ({ t, caller: operator } = made));

const caseNamed = (name: string) => {
  const found = reference.significance.find((c) => c.name === name);
  if (!found) throw new Error(`no reference case ${name}`);
  return found;
};

describe('abTestResults significance', () => {
  it.each([
    'two variants, 0/20 against 5/20: p below alpha, expected counts below 5',
    'two variants, small sample, exact test not significant',
    'two variants, modest difference',
    'three variants, small p but expected counts below 5',
  ])('decides by the p-value and warns of a small sample beside it, as SciPy: %s', async (name) => {
    const c = caseNamed(name);
    const test = await runningTest(t, operator, c.variants.length);
    await seedCounts(t, operator, test, c.variants);
    const result = await t.graphql(Results, { testId: test.id }, operator);
    const results = result.data?.abTestResults;
    expect([results?.significant, results?.smallSample]).toEqual([c.significant, c.smallSample]);
    expectClose(results?.chiSquaredPValue, c.pValue);
    expectClose(results?.exactPValue, c.exactPValue);
    expect(results?.pairwise.map((p) => [p.significant, p.smallSample])).toEqual(
      c.pairwise.map((p) => [p.significant, p.smallSample]),
    );
    results?.pairwise.forEach((p, i) => {
      expectClose(p.exactPValue, c.pairwise[i]?.exactPValue ?? null);
    });
  });
});
