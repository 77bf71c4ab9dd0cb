import { z } from 'zod';
import { AB_TEST_ANALYSES, summarizeExperiment } from '../src/domain/experiments/results.js';
import { graphql } from '../src/generated/graphql/index.js';
import { EXAMPLE_ID, exampleOf } from './examples.js';
import { defineRoute, fromPath, type Route } from './route.js';

const AbTestResults = graphql(`
  query AbTestResults($testId: ID!) {
    abTestResults(testId: $testId) {
      test_id: testId
      status
      significant
      chi_squared_p_value: chiSquaredPValue
      variants {
        variant_id: variantId
        name
        observations
        successes
        completion_rate: completionRate
        is_control: isControl
        weight
        completion_rate_ci: completionRateCi {
          lower
          upper
        }
        lift {
          lift
          lower
          upper
        }
        sequential {
          difference
          always_valid_p_value: alwaysValidPValue
          adjusted_p_value: adjustedPValue
          confidence_sequence: confidenceSequence {
            lower
            upper
          }
          confidence
          decision
        }
      }
      alpha
      method
      statistic
      degrees_of_freedom: degreesOfFreedom
      min_expected_count: minExpectedCount
      small_sample: smallSample
      exact_p_value: exactPValue
      sample_ratio_mismatch: sampleRatioMismatch {
        statistic
        p_value: pValue
        alpha
        mismatch
      }
      pairwise {
        variant_id: variantId
        name
        p_value: pValue
        adjusted_p_value: adjustedPValue
        significant
        small_sample: smallSample
        exact_p_value: exactPValue
      }
      analysis
      sequential_decision: sequentialDecision
    }
  }
`);

const interval = z.object({ lower: z.number(), upper: z.number() });
const sequentialDecision = z.enum(['collecting', 'significant', 'not_significant']);

const abTestResultsResponse = z.object({
  test_id: z.uuid(),
  status: z.enum(['draft', 'running', 'completed']),
  significant: z.boolean(),
  chi_squared_p_value: z.number().nullable(),
  variants: z.array(
    z.object({
      variant_id: z.uuid(),
      name: z.string(),
      observations: z.int(),
      successes: z.int(),
      completion_rate: z.number(),
      is_control: z.boolean(),
      weight: z.number(),
      completion_rate_ci: interval.nullable(),
      lift: z
        .object({ lift: z.number(), lower: z.number().nullable(), upper: z.number().nullable() })
        .nullable(),
      sequential: z
        .object({
          difference: z.number().nullable(),
          always_valid_p_value: z.number().nullable(),
          adjusted_p_value: z.number().nullable(),
          confidence_sequence: interval.nullable(),
          confidence: z.number(),
          decision: sequentialDecision,
        })
        .nullable(),
    }),
  ),
  alpha: z.number(),
  method: z.enum(['two_proportion_z', 'chi_squared_homogeneity']),
  statistic: z.number().nullable(),
  degrees_of_freedom: z.int(),
  min_expected_count: z.number().nullable(),
  small_sample: z.boolean(),
  exact_p_value: z.number().nullable(),
  sample_ratio_mismatch: z.object({
    statistic: z.number().nullable(),
    p_value: z.number().nullable(),
    alpha: z.number(),
    mismatch: z.boolean(),
  }),
  pairwise: z.array(
    z.object({
      variant_id: z.uuid(),
      name: z.string(),
      p_value: z.number().nullable(),
      adjusted_p_value: z.number().nullable(),
      significant: z.boolean(),
      small_sample: z.boolean(),
      exact_p_value: z.number().nullable(),
    }),
  ),
  analysis: z.enum(AB_TEST_ANALYSES),
  sequential_decision: sequentialDecision,
});

export const experimentsRoutes: Route[] = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/ux/ab-tests/{test_id}/results',
    tag: 'experiments',
    summary: 'Onboarding A/B test results: per-variant metrics and the significance decision',
    description:
      'Pooled two-proportion z-test for two variants, chi-squared test of homogeneity for more. ' +
      '`chi_squared_p_value` is null when the test is undefined; `significant` is `chi_squared_p_value` < ' +
      'alpha, the test’s own decision. Beyond the spec: `small_sample` warns when an expected count is ' +
      'below 5 (with `exact_p_value`, Fisher’s exact test, for two variants), Wilson intervals, lift over ' +
      'the control, a sample-ratio check and Holm-adjusted comparisons with the control. Also beyond the ' +
      'spec, the sequential analysis, valid however often the results are read: `analysis` says which ' +
      'analysis the test was created to be decided by (`fixed_horizon` or `sequential`; both are always ' +
      'computed), `sequential_decision` is `collecting`, `significant` or `not_significant`, and each ' +
      'non-control variant’s `sequential` holds its always-valid p-value and confidence sequence for its ' +
      'difference from the control.',
    document: AbTestResults,
    variables: { testId: fromPath('test_id') },
    status: 200,
    respond: (data) => data.abTestResults,
    responseSchema: abTestResultsResponse,
    errors: { 404: 'No A/B test of the caller’s tenant has this id.' },
    responseExample: exampleOf(abTestResultsResponse, {
      testId: EXAMPLE_ID,
      status: 'running',
      // 1,000 subjects a variant, as the service computes their results.
      ...summarizeExperiment(
        [
          {
            id: '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
            name: 'control',
            weight: 1,
            observations: 1000,
            successes: 100,
          },
          {
            id: '2b3c4d5e-6f7a-4b8c-9d0e-1f2a3b4c5d6e',
            name: 'guided tour',
            weight: 1,
            observations: 1000,
            successes: 140,
          },
        ],
        0.05,
      ),
    }),
  }),
];
