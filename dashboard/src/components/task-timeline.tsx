import { useEffect, useRef, useState } from 'preact/hooks';
import type { DashboardTaskStepFragment } from '../../../src/generated/dashboard/graphql.js';
import { request } from '../api.js';
import { TaskSteps } from '../documents.js';
import {
  formatBytes,
  formatCount,
  formatDateTime,
  formatMilliseconds,
  formatTime,
  formatUsd,
  NONE,
  roleLabel,
} from '../format.js';
import { followTaskSteps } from '../live.js';

/** Steps read at a time; "More steps" reads the next page (Task.steps allows 1,000 a page). */
export const STEPS_PAGE = 100;
const MAX_PAGE = 1000;
/** Events within this long of a reread's start are read by that one reread (a 500-step report is one event). */
const COALESCE_MS = 100;

const KIND_LABELS: Record<string, string> = {
  claimed: 'Claimed',
  model_call: 'Model call',
  connector_call: 'Connector call',
  approval_requested: 'Approval asked',
  approval_decided: 'Approval decided',
  delegated: 'Delegated',
  lease_renewed: 'Lease renewed',
  released: 'Released',
  lease_expired: 'Lease expired',
  completed: 'Completed',
  review_requested: 'Review requested',
  review_accepted: 'Accepted by reviewer',
  review_rejected: 'Rejected by reviewer',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** What a step did, in a few words: its model and tokens, its call, its outcome or reason. */
function StepSummary({ step }: { step: DashboardTaskStepFragment }) {
  const parts: string[] = [];
  if (step.model) parts.push(step.model);
  if (step.inputTokens !== null && step.outputTokens !== null) {
    parts.push(`${formatCount(step.inputTokens)} in / ${formatCount(step.outputTokens)} out tokens`);
  } else if (step.tokens) parts.push(`${formatCount(step.tokens)} tokens`);
  if (step.finishReason) parts.push(step.finishReason);
  if (step.endpoint) parts.push(step.endpoint);
  if (step.httpStatus !== null) parts.push(`HTTP ${step.httpStatus}`);
  if (step.bytes !== null) parts.push(formatBytes(step.bytes));
  if (step.routing) parts.push(`routed: ${step.routing}`);
  if (step.outcome) parts.push(step.outcome.replaceAll('_', ' '));
  if (step.reason) parts.push(`“${step.reason}”`);
  return parts.length > 0 ? <span class="step-summary">{parts.join(' · ')}</span> : null;
}

/**
 * A task's run record as a timeline (docs/runs.md): its steps in order with when each began, how long it
 * took and what it cost; a delegation opens its sub-task, an approval step the approval. `version` changes
 * when an event announced a change of the task: the steps shown so far are read again, so new ones appear.
 * While the task has not ended (`live`) the timeline follows `taskStepsRecorded` too, so a model call, a
 * connector call or a lease renewal appears as soon as it is recorded, with no change of status.
 */
export function TaskTimeline({
  token,
  id,
  version,
  live,
  resumePoint,
  childRoles,
  onOpenTask,
  onOpenApproval,
}: {
  token: string;
  id: string;
  version: number;
  /** Whether steps may still be recorded: the task has not ended. */
  live: boolean;
  /** The tenant feed's resume point (LiveFeed.resumePoint): the recorded steps are followed from there. */
  resumePoint(): string | null;
  /** The roles of the task's sub-tasks, by id, to name a delegation's target. */
  childRoles: ReadonlyMap<string, string>;
  onOpenTask(id: string): void;
  /** Shows an approval in the inbox; absent when the viewer cannot read the inbox. */
  onOpenApproval?: (id: string) => void;
}) {
  const [steps, setSteps] = useState<DashboardTaskStepFragment[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  /** Steps shown, so that an event's reread reads as many again (at most a page of 1,000). */
  const shown = useRef(0);
  /** The highest seq read or announced: an event at or below it has nothing new. */
  const known = useRef(0);
  /** Counts the rereads the recorded steps asked for. */
  const [recorded, setRecorded] = useState(0);

  useEffect(() => {
    shown.current = 0;
    known.current = 0;
    setSteps(null);
  }, [id]);

  // Before the read below: the point it follows from is taken before that read, so nothing falls between.
  useEffect(() => {
    if (!live) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A burst of recordings is one reread, at most one per COALESCE_MS.
    const reread = () => {
      timer ??= setTimeout(() => {
        timer = undefined;
        setRecorded((count) => count + 1);
      }, COALESCE_MS);
    };
    const stop = followTaskSteps(
      token,
      id,
      resumePoint(),
      (lastSeq) => {
        if (lastSeq <= known.current) return;
        known.current = lastSeq;
        reread();
      },
      reread,
    );
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, [token, id, live]);

  useEffect(() => {
    let active = true;
    const first = Math.min(Math.max(STEPS_PAGE, shown.current), MAX_PAGE);
    request(token, TaskSteps, { id, first }).then(
      (data) => {
        if (!active) return;
        const page = data.task?.steps;
        shown.current = page?.nodes.length ?? 0;
        known.current = Math.max(known.current, page?.nodes.at(-1)?.seq ?? 0);
        setSteps(page?.nodes ?? []);
        setNext(page?.nextCursor ?? null);
      },
      (error: unknown) => active && setProblem(error instanceof Error ? error.message : String(error)),
    );
    return () => {
      active = false;
    };
  }, [token, id, version, recorded]);

  const more = () => {
    if (!next) return;
    setBusy(true);
    request(token, TaskSteps, { id, first: STEPS_PAGE, after: next }).then(
      (data) => {
        setBusy(false);
        const page = data.task?.steps;
        if (!page) return;
        shown.current += page.nodes.length;
        known.current = Math.max(known.current, page.nodes.at(-1)?.seq ?? 0);
        setSteps((current) => [...(current ?? []), ...page.nodes]);
        setNext(page.nextCursor);
      },
      (error: unknown) => {
        setBusy(false);
        setProblem(error instanceof Error ? error.message : String(error));
      },
    );
  };

  return (
    <section
      class="timeline"
      aria-labelledby="timeline-heading"
      data-timeline=""
      data-live={live ? 'true' : 'false'}
    >
      <h3 id="timeline-heading">Timeline</h3>
      {problem ? (
        <p class="problem" role="alert">
          {problem}
        </p>
      ) : null}
      {steps === null ? <p class="muted">Loading…</p> : null}
      {steps?.length === 0 ? <p class="muted">No steps yet.</p> : null}
      {steps && steps.length > 0 ? (
        <ol class="steps">
          {steps.map((step) => (
            <li
              key={step.id}
              data-step-seq={step.seq}
              data-step-kind={step.kind}
              data-attempt={step.attempt}
              data-charged={String(step.charged)}
            >
              <span class="step-seq" aria-hidden="true">
                {step.seq}
              </span>
              <div class="step-body">
                <div class="step-head">
                  <strong class="step-kind">{KIND_LABELS[step.kind] ?? step.kind}</strong>{' '}
                  <time class="muted small" dateTime={step.startedAt} title={formatDateTime(step.startedAt)}>
                    {formatTime(step.startedAt)}
                  </time>
                  <span class="muted small"> · attempt {step.attempt}</span>
                  <span class="step-figures">
                    <span
                      data-field="step-duration"
                      data-value={step.durationMs === null ? undefined : String(step.durationMs)}
                    >
                      {step.durationMs === null ? NONE : formatMilliseconds(step.durationMs)}
                    </span>
                    <span data-field="step-cost" data-value={step.costUsdText}>
                      {step.costUsd === 0 ? (
                        NONE
                      ) : step.charged ? (
                        formatUsd(step.costUsd)
                      ) : (
                        <s title="Not charged: its attempt ended without a completion or delegation">
                          {formatUsd(step.costUsd)}
                          <span class="sr-only"> (not charged)</span>
                        </s>
                      )}
                    </span>
                  </span>
                </div>
                <StepSummary step={step} />
                {step.childTaskId ? (
                  <div>
                    <button
                      type="button"
                      class="link"
                      data-step-link="subtask"
                      data-task-id={step.childTaskId}
                      onClick={() => step.childTaskId && onOpenTask(step.childTaskId)}
                    >
                      Open sub-task {roleLabel(childRoles.get(step.childTaskId) ?? 'task')} ·{' '}
                      {step.childTaskId.slice(0, 8)}
                    </button>
                  </div>
                ) : null}
                {step.approvalId ? (
                  <div>
                    {onOpenApproval ? (
                      <button
                        type="button"
                        class="link"
                        data-step-link="approval"
                        data-approval-id={step.approvalId}
                        onClick={() => step.approvalId && onOpenApproval(step.approvalId)}
                      >
                        Show approval {step.approvalId.slice(0, 8)}
                      </button>
                    ) : (
                      <span class="muted small">Approval {step.approvalId.slice(0, 8)}</span>
                    )}
                  </div>
                ) : null}
              </div>
            </li>
          ))}
        </ol>
      ) : null}
      {next ? (
        <button type="button" data-steps-more="" disabled={busy} onClick={more}>
          More steps
        </button>
      ) : null}
    </section>
  );
}
