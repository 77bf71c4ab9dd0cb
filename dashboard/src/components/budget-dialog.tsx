import { useState } from 'preact/hooks';
import type { BudgetPeriod, DashboardRoleFieldsFragment } from '../../../src/generated/dashboard/graphql.js';
import { roleLabel } from '../format.js';
import { DialogFooter } from './dialog-footer.js';
import { Modal } from './modal.js';

type Budget = NonNullable<DashboardRoleFieldsFragment['budget']>;

export interface BudgetChange {
  period: BudgetPeriod;
  limitUsd: string;
  estimateUsd: string;
  /** A share, 0 to 1. */
  warningThreshold: number;
}

/** A dollar amount as the API takes it ("1,250" and "$12.50" too): digits, at most 6 decimals. */
const plainDollars = (text: string) => text.trim().replace(/^\$/, '').replace(/,/g, '');
const DOLLARS = /^\d{1,10}(\.\d{1,6})?$/;

/** The confirmation of a role's budget: period, limit, the estimate each claim holds, warning share. */
export function BudgetDialog({
  role,
  budget,
  onConfirm,
  onClose,
}: {
  /** Null: the company's budget, over every role. */
  role: string | null;
  /** The role's budget now (the company's for role null), null when none is set. */
  budget: Budget | null;
  /** Resolves when done; rejects with the server's refusal, shown in the dialog. */
  onConfirm(change: BudgetChange): Promise<void>;
  onClose(): void;
}) {
  const [period, setPeriod] = useState<BudgetPeriod>(budget?.period ?? 'month');
  const [limit, setLimit] = useState(budget ? String(Number(budget.limitUsd)) : '');
  const [estimate, setEstimate] = useState(budget ? String(Number(budget.estimateUsd)) : '1');
  const [warning, setWarning] = useState(String(Math.round((budget?.warningThreshold ?? 0.8) * 100)));
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const name = role === null ? 'the company' : roleLabel(role);
  const whose = role === null ? 'the company’s' : `${name}’s`;
  return (
    <Modal labelledBy="budget-heading" onClose={onClose} kind="budget">
      <form
        method="dialog"
        onSubmit={(event) => {
          event.preventDefault();
          const wrong = [
            [limit, 'The limit'],
            [estimate, 'What each task holds'],
          ].find(([text]) => !DOLLARS.test(plainDollars(text ?? '')));
          if (wrong) {
            setProblem(`${wrong[1]} should be an amount of US dollars, such as 250 or 12.50.`);
            return;
          }
          setBusy(true);
          setProblem(null);
          onConfirm({
            period,
            limitUsd: plainDollars(limit),
            estimateUsd: plainDollars(estimate),
            warningThreshold: Number(warning) / 100,
          }).then(
            () => onClose(),
            (error: unknown) => {
              setBusy(false);
              setProblem(error instanceof Error ? error.message : String(error));
            },
          );
        }}
      >
        <h2 id="budget-heading">
          {budget ? 'Change' : 'Set'} {whose} budget?
        </h2>
        <p>
          {role === null
            ? 'Each task any role takes holds the estimate until it ends; once spent and held would pass the limit, no role takes new work until the next period.'
            : `Each task ${name} takes holds the estimate until it ends; once spent and held would pass the limit, ${name} takes no new work until the next period.`}{' '}
          A limit below what this period already spent stops new work at once.
        </p>
        <div class="form-grid">
          <label class="field block">
            <span>Period</span>
            <select
              name="period"
              value={period}
              onChange={(event) => setPeriod((event.target as HTMLSelectElement).value as BudgetPeriod)}
            >
              <option value="day">Each day (UTC)</option>
              <option value="month">Each month (UTC)</option>
            </select>
          </label>
          <label class="field block">
            <span>Limit (US dollars)</span>
            <input
              name="limit"
              inputMode="decimal"
              required
              autoComplete="off"
              value={limit}
              onInput={(event) => setLimit((event.target as HTMLInputElement).value)}
            />
          </label>
          <label class="field block">
            <span>Held per task (US dollars)</span>
            <input
              name="estimate"
              inputMode="decimal"
              required
              autoComplete="off"
              value={estimate}
              onInput={(event) => setEstimate((event.target as HTMLInputElement).value)}
            />
          </label>
          <label class="field block">
            <span>Warn at (% of the limit)</span>
            <input
              name="warning"
              type="number"
              min={1}
              max={100}
              step={1}
              required
              value={warning}
              onInput={(event) => setWarning((event.target as HTMLInputElement).value)}
            />
          </label>
        </div>
        <DialogFooter
          problem={problem}
          busy={busy}
          label={busy ? 'Saving…' : `Set ${whose} budget`}
          onClose={onClose}
        />
      </form>
    </Modal>
  );
}
