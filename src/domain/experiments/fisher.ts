/**
 * Tables whose probability is within this relative distance of the observed one count as equally
 * extreme: the hypergeometric probabilities of a symmetric table are mathematically equal but computed
 * along different paths (R uses the same tolerance; SciPy 1e-14 on its own computation).
 */
const TIE = 1 + 1e-7;

/** A variant's counts (statistics.ts's VariantCounts, which passes them). */
interface Counts {
  observations: number;
  successes: number;
}

/**
 * Two-sided Fisher's exact test on the 2x2 table of two variants (successes and failures): the
 * probability, with every margin fixed, of a table no more likely than the one observed, as SciPy's
 * `fisher_exact(alternative="two-sided")` computes it. Null when a margin is empty (no observations in a
 * variant, or every subject or none converted), where the test says nothing.
 *
 * The hypergeometric probabilities are taken relative to the most likely table and stepped outwards from
 * it by their ratio, so no factorial is formed; the work is linear in the number of possible tables, at
 * most min(observations, successes, failures) + 1.
 */
export function fisherExactPValue(control: Counts, treatment: Counts): number | null {
  const total = control.observations + treatment.observations;
  const successes = control.successes + treatment.successes;
  if (control.observations === 0 || treatment.observations === 0) return null;
  if (successes === 0 || successes === total) return null;
  // x = the control's successes; K = the control's observations, n = all successes.
  const K = control.observations;
  const n = successes;
  const low = Math.max(0, n - (total - K));
  const high = Math.min(n, K);
  const mode = Math.min(high, Math.max(low, Math.floor(((n + 1) * (K + 1)) / (total + 2))));
  const weights = new Float64Array(high - low + 1);
  weights[mode - low] = 1;
  // P(x + 1) / P(x) = (K - x)(n - x) / ((x + 1)(total - K - n + x + 1)).
  for (let x = mode; x < high; x++) {
    const ratio = ((K - x) * (n - x)) / ((x + 1) * (total - K - n + x + 1));
    weights[x + 1 - low] = (weights[x - low] as number) * ratio;
  }
  for (let x = mode; x > low; x--) {
    const ratio = (x * (total - K - n + x)) / ((K - x + 1) * (n - x + 1));
    weights[x - 1 - low] = (weights[x - low] as number) * ratio;
  }
  const observed = (weights[control.successes - low] as number) * TIE;
  let all = 0;
  let asExtreme = 0;
  for (const weight of weights) {
    all += weight;
    if (weight <= observed) asExtreme += weight;
  }
  return Math.min(1, asExtreme / all);
}
