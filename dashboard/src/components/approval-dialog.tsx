import { useState } from 'preact/hooks';
import type {
  DashboardApprovalFragment,
  DashboardTaskApprovalFragment,
} from '../../../src/generated/dashboard/graphql.js';
import { type ApprovalDecision, DECISIONS, type InboxKind } from './approvals.js';
import { DialogFooter } from './dialog-footer.js';
import { Modal } from './modal.js';

const CONSEQUENCE: Record<InboxKind, Record<ApprovalDecision, string>> = {
  connector_call: {
    approve: 'The gateway sends this call once, now, and keeps its answer for the requester.',
    reject: 'Nothing is sent; the request ends.',
    request_changes: 'Nothing is sent; the requester reads your note and may ask again.',
  },
  task: {
    approve: 'The task returns to the queue; the agent reads your approval when it takes the task again.',
    reject: 'The task returns to the queue; the agent reads your refusal and why when it takes it again.',
    request_changes:
      'The task returns to the queue; the agent reads your note when it takes it again, and may ask again.',
  },
};

/** What the dialog asks about: a request as the inbox shows it, or only its id when opened by id. */
export type DialogRequest =
  | {
      kind: 'connector_call';
      approval: Pick<DashboardApprovalFragment, 'id'> & Partial<DashboardApprovalFragment>;
    }
  | {
      kind: 'task';
      approval: Pick<DashboardTaskApprovalFragment, 'id'> & Partial<DashboardTaskApprovalFragment>;
    };

/** Whether a decision must say why: rejecting an agent's question on a task (the server requires it). */
export const noteRequired = (kind: InboxKind, decision: ApprovalDecision) =>
  kind === 'task' && decision === 'reject';

/**
 * The confirmation of a decision on a gated connector call or on an agent's question about a task, with a
 * note (audited), required to reject a task's request.
 */
export function ApprovalDialog({
  request,
  decision,
  onConfirm,
  onClose,
}: {
  request: DialogRequest;
  decision: ApprovalDecision;
  /** Resolves when done; rejects with the server's refusal, shown in the dialog. */
  onConfirm(note: string): Promise<void>;
  onClose(): void;
}) {
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const { verb } = DECISIONS[decision];
  const { kind, approval } = request;
  const required = noteRequired(kind, decision);
  const what =
    request.kind === 'connector_call'
      ? request.approval.method
        ? `${request.approval.method} ${request.approval.path}`
        : `request ${approval.id.slice(0, 8)}`
      : request.approval.summary
        ? request.approval.summary
        : `question ${approval.id.slice(0, 8)}`;
  const hint = required
    ? 'Note (required: say why; the agent reads it, and it is kept with the decision and in the audit log)'
    : `Note (optional; ${decision === 'request_changes' ? 'say what to change; ' : ''}kept with the decision and in the audit log)`;
  return (
    <Modal labelledBy="approval-heading" onClose={onClose} kind="approval">
      <form
        method="dialog"
        data-decision={decision}
        data-kind={kind}
        onSubmit={(event) => {
          event.preventDefault();
          if (required && !note.trim()) {
            setProblem('A rejection needs a note saying why: the agent reads it.');
            (event.currentTarget as HTMLFormElement).querySelector('textarea')?.focus();
            return;
          }
          setBusy(true);
          setProblem(null);
          onConfirm(note.trim()).then(
            () => onClose(),
            (error: unknown) => {
              setBusy(false);
              setProblem(error instanceof Error ? error.message : String(error));
            },
          );
        }}
      >
        <h2 id="approval-heading">
          {verb} {kind === 'task' ? <>“{what}”</> : <code>{what}</code>}
          {/* A question already ends with its own mark. */}
          {what.endsWith('?') ? null : '?'}
        </h2>
        <p>
          {approval.requestedBy ? `Asked by ${approval.requestedBy}. ` : null}
          {CONSEQUENCE[kind][decision]}
        </p>
        <label class="field block">
          <span>{hint}</span>
          <textarea
            name="note"
            rows={3}
            maxLength={2000}
            aria-required={required ? 'true' : undefined}
            value={note}
            onInput={(event) => setNote((event.target as HTMLTextAreaElement).value)}
          />
        </label>
        <DialogFooter
          problem={problem}
          busy={busy}
          danger={decision === 'reject'}
          label={busy ? 'Sending…' : verb.replace(/ to$/, '')}
          onClose={onClose}
        />
      </form>
    </Modal>
  );
}
