// Monte Carlo checks of the sequential A/B comparison and the canary guardrails: a test is looked at after
// every batch of subjects and stopped at its first decision, as a chairman watching the dashboard would.
// Used by test/domain/experiments/sequential-simulation.test.ts (few replications) and by
// `npm run simulate:sequential` (many). Seeded: the same scenario and seed give the same figures.
import binomial from '@stdlib/random-base-binomial';
import { analyzeCanary, type GuardrailDirection } from '../src/domain/experiments/canary.js';
import { compareWithControlSequentially } from '../src/domain/experiments/sequential.js';
import { compareWithControl, type VariantCounts } from '../src/domain/experiments/statistics.js';

export interface AbScenario {
  name: string;
  /** True completion rates, control first. */
  rates: readonly number[];
  /** New subjects of each variant between two looks, in the order of `rates`. */
  batch: readonly number[];
  looks: number;
  alpha: number;
  expectedObservations?: number;
}

export interface RuleOutcome {
  /** Runs in which some comparison of equal rates, or of the wrong sign, was declared significant. */
  falsePositiveRate: number;
  /** Runs in which some comparison of truly different rates was declared significant with the right sign. */
  power: number;
  /** Mean subjects (all variants) at the first significant look, over the runs that had one. */
  meanObservationsAtDecision: number | null;
}

export interface AbSimulation {
  scenario: AbScenario;
  replications: number;
  /** Always-valid p-values, Bonferroni across comparisons, stopped at the first significant look. */
  sequential: RuleOutcome;
  /** The fixed-horizon z-tests (Holm across comparisons), looked at after every batch the same way. */
  fixedHorizonPeeking: RuleOutcome;
  /** The fixed-horizon z-tests looked at once, after the last batch, as they are meant to be used. */
  fixedHorizonOnce: RuleOutcome;
}

type Draw = (trials: number, probability: number) => number;

function seededBinomial(seed: number): Draw {
  const draw = binomial.factory({ seed });
  // stdlib's binomial takes a positive number of trials and answers NaN for 0.
  return (trials, probability) => (trials === 0 ? 0 : draw(trials, probability));
}

class Tally {
  private falsePositives = 0;
  private truePositives = 0;
  private decided = 0;
  private observationsAtDecision = 0;

  /** Records one run's decision at a look; `significant` holds one flag per non-control variant. */
  record(significant: readonly boolean[], differences: readonly (number | null)[], rates: readonly number[]) {
    const control = rates[0] ?? 0;
    let falsePositive = false;
    let truePositive = false;
    significant.forEach((isSignificant, index) => {
      if (!isSignificant) return;
      const trueDifference = (rates[index + 1] ?? 0) - control;
      const observed = differences[index] ?? 0;
      if (trueDifference !== 0 && Math.sign(observed) === Math.sign(trueDifference)) truePositive = true;
      else falsePositive = true;
    });
    if (falsePositive) this.falsePositives++;
    if (truePositive) this.truePositives++;
  }

  stopped(observations: number): void {
    this.decided++;
    this.observationsAtDecision += observations;
  }

  outcome(replications: number): RuleOutcome {
    return {
      falsePositiveRate: this.falsePositives / replications,
      power: this.truePositives / replications,
      meanObservationsAtDecision: this.decided === 0 ? null : this.observationsAtDecision / this.decided,
    };
  }
}

const totalObservations = (variants: readonly VariantCounts[]) =>
  variants.reduce((sum, v) => sum + v.observations, 0);

function rateDifferences(variants: readonly VariantCounts[]): number[] {
  const [control, ...treatments] = variants;
  const controlRate = control ? control.successes / control.observations : 0;
  return treatments.map((t) => t.successes / t.observations - controlRate);
}

export function simulateAbTest(scenario: AbScenario, replications: number, seed: number): AbSimulation {
  const draw = seededBinomial(seed);
  const sequential = new Tally();
  const peeking = new Tally();
  const once = new Tally();
  const { rates, batch, looks, alpha } = scenario;
  for (let run = 0; run < replications; run++) {
    const variants = rates.map(() => ({ observations: 0, successes: 0 }));
    let sequentialStopped = false;
    let peekingStopped = false;
    for (let look = 1; look <= looks; look++) {
      variants.forEach((variant, index) => {
        const subjects = batch[index] ?? 0;
        variant.observations += subjects;
        variant.successes += draw(subjects, rates[index] ?? 0);
      });
      if (!sequentialStopped) {
        const comparisons = compareWithControlSequentially(variants, {
          alpha,
          expectedObservations: scenario.expectedObservations,
        });
        const significant = comparisons.map((c) => c.decision === 'significant');
        if (significant.some(Boolean)) {
          sequential.record(
            significant,
            comparisons.map((c) => c.difference),
            rates,
          );
          sequential.stopped(totalObservations(variants));
          sequentialStopped = true;
        }
      }
      if (!peekingStopped || look === looks) {
        const significant = compareWithControl(variants, alpha).map((c) => c.significant);
        if (!peekingStopped && significant.some(Boolean)) {
          peeking.record(significant, rateDifferences(variants), rates);
          peeking.stopped(totalObservations(variants));
          peekingStopped = true;
        }
        if (look === looks) once.record(significant, rateDifferences(variants), rates);
      }
    }
  }
  return {
    scenario,
    replications,
    sequential: sequential.outcome(replications),
    fixedHorizonPeeking: peeking.outcome(replications),
    fixedHorizonOnce: { ...once.outcome(replications), meanObservationsAtDecision: null },
  };
}

export interface CanaryScenario {
  name: string;
  /** True rate of the guarded metric (a failure rate, for instance) in production and in the canary. */
  productionRate: number;
  canaryRate: number;
  direction: GuardrailDirection;
  tolerance: number;
  /** Share of tasks routed to the canary. */
  canaryShare: number;
  /** Tasks (canary and production) between two looks. */
  batch: number;
  looks: number;
  minimumTasks: number;
  alpha: number;
  expectedObservations?: number;
}

export interface CanarySimulation {
  scenario: CanaryScenario;
  replications: number;
  /** Runs rolled back: a `worse` verdict before any `not_worse`. */
  worseRate: number;
  /** Runs promoted: a `not_worse` verdict before any `worse`. */
  notWorseRate: number;
  /** Mean canary tasks at the verdict, over the runs that reached one. */
  meanCanaryTasksAtDecision: number | null;
}

export function simulateCanary(
  scenario: CanaryScenario,
  replications: number,
  seed: number,
): CanarySimulation {
  const draw = seededBinomial(seed);
  const canaryBatch = Math.round(scenario.batch * scenario.canaryShare);
  const productionBatch = scenario.batch - canaryBatch;
  let worse = 0;
  let notWorse = 0;
  let canaryTasksAtDecision = 0;
  for (let run = 0; run < replications; run++) {
    const production = { observations: 0, successes: 0 };
    const canary = { observations: 0, successes: 0 };
    for (let look = 1; look <= scenario.looks; look++) {
      production.observations += productionBatch;
      production.successes += draw(productionBatch, scenario.productionRate);
      canary.observations += canaryBatch;
      canary.successes += draw(canaryBatch, scenario.canaryRate);
      const { verdict } = analyzeCanary({
        guardrails: [
          {
            metric: 'failure_rate',
            direction: scenario.direction,
            tolerance: scenario.tolerance,
            production,
            canary,
          },
        ],
        minimumTasks: scenario.minimumTasks,
        canaryTasks: canary.observations,
        alpha: scenario.alpha,
        expectedObservations: scenario.expectedObservations,
      });
      if (verdict === 'worse' || verdict === 'not_worse') {
        if (verdict === 'worse') worse++;
        else notWorse++;
        canaryTasksAtDecision += canary.observations;
        break;
      }
    }
  }
  const decided = worse + notWorse;
  return {
    scenario,
    replications,
    worseRate: worse / replications,
    notWorseRate: notWorse / replications,
    meanCanaryTasksAtDecision: decided === 0 ? null : canaryTasksAtDecision / decided,
  };
}

/** Standard error of a rate estimated from `replications` runs. */
export function simulationError(rate: number, replications: number): number {
  return Math.sqrt((rate * (1 - rate)) / replications);
}
