import { useEffect, useState } from 'preact/hooks';
import type {
  DashboardRecommendationFragment,
  DashboardSubTaskFragment,
  DashboardTaskQuery,
} from '../../../src/generated/dashboard/graphql.js';
import { request } from '../api.js';
import { DecideRecommendation, RecordOutcome, TaskDetail as TaskDocument } from '../documents.js';
import {
  formatBytes,
  formatCount,
  formatDateTime,
  formatSeconds,
  formatUsd,
  NONE,
  roleLabel,
} from '../format.js';
import { Modal } from './modal.js';
import { TaskReview } from './task-review.js';
import { TaskTimeline } from './task-timeline.js';
import { durationOf } from './tasks.js';

type Task = NonNullable<DashboardTaskQuery['task']>;

/** Statuses after which a task records no more steps. */
const ENDED: readonly string[] = ['completed', 'failed', 'cancelled'];

const when = (iso: string | null) => (iso ? <time dateTime={iso}>{formatDateTime(iso)}</time> : NONE);

function Recommendation({
  token,
  recommendation,
  canDecide,
  onChange,
  onProblem,
}: {
  token: string;
  recommendation: DashboardRecommendationFragment;
  canDecide: boolean;
  onChange(next: DashboardRecommendationFragment): void;
  onProblem(message: string | null): void;
}) {
  const [busy, setBusy] = useState(false);
  const run = (action: () => Promise<DashboardRecommendationFragment>) => {
    setBusy(true);
    onProblem(null);
    action().then(
      (next) => {
        setBusy(false);
        onChange(next);
      },
      (error: unknown) => {
        setBusy(false);
        onProblem(error instanceof Error ? error.message : String(error));
      },
    );
  };
  const { accepted, outcomeMatched } = recommendation;
  const decision = accepted === null ? 'undecided' : accepted ? 'accepted' : 'rejected';
  const outcome = outcomeMatched === null ? 'not recorded' : outcomeMatched ? 'matched' : 'missed';
  const summaryId = `recommendation-${recommendation.id}`;
  return (
    <li
      data-recommendation-id={recommendation.id}
      data-decision={decision}
      data-outcome={outcomeMatched === null ? 'none' : outcome}
    >
      <p id={summaryId} class="recommendation-summary">
        {recommendation.summary}
      </p>
      {recommendation.predictedOutcome ? (
        <p class="small">Predicted outcome: {recommendation.predictedOutcome}</p>
      ) : null}
      <p class="small muted">
        {accepted === null
          ? 'Not decided yet.'
          : `${decision === 'accepted' ? 'Accepted' : 'Rejected'} by ${recommendation.decidedBy ?? 'unknown'}`}
        {recommendation.decidedAt ? <> on {when(recommendation.decidedAt)}</> : null}
        {recommendation.predictedOutcome ? `; outcome ${outcome}.` : null}
      </p>
      {canDecide ? (
        <div class="buttons left">
          <fieldset class="choice" aria-describedby={summaryId}>
            <legend class="sr-only">Decision</legend>
            <button
              type="button"
              aria-pressed={accepted === true}
              disabled={busy}
              data-decide="accept"
              onClick={() =>
                run(
                  async () =>
                    (await request(token, DecideRecommendation, { id: recommendation.id, accepted: true }))
                      .decideRecommendation,
                )
              }
            >
              Accept
            </button>
            <button
              type="button"
              aria-pressed={accepted === false}
              disabled={busy}
              data-decide="reject"
              onClick={() =>
                run(
                  async () =>
                    (await request(token, DecideRecommendation, { id: recommendation.id, accepted: false }))
                      .decideRecommendation,
                )
              }
            >
              Reject
            </button>
          </fieldset>
          {recommendation.predictedOutcome ? (
            <fieldset class="choice" aria-describedby={summaryId}>
              <legend class="sr-only">Outcome</legend>
              <button
                type="button"
                aria-pressed={outcomeMatched === true}
                disabled={busy}
                data-outcome-button="matched"
                onClick={() =>
                  run(
                    async () =>
                      (await request(token, RecordOutcome, { id: recommendation.id, matched: true }))
                        .recordRecommendationOutcome,
                  )
                }
              >
                Outcome matched
              </button>
              <button
                type="button"
                aria-pressed={outcomeMatched === false}
                disabled={busy}
                data-outcome-button="missed"
                onClick={() =>
                  run(
                    async () =>
                      (await request(token, RecordOutcome, { id: recommendation.id, matched: false }))
                        .recordRecommendationOutcome,
                  )
                }
              >
                Outcome missed
              </button>
            </fieldset>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}

/** A sub-task and those under it (three levels are read; deeper ones open from their parent). */
type SubTask = DashboardSubTaskFragment & { children?: SubTask[] };

function SubTasks({ tasks, onOpen }: { tasks: readonly SubTask[]; onOpen(id: string): void }) {
  return (
    <ul class="task-tree">
      {tasks.map((task) => (
        <li key={task.id} data-subtask={task.id} data-status={task.status}>
          <button type="button" class="link" onClick={() => onOpen(task.id)}>
            {roleLabel(task.role)} · task {task.id.slice(0, 8)}
          </button>{' '}
          <span class={`badge ${task.status}`}>{task.status}</span>{' '}
          <span class="muted small">
            {task.costUsd === null ? 'no cost yet' : formatUsd(task.costUsd)}
            {task.costCapUsd === null ? '' : ` of a ${formatUsd(task.costCapUsd)} cap`}
          </span>
          {task.children && task.children.length > 0 ? (
            <SubTasks tasks={task.children} onOpen={onOpen} />
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/** Where a task sits in its delegation tree: who delegated it, what it delegated, the tree's whole cost. */
function Delegation({ task, onOpen }: { task: Task; onOpen(id: string): void }) {
  if (!task.parent && task.children.length === 0) return null;
  return (
    <>
      <h3>Delegation</h3>
      <dl class="facts" data-delegation="">
        {task.parent ? (
          <div>
            <dt>Delegated by</dt>
            <dd data-field="parent">
              <button type="button" class="link" onClick={() => task.parent && onOpen(task.parent.id)}>
                {roleLabel(task.parent.role)} · task {task.parent.id.slice(0, 8)}
              </button>{' '}
              ({task.parent.status})
            </dd>
          </div>
        ) : null}
        {task.costCapUsd === null ? null : (
          <div>
            <dt>Cost cap</dt>
            <dd data-field="cost_cap_usd">{formatUsd(task.costCapUsd)}</dd>
          </div>
        )}
        <div>
          <dt>Cost with sub-tasks</dt>
          <dd data-field="tree_cost_usd" data-value={String(task.treeCost.costUsd)}>
            {formatUsd(task.treeCost.costUsd)} ({formatCount(task.treeCost.tokensUsed)} tokens)
          </dd>
        </div>
      </dl>
      {task.children.length > 0 ? (
        <>
          <h4>Sub-tasks</h4>
          <SubTasks tasks={task.children} onOpen={onOpen} />
        </>
      ) : null}
    </>
  );
}

/** A task in full, in a dialog: what was asked, what came back, what it cost and took, and its advice. */
export function TaskDetail({
  token,
  id,
  version,
  canDecide,
  onDecided,
  onOpen,
  onOpenApproval,
  onClose,
  resumePoint,
}: {
  token: string;
  id: string;
  /** The tenant feed's resume point, from which a running task's timeline follows its recorded steps. */
  resumePoint(): string | null;
  /** A recommendation of the task's role was decided or its outcome recorded: its vitals changed. */
  onDecided(role: string): void;
  /** Changes when an event announced a change of this task: it is read again. */
  version: number;
  canDecide: boolean;
  /** Opens another task of the tree (its parent or a sub-task) in place of this one. */
  onOpen(id: string): void;
  /** Shows an approval of the task in the inbox; absent when the viewer cannot read the inbox. */
  onOpenApproval?: (id: string) => void;
  onClose(): void;
}) {
  const [task, setTask] = useState<Task | null | undefined>(undefined);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let active = true;
    request(token, TaskDocument, { id }).then(
      (data) => active && setTask(data.task),
      (error: unknown) => active && setProblem(error instanceof Error ? error.message : String(error)),
    );
    return () => {
      active = false;
    };
  }, [token, id, version]);

  const duration = task ? durationOf(task) : null;
  const replace = (next: DashboardRecommendationFragment) => {
    setTask((current) =>
      current
        ? {
            ...current,
            recommendations: current.recommendations.map((one) => (one.id === next.id ? next : one)),
          }
        : current,
    );
    if (task) onDecided(task.role);
  };

  return (
    <Modal labelledBy="task-heading" onClose={onClose} kind="task">
      <div class="task-detail" data-task-detail={id} data-status={task?.status}>
        <header class="panel-header">
          <h2 id="task-heading">
            Task {id.slice(0, 8)}
            {task ? ` · ${roleLabel(task.role)} · ${task.status}` : ''}
          </h2>
          <button type="button" onClick={onClose} data-close="">
            Close
          </button>
        </header>
        {problem ? (
          <p class="problem" role="alert" data-problem="">
            {problem}
          </p>
        ) : null}
        {task === undefined ? <p class="muted">Loading…</p> : null}
        {task === null ? <p class="muted">There is no such task in this tenant.</p> : null}
        {task ? (
          <>
            <dl class="facts">
              <div>
                <dt>Created</dt>
                <dd>
                  {when(task.createdAt)} by {task.createdBy}
                </dd>
              </div>
              <div>
                <dt>Started</dt>
                <dd>{when(task.startedAt)}</dd>
              </div>
              <div>
                <dt>Finished</dt>
                <dd>{when(task.finishedAt)}</dd>
              </div>
              <div>
                <dt>Duration</dt>
                <dd data-field="duration_seconds">{duration === null ? NONE : formatSeconds(duration)}</dd>
              </div>
              <div>
                <dt>Attempts</dt>
                <dd>{formatCount(task.attempts)}</dd>
              </div>
              <div>
                <dt>Agent</dt>
                <dd>{task.claimedBy ?? NONE}</dd>
              </div>
              <div>
                <dt>Tokens</dt>
                <dd
                  data-field="tokens_used"
                  data-value={task.tokensUsed === null ? undefined : String(task.tokensUsed)}
                >
                  {task.tokensUsed === null ? NONE : formatCount(task.tokensUsed)}
                </dd>
              </div>
              <div>
                <dt>Cost</dt>
                <dd
                  data-field="cost_usd"
                  data-value={task.costUsd === null ? undefined : String(task.costUsd)}
                >
                  {task.costUsd === null ? NONE : formatUsd(task.costUsd)}
                </dd>
              </div>
              {task.modelVersion ? (
                <div>
                  <dt>Model version</dt>
                  <dd data-field="model_version">
                    {task.modelVersion.baseModel} v{task.modelVersion.versionNumber}
                  </dd>
                </div>
              ) : null}
            </dl>
            <h3>Message</h3>
            <p class="text" data-field="message">
              {task.message}
            </p>
            <h3>Attachments</h3>
            {task.attachments.length === 0 ? (
              <p class="muted">None.</p>
            ) : (
              <ul data-field="attachments">
                {task.attachments.map((attachment) => (
                  <li key={attachment.id}>
                    {attachment.filename ?? 'unnamed'}{' '}
                    <span class="muted">
                      ({attachment.mimeType}, {formatBytes(attachment.size)})
                    </span>
                  </li>
                ))}
              </ul>
            )}
            <h3>Output</h3>
            {task.output ? (
              <p class="text" data-field="output">
                {task.output}
              </p>
            ) : (
              <p class="muted">{task.status === 'completed' ? 'No output.' : 'Not finished yet.'}</p>
            )}
            {task.deliverables.length > 0 ? (
              <>
                <h3>Deliverables</h3>
                <ul data-field="deliverables">
                  {task.deliverables.map((deliverable) => (
                    <li key={deliverable.id} data-deliverable-kind={deliverable.kind}>
                      {deliverable.title ? <strong>{deliverable.title}: </strong> : null}
                      {deliverable.kind === 'LINK' && deliverable.url ? (
                        <a href={deliverable.url} rel="noopener noreferrer" target="_blank">
                          {deliverable.url}
                        </a>
                      ) : deliverable.kind === 'FILE' ? (
                        <>
                          {deliverable.filename ?? 'unnamed'}{' '}
                          <span class="muted">
                            ({deliverable.mimeType}, {formatBytes(deliverable.size)})
                          </span>
                        </>
                      ) : (
                        <span class="text">{deliverable.text}</span>
                      )}{' '}
                      <code class="muted" title={`SHA-256 ${deliverable.sha256}`}>
                        {deliverable.sha256.slice(0, 12)}
                      </code>
                    </li>
                  ))}
                </ul>
              </>
            ) : null}
            {task.error ? (
              <>
                <h3>Error</h3>
                <p class="text" data-field="error">
                  {task.error}
                </p>
              </>
            ) : null}
            <TaskReview token={token} id={id} version={version} canReview={canDecide} />
            <TaskTimeline
              token={token}
              id={id}
              version={version}
              live={!ENDED.includes(task.status)}
              resumePoint={resumePoint}
              childRoles={new Map(task.children.map((child) => [child.id, child.role]))}
              onOpenTask={onOpen}
              onOpenApproval={onOpenApproval}
            />
            <Delegation task={task} onOpen={onOpen} />
            <h3>Recommendations</h3>
            {task.recommendations.length === 0 ? (
              <p class="muted">None.</p>
            ) : (
              <ul class="recommendations">
                {task.recommendations.map((recommendation) => (
                  <Recommendation
                    key={recommendation.id}
                    token={token}
                    recommendation={recommendation}
                    canDecide={canDecide}
                    onChange={replace}
                    onProblem={setProblem}
                  />
                ))}
              </ul>
            )}
          </>
        ) : null}
      </div>
    </Modal>
  );
}
