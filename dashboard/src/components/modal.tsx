import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A modal dialog (the browser's own <dialog>: focus moves into it and stays there, Escape closes it, and
 * focus returns to the control that opened it).
 */
export function Modal({
  labelledBy,
  onClose,
  children,
  kind,
}: {
  labelledBy: string;
  onClose(): void;
  children: ComponentChildren;
  /** For tooling: `data-dialog` of the element. */
  kind: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    // Put back by hand: the dialog may leave the document before it closes, and then the browser does not.
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    if (element && !element.open) element.showModal();
    return () => {
      if (element?.open) element.close();
      if (opener?.isConnected) opener.focus();
    };
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby={labelledBy} data-dialog={kind} onClose={onClose} class="modal">
      {children}
    </dialog>
  );
}
