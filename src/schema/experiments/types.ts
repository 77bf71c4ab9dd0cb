import { builder } from '../../builder.js';
import type { AbTestResults } from '../../domain/experiments/lifecycle.js';
import {
  AB_TEST_ANALYSES,
  type PairwiseComparison,
  type SequentialVariantResult,
  type VariantResult,
} from '../../domain/experiments/results.js';
import type { EventsReceipt, SubjectAssignment } from '../../domain/experiments/subjects.js';
import { pageType } from '../pagination.js';

export const AB_TEST_STATUSES = ['draft', 'running', 'completed'] as const;

export const AbTestStatus = builder.enumType('AbTestStatus', {
  description: 'draft → running → completed. Events are accepted only while running.',
  values: AB_TEST_STATUSES,
});

export const AbTestAnalysis = builder.enumType('AbTestAnalysis', {
  description:
    'Which analysis decides the test. fixed_horizon: the z-test (chi-squared for more variants), valid when ' +
    'read once at a size planned in advance (significant, chiSquaredPValue). sequential: the always-valid ' +
    'analysis, safe to read after every event (sequentialDecision and each variant’s sequential).',
  values: AB_TEST_ANALYSES,
});

const SequentialDecision = builder.enumType('AbTestSequentialDecision', {
  description:
    'collecting: no difference from the control shown yet, looking again later is safe; significant: a ' +
    'difference is shown at the test’s alpha; not_significant: the test was completed before one was shown.',
  values: ['collecting', 'significant', 'not_significant'] as const,
});

const SignificanceMethod = builder.enumType('AbTestSignificanceMethod', {
  description: 'two_proportion_z for two variants; chi_squared_homogeneity on the 2xk table for more.',
  values: ['two_proportion_z', 'chi_squared_homogeneity'] as const,
});

builder.prismaObject('AbTestVariant', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    position: t.exposeInt('position', { description: '0 is the control.' }),
    isControl: t.boolean({ resolve: (variant) => variant.position === 0 }),
    weight: t.exposeFloat('weight', {
      description: 'Relative share of new subjects assigned to the variant.',
    }),
    observations: t.exposeInt('observations'),
    successes: t.exposeInt('successes'),
  }),
});

export const AbTestRef = builder.prismaObject('AbTest', {
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    status: t.expose('status', { type: AbTestStatus }),
    alpha: t.exposeFloat('alpha', { description: 'Significance level of the test.' }),
    analysis: t.expose('analysis', { type: AbTestAnalysis }),
    createdBy: t.exposeString('createdBy'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
    variants: t.relation('variants', {
      query: { orderBy: { position: 'asc' } },
      description: 'Control first.',
    }),
  }),
});

export const AbTestPage = pageType('AbTest', AbTestRef);

const Interval = builder.objectRef<{ lower: number; upper: number }>('AbTestInterval').implement({
  fields: (t) => ({ lower: t.exposeFloat('lower'), upper: t.exposeFloat('upper') }),
});

const Lift = builder
  .objectRef<{ lift: number; lower: number | null; upper: number | null }>('AbTestLift')
  .implement({
    description: 'Relative lift (p − p_control) / p_control with its 95% interval (log risk ratio, Katz).',
    fields: (t) => ({
      lift: t.exposeFloat('lift'),
      lower: t.exposeFloat('lower', {
        nullable: true,
        description: 'Null when the variant has no successes.',
      }),
      upper: t.exposeFloat('upper', {
        nullable: true,
        description: 'Null when the variant has no successes.',
      }),
    }),
  });

const SequentialComparisonRef = builder
  .objectRef<SequentialVariantResult>('AbTestSequentialComparison')
  .implement({
    description:
      'Always-valid comparison of a variant with the control (asymptotic confidence sequence, normal mixture; ' +
      'docs/decisions/0020-sequential-ab-analysis.md): valid at every look, however often the results are read. With m non-control ' +
      'variants each comparison runs at alpha / m (Bonferroni).',
    fields: (t) => ({
      difference: t.exposeFloat('difference', {
        nullable: true,
        description: 'Completion rate minus the control’s; null while either has no observations.',
      }),
      alwaysValidPValue: t.exposeFloat('alwaysValidPValue', {
        nullable: true,
        description:
          'Always-valid p-value of “no difference”: the smallest over the announced looks and this read; null with the difference.',
      }),
      adjustedPValue: t.exposeFloat('adjustedPValue', {
        nullable: true,
        description: 'min(1, alwaysValidPValue × m); the comparison is significant when it is at most alpha.',
      }),
      confidenceSequence: t.field({
        type: Interval,
        nullable: true,
        description:
          'Interval of the difference at `confidence`, holding at every look at once: the intersection of the announced looks’ intervals and this read’s.',
        resolve: (comparison) => comparison.confidenceSequence,
      }),
      confidence: t.exposeFloat('confidence', { description: '1 − alpha / m.' }),
      decision: t.field({ type: SequentialDecision, resolve: (comparison) => comparison.decision }),
    }),
  });

const VariantResultRef = builder.objectRef<VariantResult>('AbTestVariantResult').implement({
  fields: (t) => ({
    variantId: t.exposeID('variantId'),
    name: t.exposeString('name'),
    isControl: t.exposeBoolean('isControl'),
    weight: t.exposeFloat('weight'),
    observations: t.exposeInt('observations'),
    successes: t.exposeInt('successes'),
    completionRate: t.exposeFloat('completionRate', {
      description: 'successes / observations; 0 without observations.',
    }),
    completionRateCi: t.field({
      type: Interval,
      nullable: true,
      description: '95% Wilson interval of the completion rate; null without observations.',
      resolve: (variant) => variant.completionRateCi,
    }),
    lift: t.field({
      type: Lift,
      nullable: true,
      description:
        'Lift over the control; null for the control, without observations or without control successes.',
      resolve: (variant) => variant.lift,
    }),
    sequential: t.field({
      type: SequentialComparisonRef,
      nullable: true,
      description: 'Always-valid comparison with the control; null for the control.',
      resolve: (variant) => variant.sequential,
    }),
  }),
});

const SampleRatioMismatchRef = builder
  .objectRef<AbTestResults['sampleRatioMismatch']>('AbTestSampleRatioMismatch')
  .implement({
    description: 'Chi-squared goodness of fit of the observations against the split the weights call for.',
    fields: (t) => ({
      statistic: t.exposeFloat('statistic', { nullable: true }),
      pValue: t.exposeFloat('pValue', { nullable: true, description: 'Null without observations.' }),
      alpha: t.exposeFloat('alpha', { description: 'A mismatch is flagged when pValue is below it.' }),
      mismatch: t.exposeBoolean('mismatch'),
    }),
  });

const PairwiseRef = builder.objectRef<PairwiseComparison>('AbTestPairwiseComparison').implement({
  description: 'Two-proportion z-test of one variant against the control, Holm-adjusted over all variants.',
  fields: (t) => ({
    variantId: t.exposeID('variantId'),
    name: t.exposeString('name'),
    pValue: t.exposeFloat('pValue', { nullable: true }),
    adjustedPValue: t.exposeFloat('adjustedPValue', { nullable: true }),
    significant: t.exposeBoolean('significant', { description: 'adjustedPValue < alpha.' }),
    smallSample: t.exposeBoolean('smallSample', {
      description: 'A warning: an expected cell count of the pair’s 2x2 table is below 5.',
    }),
    exactPValue: t.exposeFloat('exactPValue', {
      nullable: true,
      description:
        'With smallSample: Fisher’s exact test (two-sided) on the pair’s table, unadjusted; else null.',
    }),
  }),
});

export const AbTestResultsRef = builder.objectRef<AbTestResults>('AbTestResults').implement({
  fields: (t) => ({
    testId: t.exposeID('testId'),
    status: t.field({ type: AbTestStatus, resolve: (results) => results.status }),
    alpha: t.exposeFloat('alpha'),
    analysis: t.field({
      type: AbTestAnalysis,
      description: 'The analysis the test was created to be decided by; both are always computed.',
      resolve: (results) => results.analysis,
    }),
    sequentialDecision: t.field({
      type: SequentialDecision,
      description:
        'The sequential analysis’s decision: significant once some variant’s comparison is; not_significant ' +
        'when the test was completed without one; collecting until then.',
      resolve: (results) => results.sequentialDecision,
    }),
    significant: t.exposeBoolean('significant', {
      description:
        'chiSquaredPValue < alpha: the decision of the z-test (chi-squared test for more variants) alone; see smallSample.',
    }),
    chiSquaredPValue: t.exposeFloat('chiSquaredPValue', {
      nullable: true,
      description:
        'Null when the test is undefined: a variant without observations, or all or no subjects converted.',
    }),
    method: t.field({ type: SignificanceMethod, resolve: (results) => results.method }),
    statistic: t.exposeFloat('statistic', {
      nullable: true,
      description: 'z for two variants, chi-squared otherwise.',
    }),
    degreesOfFreedom: t.exposeInt('degreesOfFreedom'),
    minExpectedCount: t.exposeFloat('minExpectedCount', { nullable: true }),
    smallSample: t.exposeBoolean('smallSample', {
      description:
        'A warning beside the decision, never a change of it: minExpectedCount is below 5, where the normal approximation behind chiSquaredPValue is rough.',
    }),
    exactPValue: t.exposeFloat('exactPValue', {
      nullable: true,
      description:
        'With smallSample and two variants: Fisher’s exact test (two-sided) on the 2x2 table, to weigh the decision by; else null.',
    }),
    variants: t.field({ type: [VariantResultRef], resolve: (results) => results.variants }),
    sampleRatioMismatch: t.field({
      type: SampleRatioMismatchRef,
      resolve: (results) => results.sampleRatioMismatch,
    }),
    pairwise: t.field({
      type: [PairwiseRef],
      description: 'Every non-control variant against the control, in order.',
      resolve: (results) => results.pairwise,
    }),
  }),
});

export const AbTestAssignmentRef = builder.objectRef<SubjectAssignment>('AbTestAssignment').implement({
  fields: (t) => ({
    testId: t.exposeID('testId'),
    subjectId: t.exposeString('subjectId'),
    variantId: t.exposeID('variantId'),
    variantName: t.exposeString('variantName'),
    converted: t.exposeBoolean('converted'),
    assignedAt: t.expose('assignedAt', { type: 'DateTime' }),
    convertedAt: t.expose('convertedAt', { type: 'DateTime', nullable: true }),
  }),
});

export const AbTestEventsReceiptRef = builder.objectRef<EventsReceipt>('AbTestEventsReceipt').implement({
  fields: (t) => ({
    received: t.exposeInt('received'),
    newObservations: t.exposeInt('newObservations', { description: 'Subjects observed for the first time.' }),
    newSuccesses: t.exposeInt('newSuccesses', { description: 'Subjects that converted for the first time.' }),
    repeats: t.exposeInt('repeats', {
      description: 'Events that changed nothing, variant mismatches included.',
    }),
    variantMismatches: t.exposeInt('variantMismatches', {
      description: "Events ignored because they named another variant than the subject's first assignment.",
    }),
  }),
});
