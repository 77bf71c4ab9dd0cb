/**
 * The end of every confirmation dialog: the server's refusal (announced to screen readers), Cancel, and the
 * submit button, marked as dangerous for an action that stops or refuses something.
 */
export function DialogFooter({
  problem,
  busy,
  danger = false,
  label,
  onClose,
}: {
  problem: string | null;
  busy: boolean;
  danger?: boolean;
  /** The submit button's text, already saying what is under way while `busy`. */
  label: string;
  onClose: () => void;
}) {
  return (
    <>
      {problem ? (
        <p class="problem" role="alert" data-problem="">
          {problem}
        </p>
      ) : null}
      <div class="buttons">
        <button type="button" onClick={onClose}>
          Cancel
        </button>
        <button type="submit" class={danger ? 'primary danger' : 'primary'} disabled={busy}>
          {label}
        </button>
      </div>
    </>
  );
}
