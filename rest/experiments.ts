import { summarizeExperiment } from '../src/domain/experiments/results.js';
import { graphql } from '../src/generated/graphql/index.js';
import { EXAMPLE_ID, exampleOf } from './examples.js';
import { responseSchemaOf } from './response-schema.js';
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

const abTestResultsResponse = responseSchemaOf(AbTestResults, {
  test_id: 'uuid',
  'variants.variant_id': 'uuid',
  'pairwise.variant_id': 'uuid',
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
