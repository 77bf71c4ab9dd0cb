import { useState } from 'preact/hooks';
import type { DashboardApprovalFragment } from '../../../src/generated/dashboard/graphql.js';
import { type ApprovalDecision, DECISIONS } from './approvals.js';
import { DialogFooter } from './dialog-footer.js';
import { Modal } from './modal.js';

const CONSEQUENCE: Record<ApprovalDecision, string> = {
  approve: 'The gateway sends this call once, now, and keeps its answer for the requester.',
  reject: 'Nothing is sent; the request ends.',
  request_changes: 'Nothing is sent; the requester reads your note and may ask again.',
};

/** The confirmation of a decision on a gated connector call, with an optional note (audited). */
export function ApprovalDialog({
  approval,
  decision,
  onConfirm,
  onClose,
}: {
  /** The request as the inbox shows it; only its id when opened by id. */
  approval: Pick<DashboardApprovalFragment, 'id'> & Partial<DashboardApprovalFragment>;
  decision: ApprovalDecision;
  /** Resolves when done; rejects with the server's refusal, shown in the dialog. */
  onConfirm(note: string): Promise<void>;
  onClose(): void;
}) {
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const { verb } = DECISIONS[decision];
  const what = approval.method ? `${approval.method} ${approval.path}` : `request ${approval.id.slice(0, 8)}`;
  return (
    <Modal labelledBy="approval-heading" onClose={onClose} kind="approval">
      <form
        method="dialog"
        data-decision={decision}
        onSubmit={(event) => {
          event.preventDefault();
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
          {verb} <code>{what}</code>?
        </h2>
        <p>
          {approval.requestedBy ? `Asked by ${approval.requestedBy}. ` : null}
          {CONSEQUENCE[decision]}
        </p>
        <label class="field block">
          <span>
            Note (optional; {decision === 'request_changes' ? 'say what to change; ' : ''}kept with the
            decision and in the audit log)
          </span>
          <textarea
            name="note"
            rows={3}
            maxLength={2000}
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
