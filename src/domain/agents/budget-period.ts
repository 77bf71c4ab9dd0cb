export type BudgetPeriodKind = 'day' | 'month';

export interface PeriodBounds {
  start: Date;
  /** Exclusive: the start of the next period. */
  end: Date;
}

/** The UTC day or calendar month containing `at`. Tenants have no time zone yet, so every period is UTC. */
export function periodBounds(kind: BudgetPeriodKind, at: Date): PeriodBounds {
  const year = at.getUTCFullYear();
  const month = at.getUTCMonth();
  if (kind === 'month')
    return { start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) };
  const day = at.getUTCDate();
  return { start: new Date(Date.UTC(year, month, day)), end: new Date(Date.UTC(year, month, day + 1)) };
}
