import { recordAudit } from '../../audit.js';
import { EVENT_ENVELOPE, enqueueEvent } from '../../events/outbox.js';
import { decimalSql, eventPayload, isoSql } from '../../events/payload.js';
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

/** The budgets of several tenants as of now, without locking, by tenant (a tenant without any: absent). */
export async function readBudgetsOfTenants(
  prisma: Prisma.TransactionClient,
  tenantIds: readonly string[],
): Promise<Map<string, BudgetState[]>> {
  const rows = await prisma.$queryRaw<BudgetRow[]>`
    SELECT ${budgetColumns} FROM budgets WHERE tenant_id = ANY(${[...tenantIds]}::uuid[])`;
  const byTenant = new Map<string, BudgetState[]>();
  for (const row of rows) {
    const budgets = byTenant.get(row.tenant_id) ?? [];
    budgets.push(budgetState(row, row.now));
    byTenant.set(row.tenant_id, budgets);
  }
  return byTenant;
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

/** A task's cost, charged on behalf of the caller whose subject and request id its audit rows carry. */
export interface Charge {
  cost: TaskCost;
  actor: { sub: string; requestId: string };
}

/**
 * The CTEs of a settlement, for the statement that ends the task (`settling_budgets`, `taken`, `held`,
 * `computed`, `crossing`, `settled`, `alerts`, `audited`, `overshot`): frees what the tasks in the CTE
 * `source` (columns `id`, `role`: tasks of one tenant) reserved and, with a `charge`, charges its cost (one
 * task then) on behalf of its actor.
 * The budget rows, which every claim and completion of the tenant locks, are held for that statement and no
 * round trip longer. Everything settleTask did statement by statement happens here, by the same rules:
 *
 * - It locks the tasks' roles' and the tenant's budgets in id order, as every other writer does, only once
 *   `source` has rows (after the task is written), reading them as they stand once locked; then takes the
 *   tasks' reservations through the locked budgets (never before they are locked).
 * - Each budget is rolled over to the current period first, as budgetState rolls it, then: spent + cost,
 *   reserved − what the tasks held (never below 0), overshoot + what the cost exceeded the task's
 *   reservation by. Without `cost` only the budgets the tasks held reservations on are written.
 * - A charge that passes a budget's warning threshold or exhausts it for the first time in its period
 *   (passedWarning, isExhausted) stamps it and yields one row of `alerts` (the BUDGET_WARNING or
 *   BUDGET_EXHAUSTED event, BUDGET_ALERT_PAYLOAD's payload, for the statement's outbox insert: ALERT_EVENTS)
 *   with its audit row; a cost above the task's reservation writes the `budget.overshoot` audit row.
 */
export function settlementOf(tenantId: string, source: string, charge: Charge | null): Prisma.Sql {
  const tasks = Prisma.raw(source);
  const chargeUsd = charge ? charge.cost.costUsd.toFixed() : '0';
  const chargeTokens = charge ? charge.cost.tokens : 0n;
  const charging = charge !== null;
  const sub = charge?.actor.sub ?? null;
  const requestId = charge?.actor.requestId ?? null;
  return Prisma.sql`
    settling_budgets AS MATERIALIZED (
      SELECT b.*,
        date_trunc(CASE WHEN b.period = 'month' THEN 'month' ELSE 'day' END, now() AT TIME ZONE 'UTC')
          AT TIME ZONE 'UTC' AS current_start
      FROM budgets b
      WHERE b.tenant_id = ${tenantId}::uuid AND EXISTS (SELECT 1 FROM ${tasks} s WHERE b.role IN (s.role, ${TENANT_BUDGET}))
      ORDER BY b.id
      FOR UPDATE OF b
    ),
    taken AS MATERIALIZED (
      DELETE FROM budget_reservations r USING settling_budgets l
      WHERE r.budget_id = l.id AND r.task_id IN (SELECT id FROM ${tasks})
      RETURNING r.budget_id, r.amount_usd, r.tokens
    ),
    held AS (
      SELECT budget_id, sum(amount_usd) AS usd, sum(tokens)::bigint AS tokens FROM taken GROUP BY budget_id
    ),
    computed AS MATERIALIZED (
      SELECT l.id, greatest(l.period_start, l.current_start) AS period_start,
        r.spent_usd + ${chargeUsd}::numeric AS spent_usd, r.spent_tokens + ${chargeTokens}::bigint AS spent_tokens,
        greatest(0, l.reserved_usd - coalesce(h.usd, 0)) AS reserved_usd,
        l.reserved_tokens - coalesce(h.tokens, 0) AS reserved_tokens,
        r.overshoot_usd + CASE WHEN h.usd IS NOT NULL AND ${chargeUsd}::numeric > h.usd
          THEN ${chargeUsd}::numeric - h.usd ELSE 0 END AS overshoot_usd,
        r.warned_at, r.exhausted_at, h.usd AS held_usd,
        l.limit_usd, l.limit_tokens, l.warning_threshold, l.estimate_usd, l.estimate_tokens
      FROM settling_budgets l
      LEFT JOIN held h ON h.budget_id = l.id
      CROSS JOIN LATERAL (
        SELECT
          CASE WHEN l.period_start < l.current_start THEN 0 ELSE l.spent_usd END AS spent_usd,
          CASE WHEN l.period_start < l.current_start THEN 0 ELSE l.spent_tokens END AS spent_tokens,
          CASE WHEN l.period_start < l.current_start THEN 0 ELSE l.overshoot_usd END AS overshoot_usd,
          CASE WHEN l.period_start < l.current_start THEN NULL ELSE l.warned_at END AS warned_at,
          CASE WHEN l.period_start < l.current_start THEN NULL ELSE l.exhausted_at END AS exhausted_at
      ) r
      WHERE ${charging} OR h.budget_id IS NOT NULL
    ),
    crossing AS MATERIALIZED (
      SELECT c.*,
        ${charging} AND c.warned_at IS NULL AND (c.spent_usd >= c.limit_usd * c.warning_threshold
          OR (c.limit_tokens IS NOT NULL AND c.spent_tokens >= c.warning_threshold * c.limit_tokens)) AS warns,
        ${charging} AND c.exhausted_at IS NULL AND (c.spent_usd + c.estimate_usd > c.limit_usd
          OR (c.limit_tokens IS NOT NULL AND c.spent_tokens + c.estimate_tokens > c.limit_tokens)) AS exhausts
      FROM computed c
    ),
    settled AS (
      UPDATE budgets b SET
        period_start = c.period_start, spent_usd = c.spent_usd, spent_tokens = c.spent_tokens,
        reserved_usd = c.reserved_usd, reserved_tokens = c.reserved_tokens, overshoot_usd = c.overshoot_usd,
        warned_at = CASE WHEN c.warns THEN now() ELSE c.warned_at END,
        exhausted_at = CASE WHEN c.exhausts THEN now() ELSE c.exhausted_at END,
        updated_at = now()
      FROM crossing c
      WHERE b.id = c.id
      RETURNING b.*, c.held_usd, c.warns, c.exhausts
    ),
    alerts AS MATERIALIZED (
      SELECT gen_random_uuid() AS event_id, s.tenant_id, s.id AS budget_id, k.type, k.action, k.outcome, k.position,
        ${BUDGET_ALERT_PAYLOAD.sql('s')} AS payload
      FROM settled s
      CROSS JOIN LATERAL (VALUES
        (1, 'BUDGET_WARNING', 'budget.warning', 'threshold_passed', s.warns),
        (2, 'BUDGET_EXHAUSTED', 'budget.exhausted', 'exhausted', s.exhausts)
      ) AS k(position, type, action, outcome, fires)
      WHERE k.fires
    ),
    audited AS (
      INSERT INTO audit_entries (id, tenant_id, actor, action, target_type, target_id, outcome, details, request_id)
      SELECT gen_random_uuid(), a.tenant_id, ${sub}, a.action, 'budget', a.budget_id::text, a.outcome,
        jsonb_build_object('subject', ${sub}::text) || a.payload || jsonb_build_object('event_id', a.event_id::text),
        ${requestId}
      FROM alerts a
    ),
    overshot AS (
      INSERT INTO audit_entries (id, tenant_id, actor, action, target_type, target_id, outcome, details, request_id)
      SELECT gen_random_uuid(), s.tenant_id, ${sub}, 'budget.overshoot', 'budget', s.id::text,
        'cost_above_estimate', jsonb_build_object(
          'subject', ${sub}::text,
          'role', CASE WHEN s.role = ${TENANT_BUDGET} THEN NULL ELSE s.role END,
          'task_id', (SELECT id::text FROM ${tasks} LIMIT 1),
          'estimate_usd', ${Prisma.raw(decimalSql('s.held_usd'))},
          'cost_usd', ${chargeUsd}::text,
          'overshoot_usd', trim_scale(${chargeUsd}::numeric - s.held_usd)::text
        ),
        ${requestId}
      FROM settled s
      WHERE ${charging} AND s.held_usd IS NOT NULL AND ${chargeUsd}::numeric > s.held_usd
    )`;
}

/**
 * The outbox rows of a settlement's alerts, for the statement's outbox insert (after its own rows, with
 * UNION ALL): the same columns and payload fields as enqueueEvent writes.
 */
export const ALERT_EVENTS = Prisma.sql`
  SELECT * FROM (
    SELECT event_id, tenant_id, type, payload || ${EVENT_ENVELOPE.sql({
      eventId: 'event_id::text',
      type: 'type',
      tenantId: 'tenant_id::text',
    })}
    FROM alerts ORDER BY budget_id, position
  ) AS alert_events`;

/**
 * Gives back what tasks of one role reserved (a failure or a lapsed lease), in a statement of its own
 * (settlementOf without a charge): the budgets' reservations drop, nothing is charged.
 */
export async function releaseReservations(
  tx: Prisma.TransactionClient,
  tenantId: string,
  role: string,
  taskIds: readonly string[],
): Promise<void> {
  if (taskIds.length === 0) return;
  await tx.$executeRaw`
    WITH settling AS (SELECT unnest(${[...taskIds]}::uuid[]) AS id, ${role}::text AS role),
    ${settlementOf(tenantId, 'settling', null)}
    SELECT 1`;
}

export interface TaskCost {
  costUsd: Decimal;
  tokens: bigint;
}

export type BudgetAlert = 'BUDGET_WARNING' | 'BUDGET_EXHAUSTED';

/**
 * What BUDGET_WARNING, BUDGET_EXHAUSTED and BUDGET_CHANGED carry. Each field in TypeScript (from the
 * budget's state) and in SQL (from the alias of a budgets row as settlementOf settles it).
 */
export const BUDGET_ALERT_PAYLOAD = eventPayload<BudgetState>()({
  budget_id: { ts: (budget): string => budget.id, sql: (b) => `${b}.id::text` },
  role: {
    ts: (budget): string | null => budget.role,
    sql: (b) =>
      Prisma.sql`CASE WHEN ${Prisma.raw(b)}.role = ${TENANT_BUDGET} THEN NULL ELSE ${Prisma.raw(b)}.role END`,
  },
  period: { ts: (budget): BudgetPeriodKind => budget.period, sql: (b) => `${b}.period::text` },
  period_start: {
    ts: (budget): string => budget.periodStart.toISOString(),
    sql: (b) => isoSql(`${b}.period_start`),
  },
  period_end: {
    ts: (budget): string => budget.periodEnd.toISOString(),
    sql: (b) =>
      isoSql(
        `(${b}.period_start AT TIME ZONE 'UTC' + CASE WHEN ${b}.period = 'month' THEN interval '1 month' ELSE interval '1 day' END) AT TIME ZONE 'UTC'`,
      ),
  },
  limit_usd: { ts: (budget): string => budget.limitUsd.toFixed(), sql: (b) => decimalSql(`${b}.limit_usd`) },
  spent_usd: { ts: (budget): string => budget.spentUsd.toFixed(), sql: (b) => decimalSql(`${b}.spent_usd`) },
  reserved_usd: {
    ts: (budget): string => budget.reservedUsd.toFixed(),
    sql: (b) => decimalSql(`${b}.reserved_usd`),
  },
  warning_threshold: {
    ts: (budget): number => budget.warningThreshold.toNumber(),
    sql: (b) => `trim_scale(${b}.warning_threshold)`,
  },
  limit_tokens: {
    ts: (budget): string | null => (budget.limitTokens === null ? null : budget.limitTokens.toString()),
    sql: (b) => `${b}.limit_tokens::text`,
  },
  spent_tokens: {
    ts: (budget): string => budget.spentTokens.toString(),
    sql: (b) => `${b}.spent_tokens::text`,
  },
});

export function budgetAlertPayload(budget: BudgetState) {
  return BUDGET_ALERT_PAYLOAD.of(budget);
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
