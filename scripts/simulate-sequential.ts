// npm run simulate:sequential [-- --replications 10000 --seed 2026]
// Prints, as Markdown tables, how often a test watched after every batch and stopped at its first
// decision is wrongly significant, how often it finds a real difference, and when it stops: for the
// sequential comparison, for the fixed-horizon z-test watched the same way, and for the z-test looked at once.
// Then the same for canary guardrails. docs/decisions/0020-sequential-ab-analysis.md ("Sequential A/B
// analysis") quotes its output.
import { parseArgs } from 'node:util';
import {
  type AbScenario,
  type CanaryScenario,
  type RuleOutcome,
  simulateAbTest,
  simulateCanary,
} from './sequential-simulation.js';

const { values } = parseArgs({
  options: { replications: { type: 'string', default: '10000' }, seed: { type: 'string', default: '2026' } },
});
const replications = Number(values.replications);
const seed = Number(values.seed);
if (!(Number.isSafeInteger(replications) && replications > 0) || !Number.isSafeInteger(seed)) {
  console.error('--replications must be a positive integer and --seed an integer');
  process.exit(2);
}

const alpha = 0.05;
const abScenarios: AbScenario[] = [
  { name: 'no effect, 10%, 2 variants', rates: [0.1, 0.1], batch: [100, 100], looks: 50, alpha },
  { name: 'no effect, 2%, 2 variants', rates: [0.02, 0.02], batch: [20, 20], looks: 250, alpha },
  { name: 'no effect, 50%, 2 variants', rates: [0.5, 0.5], batch: [25, 25], looks: 200, alpha },
  { name: 'no effect, 10%, split 1:4', rates: [0.1, 0.1], batch: [20, 80], looks: 100, alpha },
  {
    name: 'no effect, 10%, 4 variants',
    rates: [0.1, 0.1, 0.1, 0.1],
    batch: [100, 100, 100, 100],
    looks: 50,
    alpha,
  },
  { name: 'no effect, 10%, 8x the tuned size', rates: [0.1, 0.1], batch: [100, 100], looks: 200, alpha },
  { name: '10% → 13%', rates: [0.1, 0.13], batch: [100, 100], looks: 50, alpha },
  {
    name: '10% → 13%, tuned to 1,000',
    rates: [0.1, 0.13],
    batch: [100, 100],
    looks: 50,
    alpha,
    expectedObservations: 1_000,
  },
  {
    name: '10% → 13%, tuned to 50,000',
    rates: [0.1, 0.13],
    batch: [100, 100],
    looks: 50,
    alpha,
    expectedObservations: 50_000,
  },
  { name: '10% → 11%', rates: [0.1, 0.11], batch: [500, 500], looks: 100, alpha },
  { name: '50% → 55%', rates: [0.5, 0.55], batch: [50, 50], looks: 100, alpha },
  {
    name: '4 variants, one 10% → 13%',
    rates: [0.1, 0.1, 0.13, 0.1],
    batch: [100, 100, 100, 100],
    looks: 50,
    alpha,
  },
];

const canaryBase = {
  direction: 'lower_is_better',
  canaryShare: 0.1,
  batch: 100,
  looks: 200,
  minimumTasks: 200,
  alpha,
} as const;
const canaryScenarios: CanaryScenario[] = [
  {
    ...canaryBase,
    name: 'failures 5% = 5%, tolerance 2 points',
    productionRate: 0.05,
    canaryRate: 0.05,
    tolerance: 0.02,
  },
  {
    ...canaryBase,
    name: 'failures 5% → 7% (at the tolerance)',
    productionRate: 0.05,
    canaryRate: 0.07,
    tolerance: 0.02,
  },
  {
    ...canaryBase,
    name: 'failures 5% → 10%, tolerance 2 points',
    productionRate: 0.05,
    canaryRate: 0.1,
    tolerance: 0.02,
  },
  {
    ...canaryBase,
    name: 'failures 5% → 25%, tolerance 2 points',
    productionRate: 0.05,
    canaryRate: 0.25,
    tolerance: 0.02,
  },
  {
    ...canaryBase,
    name: 'failures 5% = 5%, tolerance 0',
    productionRate: 0.05,
    canaryRate: 0.05,
    tolerance: 0,
  },
  {
    ...canaryBase,
    name: 'failures 5% → 2%, tolerance 0',
    productionRate: 0.05,
    canaryRate: 0.02,
    tolerance: 0,
  },
  {
    ...canaryBase,
    name: 'acceptance 60% → 50%, tolerance 5 points',
    direction: 'higher_is_better',
    productionRate: 0.6,
    canaryRate: 0.5,
    tolerance: 0.05,
  },
];

const percent = (rate: number) => `${(100 * rate).toFixed(2)}%`;
const subjects = (mean: number | null) => (mean === null ? '–' : Math.round(mean).toLocaleString('en-US'));
const ruleCells = (rule: RuleOutcome, stops = true) => [
  percent(rule.falsePositiveRate),
  percent(rule.power),
  ...(stops ? [subjects(rule.meanObservationsAtDecision)] : []),
];

const started = performance.now();
console.log(
  `Replications: ${replications.toLocaleString('en-US')} per scenario, seed ${seed}, alpha ${alpha}.`,
);
console.log(
  'Simulation error of a rate near 5%:',
  percent(Math.sqrt((alpha * (1 - alpha)) / replications)),
  '\n',
);
console.log(
  '| A/B scenario | looks | sequential: false pos. | power | mean subjects at decision | z-test watched: false pos. | power | mean subjects at decision | z-test once: false pos. | power |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
abScenarios.forEach((scenario, index) => {
  const result = simulateAbTest(scenario, replications, seed + index);
  const cells = [
    scenario.name,
    scenario.looks,
    ...ruleCells(result.sequential),
    ...ruleCells(result.fixedHorizonPeeking),
    ...ruleCells(result.fixedHorizonOnce, false),
  ];
  console.log(`| ${cells.join(' | ')} |`);
});

console.log(
  '\nCanary: 10% of tasks, 100 tasks between looks, at most 200 looks (2,000 canary tasks), minimum 200 canary tasks.\n',
);
console.log(
  '| Canary scenario | worse (rolled back) | not worse (promoted) | mean canary tasks at verdict |',
);
console.log('|---|---:|---:|---:|');
canaryScenarios.forEach((scenario, index) => {
  const result = simulateCanary(scenario, replications, seed + 100 + index);
  const cells = [
    scenario.name,
    percent(result.worseRate),
    percent(result.notWorseRate),
    subjects(result.meanCanaryTasksAtDecision),
  ];
  console.log(`| ${cells.join(' | ')} |`);
});
console.log(`\n${((performance.now() - started) / 1000).toFixed(1)} s`);
