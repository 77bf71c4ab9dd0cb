import type { DashboardAbResultsFragment } from '../../../src/generated/dashboard/graphql.js';
import { formatCount, formatPercent, formatPValue, NONE } from '../format.js';

export interface AbTestSummary {
  id: string;
  name: string;
  results: DashboardAbResultsFragment;
}

/** How the decision reads: no test is "not significant" before it has data to decide on. */
function verdictOf(results: DashboardAbResultsFragment): {
  key: 'significant' | 'not-significant' | 'no-data' | 'too-little-data';
  text: string;
} {
  const observations = results.variants.reduce((sum, variant) => sum + variant.observations, 0);
  if (observations === 0) return { key: 'no-data', text: 'no data yet' };
  if (results.chiSquaredPValue === null) return { key: 'too-little-data', text: 'not enough data yet' };
  return results.significant
    ? { key: 'significant', text: 'significant' }
    : { key: 'not-significant', text: 'not significant' };
}

/** The upper end of the interval scale: the widest interval fits, in steps of 10 percentage points. */
function scaleOf(results: DashboardAbResultsFragment): number {
  const highest = Math.max(0, ...results.variants.map((variant) => variant.completionRateCi?.upper ?? 0));
  return Math.min(1, Math.max(0.1, Math.ceil(highest * 10) / 10));
}

function Interval({
  rate,
  lower,
  upper,
  scale,
}: {
  rate: number;
  lower: number;
  upper: number;
  scale: number;
}) {
  const at = (value: number) => `${Math.min(100, (value / scale) * 100)}%`;
  return (
    <div class="ci-track" aria-hidden="true">
      <div class="ci-range" style={{ left: at(lower), width: at(upper - lower) }} />
      <div class="ci-point" style={{ left: at(rate) }} />
    </div>
  );
}

function AbTest({ test }: { test: AbTestSummary }) {
  const { results } = test;
  const verdict = verdictOf(results);
  const scale = scaleOf(results);
  const headingId = `ab-${test.id}`;
  const subjects = results.variants.reduce((sum, variant) => sum + variant.observations, 0);
  return (
    <article class="ab-test" data-ab-test={test.id} aria-labelledby={headingId}>
      <header>
        <h3 id={headingId}>{test.name}</h3>
        <span class={`badge ${verdict.key}`} data-verdict={verdict.key}>
          {verdict.text}
        </span>
      </header>
      <p class="muted small">
        p{results.chiSquaredPValue !== null && results.chiSquaredPValue < 0.001 ? ' ' : ' = '}
        <span
          data-field="chi_squared_p_value"
          data-value={results.chiSquaredPValue === null ? undefined : String(results.chiSquaredPValue)}
        >
          {results.chiSquaredPValue === null ? NONE : formatPValue(results.chiSquaredPValue)}
        </span>{' '}
        at α = {formatPercent(results.alpha)}, {formatCount(subjects)} subjects
        {results.smallSample ? '; small sample, read with care' : ''}
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Variant</th>
            <th scope="col" class="number">
              Converted
            </th>
            <th scope="col" class="number">
              Rate
            </th>
            <th scope="col">
              95% interval <span class="muted">(scale 0–{formatPercent(scale)})</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {results.variants.map((variant) => {
            const ci = variant.completionRateCi;
            return (
              <tr key={variant.variantId} data-variant-id={variant.variantId}>
                <th scope="row">
                  {variant.name}
                  {variant.isControl ? <span class="muted"> (control)</span> : null}
                </th>
                <td class="number" data-field="successes" data-value={String(variant.successes)}>
                  {formatCount(variant.successes)} of {formatCount(variant.observations)}
                </td>
                <td
                  class="number"
                  data-field="completion_rate"
                  data-value={variant.observations > 0 ? String(variant.completionRate) : undefined}
                >
                  {variant.observations > 0 ? formatPercent(variant.completionRate) : NONE}
                </td>
                <td
                  data-field="completion_rate_ci"
                  data-lower={ci ? String(ci.lower) : undefined}
                  data-upper={ci ? String(ci.upper) : undefined}
                >
                  {ci ? (
                    <>
                      <span class="ci-text">
                        {formatPercent(ci.lower)} – {formatPercent(ci.upper)}
                      </span>
                      <Interval
                        rate={variant.completionRate}
                        lower={ci.lower}
                        upper={ci.upper}
                        scale={scale}
                      />
                    </>
                  ) : (
                    <span class="muted">no data yet</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </article>
  );
}

export function AbTests({ tests }: { tests: AbTestSummary[] }) {
  return (
    <section class="panel ab-tests" aria-labelledby="ab-heading">
      <h2 id="ab-heading">Running A/B tests</h2>
      {tests.length === 0 ? <p class="muted">No running test.</p> : null}
      {tests.map((test) => (
        <AbTest key={test.id} test={test} />
      ))}
    </section>
  );
}
