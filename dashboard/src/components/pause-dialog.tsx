import { useState } from 'preact/hooks';
import { roleLabel } from '../format.js';
import { DialogFooter } from './dialog-footer.js';
import { Modal } from './modal.js';
import type { RoleAction } from './role-card.js';

/** The confirmation of a pause or a resume, with its reason (kept in the audit log, never shown here). */
export function PauseDialog({
  role,
  action,
  onConfirm,
  onClose,
}: {
  role: string;
  action: RoleAction;
  /** Resolves when done; rejects with the server's refusal, shown in the dialog. */
  onConfirm(reason: string): Promise<void>;
  onClose(): void;
}) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const name = roleLabel(role);
  const verb = action === 'pause' ? 'Pause' : 'Resume';
  return (
    <Modal labelledBy="pause-heading" onClose={onClose} kind={action}>
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          setBusy(true);
          setProblem(null);
          onConfirm(reason.trim()).then(
            () => onClose(),
            (error: unknown) => {
              setBusy(false);
              setProblem(error instanceof Error ? error.message : String(error));
            },
          );
        }}
      >
        <h2 id="pause-heading">
          {verb} {name}?
        </h2>
        <p>
          {action === 'pause'
            ? `Tasks for ${name} stay queued, but no agent can take one until ${name} is resumed.`
            : `Agents can take ${name}'s queued tasks again as soon as it is resumed.`}
        </p>
        <label class="field block">
          <span>Reason (optional; kept in the audit log, never shown on the dashboard)</span>
          <textarea
            name="reason"
            rows={3}
            maxLength={1000}
            value={reason}
            onInput={(event) => setReason((event.target as HTMLTextAreaElement).value)}
          />
        </label>
        <DialogFooter
          problem={problem}
          busy={busy}
          danger={action === 'pause'}
          label={busy ? `${verb === 'Pause' ? 'Pausing' : 'Resuming'}…` : `${verb} ${name}`}
          onClose={onClose}
        />
      </form>
    </Modal>
  );
}
