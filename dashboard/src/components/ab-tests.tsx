import type { DashboardAbResultsFragment } from '../../../src/generated/dashboard/graphql.js';
import { formatCount, formatPercent, formatPoints, formatPValue, NONE } from '../format.js';

export interface AbTestSummary {
  id: string;
  name: string;
  results: DashboardAbResultsFragment;
}

type Verdict = {
  key: 'significant' | 'not-significant' | 'no-data' | 'too-little-data' | 'collecting';
  text: string;
};

const subjectsOf = (results: DashboardAbResultsFragment) =>
  results.variants.reduce((sum, variant) => sum + variant.observations, 0);

/** How the decision reads: no test is "not significant" before it has data to decide on. */
function verdictOf(results: DashboardAbResultsFragment): Verdict {
  if (subjectsOf(results) === 0) return { key: 'no-data', text: 'no data yet' };
  if (results.analysis === 'sequential') {
    switch (results.sequentialDecision) {
      case 'significant':
        return { key: 'significant', text: 'significant' };
      case 'not_significant':
        return { key: 'not-significant', text: 'not significant' };
      default:
        return { key: 'collecting', text: 'collecting evidence' };
    }
  }
  if (results.chiSquaredPValue === null) return { key: 'too-little-data', text: 'not enough data yet' };
  return results.significant
    ? { key: 'significant', text: 'significant' }
    : { key: 'not-significant', text: 'not significant' };
}

/** Which analysis the card shows, in words: what its decision may be trusted for. */
const ANALYSIS_TEXT = {
  fixed_horizon: {
    name: 'Fixed-horizon analysis',
    meaning: 'valid when read once, at the number of subjects planned before the start',
  },
  sequential: {
    name: 'Sequential analysis',
    meaning: 'safe to check at any time: watching does not make a false winner more likely',
  },
} as const;

/** The test's always-valid p-value: the smallest adjusted one among its comparisons with the control. */
function sequentialPValue(results: DashboardAbResultsFragment): number | null {
  const values = results.variants.flatMap((variant) =>
    variant.sequential?.adjustedPValue == null ? [] : [variant.sequential.adjustedPValue],
  );
  return values.length === 0 ? null : Math.min(...values);
}

function PValue({ field, value }: { field: string; value: number | null }) {
  return (
    <>
      p{value !== null && value < 0.001 ? ' ' : ' = '}
      <span data-field={field} data-value={value === null ? undefined : String(value)}>
        {value === null ? NONE : formatPValue(value)}
      </span>
    </>
  );
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

type VariantRow = DashboardAbResultsFragment['variants'][number];

/** A variant's difference from the control with its confidence sequence, for a sequential test. */
function SequentialCell({ variant }: { variant: VariantRow }) {
  const comparison = variant.sequential;
  const interval = comparison?.confidenceSequence;
  if (variant.isControl || !comparison) {
    return (
      <td class="number muted" data-field="confidence_sequence">
        control
      </td>
    );
  }
  return (
    <td
      class="number"
      data-field="confidence_sequence"
      data-decision={comparison.decision}
      data-lower={interval ? String(interval.lower) : undefined}
      data-upper={interval ? String(interval.upper) : undefined}
    >
      {comparison.difference === null || !interval ? (
        <span class="muted">no data yet</span>
      ) : (
        <>
          {formatPoints(comparison.difference)}{' '}
          <span class="muted">
            ({formatPoints(interval.lower)} to {formatPoints(interval.upper)})
          </span>
          {comparison.decision === 'significant' ? (
            <>
              {' '}
              <span class="badge significant">differs</span>
            </>
          ) : null}
        </>
      )}
    </td>
  );
}

function AbTest({ test }: { test: AbTestSummary }) {
  const { results } = test;
  const verdict = verdictOf(results);
  const scale = scaleOf(results);
  const headingId = `ab-${test.id}`;
  const subjects = subjectsOf(results);
  const sequential = results.analysis === 'sequential';
  const analysis = ANALYSIS_TEXT[results.analysis];
  return (
    <article
      class="ab-test"
      data-ab-test={test.id}
      data-analysis={results.analysis}
      aria-labelledby={headingId}
    >
      <header>
        <h3 id={headingId}>{test.name}</h3>
        <span class={`badge ${verdict.key}`} data-verdict={verdict.key}>
          {verdict.text}
        </span>
      </header>
      <p class="small" data-field="analysis" data-value={results.analysis}>
        <strong>{analysis.name}</strong>: {analysis.meaning}.
      </p>
      <p class="muted small">
        {sequential ? (
          <>
            always-valid <PValue field="always_valid_p_value" value={sequentialPValue(results)} />
          </>
        ) : (
          <PValue field="chi_squared_p_value" value={results.chiSquaredPValue} />
        )}{' '}
        at α = {formatPercent(results.alpha)}, {formatCount(subjects)} subjects
        {!sequential && results.smallSample ? '; small sample, read with care' : ''}
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
            {sequential ? (
              <th scope="col" class="number">
                Difference from control <span class="muted">(always-valid interval)</span>
              </th>
            ) : null}
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
                {sequential ? <SequentialCell variant={variant} /> : null}
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
