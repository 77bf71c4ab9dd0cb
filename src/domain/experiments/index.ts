export {
  assignmentPoint,
  assignVariant,
  MAX_VARIANT_WEIGHT,
  MIN_VARIANT_WEIGHT,
  type WeightedVariant,
  weightShares,
} from './assignment.js';
export { fisherExactPValue } from './fisher.js';
export { type Interval, type RelativeLift, relativeLift, wilsonInterval } from './intervals.js';
export { type SampleRatioMismatch, SRM_ALPHA, sampleRatioMismatch } from './srm.js';
export {
  type ControlComparison,
  compareWithControl,
  completionRate,
  DEFAULT_ALPHA,
  holmAdjust,
  MIN_EXPECTED_COUNT,
  type SignificanceMethod,
  type SignificanceResult,
  testSignificance,
  type VariantCounts,
} from './statistics.js';
