import type {
  DashboardCanaryFragment,
  DashboardModelVersionFragment,
} from '../../../src/generated/dashboard/graphql.js';
import { formatDateTime, formatPercent, formatPoints } from '../format.js';

/** A base model in production, with its canary, or the last canary analysis that decided. */
export type ModelRow = DashboardModelVersionFragment & { canary: DashboardCanaryFragment | null };

/** The version on canary, else the one whose canary analysis decided last; null when neither exists. */
export function canaryOf(versions: DashboardCanaryFragment[]): DashboardCanaryFragment | null {
  const running = versions.find((version) => version.deploymentStatus === 'canary');
  if (running) return running;
  let last: DashboardCanaryFragment | null = null;
  for (const version of versions) {
    const decidedAt = version.canaryAnalysis?.decidedAt;
    if (!decidedAt) continue;
    if (!last?.canaryAnalysis?.decidedAt || decidedAt > last.canaryAnalysis.decidedAt) last = version;
  }
  return last;
}

/** One guardrail of the evidence, as the analysis stores it. */
interface GuardrailEvidence {
  metric: string;
  verdict: string;
  difference: number | null;
  confidenceSequence: { lower: number; upper: number } | null;
  confidence: number;
}

const STATE_TEXT: Record<string, string> = {
  collecting: 'collecting outcomes',
  inconclusive: 'no verdict yet',
  worse: 'worse than production',
  not_worse: 'not worse than production',
  expired: 'ran out of time without a verdict',
};
const ACTION_TEXT: Record<string, string> = {
  rolled_back: 'rolled back',
  promoted: 'promoted',
  recommended: 'recommendation only',
};
const metricText = (metric: string) => metric.replaceAll('_', ' ');

function guardrailText(guardrail: GuardrailEvidence): string {
  if (guardrail.difference === null) return `${metricText(guardrail.metric)}: no outcomes yet`;
  const interval = guardrail.confidenceSequence
    ? `, ${formatPercent(guardrail.confidence)} interval ${formatPoints(guardrail.confidenceSequence.lower)} to ${formatPoints(guardrail.confidenceSequence.upper)}`
    : '';
  return `${metricText(guardrail.metric)} ${formatPoints(guardrail.difference)}${interval} (${STATE_TEXT[guardrail.verdict] ?? guardrail.verdict})`;
}

function Canary({ canary }: { canary: DashboardCanaryFragment | null }) {
  if (!canary) return <span class="muted">None</span>;
  const analysis = canary.canaryAnalysis;
  const evidence = (analysis?.evidence ?? {}) as {
    canary_tasks?: number;
    minimum_tasks?: number;
    guardrails?: GuardrailEvidence[];
  };
  const share =
    canary.deploymentStatus === 'canary' && canary.canaryTrafficPct !== null
      ? `, ${canary.canaryTrafficPct}% of conversations`
      : '';
  return (
    <div data-field="canary" data-state={analysis?.state ?? 'no_policy'}>
      <p>
        v{canary.versionNumber}
        {share}:{' '}
        {analysis ? (
          analysis.decided && analysis.action ? (
            <>
              <strong data-field="canary_action" data-value={analysis.action}>
                {ACTION_TEXT[analysis.action] ?? analysis.action}
              </strong>{' '}
              ({STATE_TEXT[analysis.state] ?? analysis.state})
              {analysis.decidedAt ? (
                <>
                  {' '}
                  on <time dateTime={analysis.decidedAt}>{formatDateTime(analysis.decidedAt)}</time>
                </>
              ) : null}
            </>
          ) : (
            <>
              {STATE_TEXT[analysis.state] ?? analysis.state}
              {evidence.canary_tasks !== undefined && evidence.minimum_tasks !== undefined
                ? ` (${evidence.canary_tasks} of at least ${evidence.minimum_tasks} tasks)`
                : ''}
            </>
          )
        ) : (
          'no rollout policy: nothing judges it'
        )}
      </p>
      {evidence.guardrails?.length ? (
        <ul class="evidence">
          {evidence.guardrails.map((guardrail) => (
            <li key={guardrail.metric}>{guardrailText(guardrail)}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

export function Models({ models }: { models: ModelRow[] }) {
  return (
    <section class="panel models" aria-labelledby="models-heading">
      <h2 id="models-heading">Production models</h2>
      {models.length === 0 ? (
        <p class="muted">No base model in production.</p>
      ) : (
        <div class="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Base model</th>
                <th scope="col">Version</th>
                <th scope="col">Provider</th>
                <th scope="col">Since</th>
                <th scope="col">Canary</th>
              </tr>
            </thead>
            <tbody>
              {models.map((model) => (
                <tr key={model.id} data-base-model={model.baseModel}>
                  <th scope="row">{model.baseModel}</th>
                  <td data-field="version_number" data-value={String(model.versionNumber)}>
                    v{model.versionNumber}
                  </td>
                  <td>{model.provider}</td>
                  <td>
                    <time dateTime={model.updatedAt}>{formatDateTime(model.updatedAt)}</time>
                  </td>
                  <td>
                    <Canary canary={model.canary} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
