export {
  assignmentPoint,
  assignVariant,
  MAX_VARIANT_WEIGHT,
  MIN_VARIANT_WEIGHT,
} from './assignment.js';
export { relativeLift, wilsonInterval } from './intervals.js';
export { SRM_ALPHA, sampleRatioMismatch } from './srm.js';
export {
  compareWithControl,
  completionRate,
  DEFAULT_ALPHA,
  holmAdjust,
  type SignificanceMethod,
  testSignificance,
  type VariantCounts,
} from './statistics.js';
