import { useEffect, useState } from 'preact/hooks';
import {
  DashboardAcceptReviewedTaskDocument as AcceptTask,
  type DashboardTaskReviewFragment,
  DashboardRejectReviewedTaskDocument as RejectTask,
  DashboardTaskReviewDocument as TaskReviewDocument,
} from '../../../src/generated/dashboard/graphql.js';
import { request } from '../api.js';
import { formatDateTime, roleLabel } from '../format.js';

/**
 * A task's review (docs/reviews.md): who reviews it and, while it is in review, Accept and Reject for those
 * who may decide it (`canReview`: a member, an operator or the chairman). Reads its own data, again when
 * `version` changes; shows nothing for a task that was never reviewed.
 */
export function TaskReview({
  token,
  id,
  version,
  canReview,
}: {
  token: string;
  id: string;
  version: number;
  canReview: boolean;
}) {
  const [task, setTask] = useState<DashboardTaskReviewFragment | null>(null);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  useEffect(() => {
    let active = true;
    request(token, TaskReviewDocument, { id }).then(
      (data) => active && setTask(data.task),
      (error: unknown) => active && setProblem(error instanceof Error ? error.message : String(error)),
    );
    return () => {
      active = false;
    };
  }, [token, id, version]);

  const review = task?.review;
  if (!task || !review) return null;
  const decide = (action: () => Promise<DashboardTaskReviewFragment>) => {
    setBusy(true);
    setProblem(null);
    action().then(
      (next) => {
        setBusy(false);
        setTask(next);
      },
      (error: unknown) => {
        setBusy(false);
        setProblem(error instanceof Error ? error.message : String(error));
      },
    );
  };
  const open = task.status === 'in_review' && review.status === 'pending';
  return (
    <section aria-labelledby="task-review-heading" data-task-review={review.status}>
      <h3 id="task-review-heading">Review</h3>
      <p class="small">
        Reviewed by the <strong data-field="reviewer_role">{roleLabel(review.reviewerRole)}</strong> role;
        completed by {review.requestedBy}.{' '}
        {open ? (
          'Waiting for acceptance: it does not count as completed until accepted.'
        ) : (
          <>
            <span class={`badge ${review.status === 'accepted' ? 'completed' : 'failed'}`}>
              {review.status}
            </span>
            {review.decidedBy ? ` by ${review.decidedBy}` : ''}
            {review.decidedAt ? (
              <>
                {' '}
                on <time dateTime={review.decidedAt}>{formatDateTime(review.decidedAt)}</time>
              </>
            ) : null}
            {review.outcome ? ` (task ${review.outcome})` : ''}
          </>
        )}
      </p>
      {review.note ? (
        <p class="text" data-field="review_note">
          {review.note}
        </p>
      ) : null}
      {problem ? (
        <p class="problem" role="alert" data-review-problem="">
          {problem}
        </p>
      ) : null}
      {open && canReview ? (
        <form
          class="buttons left"
          onSubmit={(event) => {
            event.preventDefault();
            decide(async () => (await request(token, RejectTask, { id, reason: reason.trim() })).rejectTask);
          }}
        >
          <button
            type="button"
            disabled={busy}
            data-review="accept"
            onClick={() => decide(async () => (await request(token, AcceptTask, { id })).acceptTask)}
          >
            Accept
          </button>
          <label>
            Reason to reject{' '}
            <input
              type="text"
              required
              maxLength={2000}
              value={reason}
              data-review-reason=""
              onInput={(event) => setReason((event.target as HTMLInputElement).value)}
            />
          </label>
          <button type="submit" disabled={busy || reason.trim() === ''} data-review="reject">
            Reject
          </button>
        </form>
      ) : null}
    </section>
  );
}
