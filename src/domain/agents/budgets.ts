import { recordAudit } from '../../audit.js';
import { enqueueEvent } from '../../events/outbox.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { type BudgetPeriodKind, periodBounds } from './budget-period.js';

const { Decimal } = Prisma;
type Decimal = Prisma.Decimal;

/** The `role` of the budget that covers the tenant as a whole (no agent role slug can be `*`). */
export const TENANT_BUDGET = '*';

/** A budget as it stands in the period current at `at`: counters of an ended period read as rolled over. */
export interface BudgetState {
  id: string;
  tenantId: string;
  /** The agent role, or null for the tenant as a whole. */
  role: string | null;
  period: BudgetPeriodKind;
  limitUsd: Decimal;
  limitTokens: bigint | null;
  warningThreshold: Decimal;
  estimateUsd: Decimal;
  estimateTokens: bigint;
  periodStart: Date;
  periodEnd: Date;
  spentUsd: Decimal;
  spentTokens: bigint;
  reservedUsd: Decimal;
  reservedTokens: bigint;
  /** Cost charged this period beyond what the tasks had reserved. */
  overshootUsd: Decimal;
  warnedAt: Date | null;
  exhaustedAt: Date | null;
  updatedAt: Date;
}

export interface BudgetRow {
  id: string;
  tenant_id: string;
  role: string;
  period: BudgetPeriodKind;
  limit_usd: string;
  limit_tokens: bigint | null;
  warning_threshold: string;
  estimate_usd: string;
  estimate_tokens: bigint;
  period_start: Date;
  spent_usd: string;
  spent_tokens: bigint;
  reserved_usd: string;
  reserved_tokens: bigint;
  overshoot_usd: string;
  warned_at: Date | null;
  exhausted_at: Date | null;
  updated_at: Date;
  now: Date;
}

const budgetColumns = Prisma.sql`
  id::text, tenant_id::text, role, period::text, limit_usd::text, limit_tokens, warning_threshold::text,
  estimate_usd::text, estimate_tokens, period_start, spent_usd::text, spent_tokens, reserved_usd::text,
  reserved_tokens, overshoot_usd::text, warned_at, exhausted_at, updated_at, now() AS now`;

/**
 * The budget as of `at`. A period that ended resets spent, overshoot and the alert stamps (reservations of
 * running tasks carry over); a period that starts later than `at` (another instance's clock ran ahead) is
 * kept, so periods only move forward.
 */
export function budgetState(row: BudgetRow, at: Date): BudgetState {
  const current = periodBounds(row.period, at);
  const rolled = row.period_start.getTime() < current.start.getTime();
  const periodStart = rolled ? current.start : row.period_start;
  return {
    id: row.id,
    tenantId: row.tenant_id,
    role: row.role === TENANT_BUDGET ? null : row.role,
    period: row.period,
    limitUsd: new Decimal(row.limit_usd),
    limitTokens: row.limit_tokens === null ? null : BigInt(row.limit_tokens),
    warningThreshold: new Decimal(row.warning_threshold),
    estimateUsd: new Decimal(row.estimate_usd),
    estimateTokens: BigInt(row.estimate_tokens),
    periodStart,
    periodEnd: periodBounds(row.period, periodStart).end,
    spentUsd: rolled ? new Decimal(0) : new Decimal(row.spent_usd),
    spentTokens: rolled ? 0n : BigInt(row.spent_tokens),
    reservedUsd: new Decimal(row.reserved_usd),
    reservedTokens: BigInt(row.reserved_tokens),
    overshootUsd: rolled ? new Decimal(0) : new Decimal(row.overshoot_usd),
    warnedAt: rolled ? null : row.warned_at,
    exhaustedAt: rolled ? null : row.exhausted_at,
    updatedAt: row.updated_at,
  };
}

/** What is left for new work: limit − spent − reserved, never below 0. */
export function remainingUsd(budget: BudgetState): Decimal {
  return Decimal.max(0, budget.limitUsd.minus(budget.spentUsd).minus(budget.reservedUsd));
}

export function remainingTokens(budget: BudgetState): bigint | null {
  if (budget.limitTokens === null) return null;
  const left = budget.limitTokens - budget.spentTokens - budget.reservedTokens;
  return left > 0n ? left : 0n;
}

/** Whether one more task's estimate fits: spent + reserved + estimate stays within the limit. */
export function admitsTask(budget: BudgetState): boolean {
  if (budget.spentUsd.plus(budget.reservedUsd).plus(budget.estimateUsd).greaterThan(budget.limitUsd))
    return false;
  return (
    budget.limitTokens === null ||
    budget.spentTokens + budget.reservedTokens + budget.estimateTokens <= budget.limitTokens
  );
}

/** Exhausted: not even one task's estimate fits beside what is spent, whatever is running. */
export function isExhausted(budget: BudgetState): boolean {
  if (budget.spentUsd.plus(budget.estimateUsd).greaterThan(budget.limitUsd)) return true;
  return budget.limitTokens !== null && budget.spentTokens + budget.estimateTokens > budget.limitTokens;
}

export function passedWarning(budget: BudgetState): boolean {
  if (budget.spentUsd.greaterThanOrEqualTo(budget.limitUsd.times(budget.warningThreshold))) return true;
  return (
    budget.limitTokens !== null &&
    new Decimal(budget.spentTokens.toString()).greaterThanOrEqualTo(
      budget.warningThreshold.times(budget.limitTokens.toString()),
    )
  );
}

/**
 * Locks the budgets that bind a role's tasks (the role's and the tenant's), in id order so that claims,
 * settlements and releases never wait on each other in a cycle. Returns them as of `at` (default: the
 * transaction's time).
 */
export async function lockBudgets(
  tx: Prisma.TransactionClient,
  tenantId: string,
  role: string,
  at?: Date,
): Promise<BudgetState[]> {
  const rows = await tx.$queryRaw<BudgetRow[]>`
    SELECT ${budgetColumns} FROM budgets
    WHERE tenant_id = ${tenantId}::uuid AND role IN (${role}, ${TENANT_BUDGET})
    ORDER BY id
    FOR UPDATE`;
  return rows.map((row) => budgetState(row, at ?? row.now));
}

/** The tenant's budgets as of now, without locking: the tenant's first, then the roles' by name. */
export async function readBudgets(
  prisma: Prisma.TransactionClient,
  tenantId: string,
  role?: string,
): Promise<BudgetState[]> {
  const rows = await prisma.$queryRaw<BudgetRow[]>`
    SELECT ${budgetColumns} FROM budgets
    WHERE tenant_id = ${tenantId}::uuid ${role === undefined ? Prisma.empty : Prisma.sql`AND role = ${role}`}
    ORDER BY (role = ${TENANT_BUDGET}) DESC, role`;
  return rows.map((row) => budgetState(row, row.now));
}

/** Stores a locked budget's period and counters as they are in `budget` (which includes any rollover). */
export async function writeBudget(tx: Prisma.TransactionClient, budget: BudgetState): Promise<void> {
  await tx.$executeRaw`
    UPDATE budgets SET
      period_start = ${budget.periodStart}, spent_usd = ${budget.spentUsd.toFixed()}::numeric,
      spent_tokens = ${budget.spentTokens}, reserved_usd = ${budget.reservedUsd.toFixed()}::numeric,
      reserved_tokens = ${budget.reservedTokens}, overshoot_usd = ${budget.overshootUsd.toFixed()}::numeric,
      warned_at = ${budget.warnedAt}, exhausted_at = ${budget.exhaustedAt}, updated_at = now()
    WHERE id = ${budget.id}::uuid`;
}

/** The first budget (the tenant's before the role's) that has no room for one more task, or null. */
export function refusingBudget(budgets: readonly BudgetState[]): BudgetState | null {
  const ordered = [...budgets].sort((a, b) => (a.role === null ? -1 : b.role === null ? 1 : 0));
  return ordered.find((budget) => !admitsTask(budget)) ?? null;
}

/** Reserves each budget's estimate for a task being claimed; the budgets are locked and admit it. */
export async function reserveForTask(
  tx: Prisma.TransactionClient,
  budgets: readonly BudgetState[],
  taskId: string,
): Promise<void> {
  for (const budget of budgets) {
    await writeBudget(tx, {
      ...budget,
      reservedUsd: budget.reservedUsd.plus(budget.estimateUsd),
      reservedTokens: budget.reservedTokens + budget.estimateTokens,
    });
  }
  if (budgets.length === 0) return;
  await tx.budgetReservation.createMany({
    data: budgets.map((budget) => ({
      taskId,
      budgetId: budget.id,
      amountUsd: budget.estimateUsd.toFixed(),
      tokens: budget.estimateTokens,
    })),
  });
}

interface Reservation {
  task_id: string;
  budget_id: string;
  amount_usd: string;
  tokens: bigint;
}

async function takeReservations(tx: Prisma.TransactionClient, taskIds: readonly string[]) {
  if (taskIds.length === 0) return [];
  return tx.$queryRaw<Reservation[]>`
    DELETE FROM budget_reservations WHERE task_id = ANY(${taskIds}::uuid[])
    RETURNING task_id::text, budget_id::text, amount_usd::text, tokens`;
}

/**
 * Gives back what tasks of one role reserved (a failure or a lapsed lease): the budgets' reservations drop,
 * nothing is charged.
 */
export async function releaseReservations(
  tx: Prisma.TransactionClient,
  tenantId: string,
  role: string,
  taskIds: readonly string[],
): Promise<void> {
  if (taskIds.length === 0) return;
  // Budgets first, in id order, as every other writer locks them, then the reservations.
  const budgets = await lockBudgets(tx, tenantId, role);
  // Reservations go with their budget (ON DELETE CASCADE): without budgets there is none to release.
  if (budgets.length === 0) return;
  const reservations = await takeReservations(tx, taskIds);
  for (const budget of budgets) {
    const held = reservations.filter((reservation) => reservation.budget_id === budget.id);
    if (held.length === 0) continue;
    await writeBudget(tx, {
      ...budget,
      reservedUsd: Decimal.max(
        0,
        held.reduce((left, reservation) => left.minus(reservation.amount_usd), budget.reservedUsd),
      ),
      reservedTokens: held.reduce(
        (left, reservation) => left - BigInt(reservation.tokens),
        budget.reservedTokens,
      ),
    });
  }
}

export interface TaskCost {
  costUsd: Decimal;
  tokens: bigint;
}

/** Charges a completed task's actual cost to its role's and its tenant's budgets and frees what it reserved. */
export async function settleTask(
  tx: Prisma.TransactionClient,
  context: Actor,
  task: { id: string; role: string },
  cost: TaskCost,
): Promise<void> {
  const budgets = await lockBudgets(tx, context.viewer.tenantId, task.role);
  if (budgets.length === 0) return;
  const reservations = await takeReservations(tx, [task.id]);
  for (const budget of budgets) {
    const held = reservations.find((reservation) => reservation.budget_id === budget.id);
    const reservedUsd = held ? new Decimal(held.amount_usd) : null;
    const overshoot =
      reservedUsd && cost.costUsd.greaterThan(reservedUsd) ? cost.costUsd.minus(reservedUsd) : null;
    const settled: BudgetState = {
      ...budget,
      spentUsd: budget.spentUsd.plus(cost.costUsd),
      spentTokens: budget.spentTokens + cost.tokens,
      reservedUsd: reservedUsd ? Decimal.max(0, budget.reservedUsd.minus(reservedUsd)) : budget.reservedUsd,
      reservedTokens: held ? budget.reservedTokens - BigInt(held.tokens) : budget.reservedTokens,
      overshootUsd: overshoot ? budget.overshootUsd.plus(overshoot) : budget.overshootUsd,
    };
    if (overshoot) {
      await recordAudit(tx, context, {
        action: 'budget.overshoot',
        targetType: 'budget',
        targetId: budget.id,
        outcome: 'cost_above_estimate',
        details: {
          role: budget.role,
          task_id: task.id,
          estimate_usd: reservedUsd?.toFixed(),
          cost_usd: cost.costUsd.toFixed(),
          overshoot_usd: overshoot.toFixed(),
        },
      });
    }
    await writeBudget(tx, await announceCrossings(tx, context, settled));
  }
}

export type BudgetAlert = 'BUDGET_WARNING' | 'BUDGET_EXHAUSTED';

/** What BUDGET_WARNING and BUDGET_EXHAUSTED carry. */
export function budgetAlertPayload(budget: BudgetState) {
  return {
    budget_id: budget.id,
    role: budget.role,
    period: budget.period,
    period_start: budget.periodStart.toISOString(),
    period_end: budget.periodEnd.toISOString(),
    limit_usd: budget.limitUsd.toFixed(),
    spent_usd: budget.spentUsd.toFixed(),
    reserved_usd: budget.reservedUsd.toFixed(),
    warning_threshold: budget.warningThreshold.toNumber(),
    limit_tokens: budget.limitTokens === null ? null : budget.limitTokens.toString(),
    spent_tokens: budget.spentTokens.toString(),
  };
}

/**
 * Publishes (through the outbox) and audits the warning and the exhaustion the first time in a period the
 * budget passes them; returns the budget with the stamps that keep them to once a period.
 */
export async function announceCrossings(
  tx: Prisma.TransactionClient,
  context: Actor,
  budget: BudgetState,
): Promise<BudgetState> {
  let next = budget;
  const alerts: [BudgetAlert, boolean, 'warnedAt' | 'exhaustedAt'][] = [
    ['BUDGET_WARNING', !budget.warnedAt && passedWarning(budget), 'warnedAt'],
    ['BUDGET_EXHAUSTED', !budget.exhaustedAt && isExhausted(budget), 'exhaustedAt'],
  ];
  for (const [type, crossed, stamp] of alerts) {
    if (!crossed) continue;
    next = { ...next, [stamp]: new Date() };
    const payload = budgetAlertPayload(next);
    const eventId = await enqueueEvent(tx, { type, tenantId: budget.tenantId, payload });
    await recordAudit(tx, context, {
      action: type === 'BUDGET_WARNING' ? 'budget.warning' : 'budget.exhausted',
      targetType: 'budget',
      targetId: budget.id,
      outcome: type === 'BUDGET_WARNING' ? 'threshold_passed' : 'exhausted',
      details: { ...payload, event_id: eventId },
    });
  }
  return next;
}
