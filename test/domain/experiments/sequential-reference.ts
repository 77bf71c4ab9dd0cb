import { readFileSync } from 'node:fs';
import type { GuardrailDirection, GuardrailVerdict } from '../../../src/domain/experiments/canary.js';
import type { VariantCounts } from '../../../src/domain/experiments/statistics.js';

/** Values from scripts/reference/sequential.py; compared with `expectClose` (1e-9 relative or 1e-12 absolute). */
export interface SequentialReference {
  scipy: string;
  restrictedRates: {
    control: VariantCounts;
    treatment: VariantCounts;
    difference: number;
    controlRate: number;
    treatmentRate: number;
  }[];
  sequential: {
    name: string;
    control: VariantCounts;
    treatment: VariantCounts;
    alpha: number;
    expectedObservations: number;
    rhoSquared: number;
    difference: number;
    alwaysValidPValue: number;
    lower: number;
    upper: number;
    criticalZ: number;
    significant: boolean;
  }[];
  families: {
    name: string;
    variants: VariantCounts[];
    alpha: number;
    expectedObservations: number;
    comparisons: {
      alwaysValidPValue: number | null;
      adjustedPValue: number | null;
      lower: number | null;
      upper: number | null;
      significant: boolean;
    }[];
  }[];
  guardrails: {
    name: string;
    production: VariantCounts;
    canary: VariantCounts;
    direction: GuardrailDirection;
    tolerance: number;
    minimumTasks: number;
    alpha: number;
    expectedObservations: number;
    difference: number | null;
    lower: number | null;
    upper: number | null;
    verdict: GuardrailVerdict;
  }[];
}

export const sequentialReference: SequentialReference = JSON.parse(
  readFileSync(new URL('../../fixtures/experiments/sequential.json', import.meta.url), 'utf8'),
);
