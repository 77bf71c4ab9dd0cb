import { recordAudit } from '../../audit.js';
import { enqueueEvent } from '../../events/outbox.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { notFound } from '../errors.js';
import { type BudgetPeriodKind, periodBounds } from './budget-period.js';
import {
  announceCrossings,
  type BudgetState,
  budgetAlertPayload,
  lockBudgets,
  TENANT_BUDGET,
  writeBudget,
} from './budgets.js';
import { normalizeRole } from './roles.js';

export interface BudgetSettings {
  /** An agent role of the tenant; null or absent for the tenant as a whole. */
  role?: string | null | undefined;
  period: BudgetPeriodKind;
  /** Exact decimal strings, already validated. */
  limitUsd: string;
  estimateUsd: string;
  limitTokens?: number | null | undefined;
  estimateTokens?: number | null | undefined;
  warningThreshold: number;
}

/**
 * What the role (or the tenant) has spent on tasks finished since `since`: completed, in review (charged at
 * their completion) or ended otherwise after a charge (a delegation's, a rejected review's).
 */
async function spentSince(tx: Prisma.TransactionClient, tenantId: string, role: string, since: Date) {
  const [row] = await tx.$queryRaw<{ usd: string; tokens: bigint }[]>`
    SELECT COALESCE(SUM(cost_usd), 0)::text AS usd, COALESCE(SUM(tokens_used), 0)::bigint AS tokens
    FROM tasks
    WHERE tenant_id = ${tenantId}::uuid ${role === TENANT_BUDGET ? Prisma.empty : Prisma.sql`AND role = ${role}`}
      AND finished_at >= ${since}`;
  return { usd: new Prisma.Decimal(row?.usd ?? 0), tokens: BigInt(row?.tokens ?? 0) };
}

/**
 * Creates or changes the budget of a role (or of the tenant). A new budget, or one whose period kind
 * changes, starts from what was already spent in the current period. A limit lowered below what is spent
 * stops new claims at once; the change is audited, and a warning or exhaustion it causes is announced, and
 * so is the change itself (BUDGET_CHANGED), which wakes the claims waiting for room.
 */
export async function setBudget(context: Actor, settings: BudgetSettings): Promise<BudgetState> {
  const { tenantId } = context.viewer;
  const role = settings.role ? normalizeRole(settings.role) : TENANT_BUDGET;
  return context.prisma.$transaction(async (tx) => {
    if (role !== TENANT_BUDGET) {
      const [found] = await tx.$queryRaw<{ role: string }[]>`
        SELECT role FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR SHARE`;
      if (!found) throw notFound(`Unknown agent role '${role}'`);
    }
    const [now] = await tx.$queryRaw<{ now: Date }[]>`SELECT now() AS now`;
    const at = now?.now ?? new Date();
    const bounds = periodBounds(settings.period, at);
    const inserted = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO budgets (id, tenant_id, role, period, limit_usd, limit_tokens, warning_threshold, estimate_usd,
        estimate_tokens, period_start, updated_at)
      VALUES (gen_random_uuid(), ${tenantId}::uuid, ${role}, ${settings.period}::"BudgetPeriod",
        ${settings.limitUsd}::numeric, ${settings.limitTokens ?? null}::bigint, ${settings.warningThreshold}::numeric,
        ${settings.estimateUsd}::numeric, ${settings.estimateTokens ?? 0}::bigint, ${bounds.start}, now())
      ON CONFLICT (tenant_id, role) DO NOTHING
      RETURNING id::text`;
    const created = inserted.length > 0;
    const locked = (await lockBudgets(tx, tenantId, role)).find(
      (budget) => (budget.role ?? TENANT_BUDGET) === role,
    );
    if (!locked) throw new Error(`budget of ${role} vanished while locked`);
    const previous = locked;
    const periodChanged = created || previous.period !== settings.period;
    const spent = periodChanged ? await spentSince(tx, tenantId, role, bounds.start) : null;
    await tx.$executeRaw`
      UPDATE budgets SET period = ${settings.period}::"BudgetPeriod", limit_usd = ${settings.limitUsd}::numeric,
        limit_tokens = ${settings.limitTokens ?? null}::bigint, warning_threshold = ${settings.warningThreshold}::numeric,
        estimate_usd = ${settings.estimateUsd}::numeric, estimate_tokens = ${settings.estimateTokens ?? 0}::bigint
      WHERE id = ${locked.id}::uuid`;
    let budget: BudgetState = {
      ...locked,
      period: settings.period,
      limitUsd: new Prisma.Decimal(settings.limitUsd),
      limitTokens: settings.limitTokens == null ? null : BigInt(settings.limitTokens),
      warningThreshold: new Prisma.Decimal(settings.warningThreshold),
      estimateUsd: new Prisma.Decimal(settings.estimateUsd),
      estimateTokens: BigInt(settings.estimateTokens ?? 0),
      ...(spent
        ? {
            periodStart: bounds.start,
            periodEnd: bounds.end,
            spentUsd: spent.usd,
            spentTokens: spent.tokens,
            overshootUsd: new Prisma.Decimal(0),
            warnedAt: null,
            exhaustedAt: null,
          }
        : {}),
    };
    const belowSpent = budget.limitUsd.lessThan(budget.spentUsd);
    await recordAudit(tx, context, {
      action: 'budget.set',
      targetType: 'budget',
      targetId: locked.id,
      outcome: created ? 'created' : belowSpent ? 'lowered_below_spent' : 'updated',
      details: {
        role: budget.role,
        period: budget.period,
        limit_usd: budget.limitUsd.toFixed(),
        previous_limit_usd: created ? null : previous.limitUsd.toFixed(),
        limit_tokens: settings.limitTokens ?? null,
        warning_threshold: settings.warningThreshold,
        estimate_usd: budget.estimateUsd.toFixed(),
        estimate_tokens: settings.estimateTokens ?? 0,
        spent_usd: budget.spentUsd.toFixed(),
      },
    });
    budget = await announceCrossings(tx, context, budget);
    await writeBudget(tx, budget);
    const [fresh] = await lockBudgets(tx, tenantId, role).then((all) =>
      all.filter((one) => (one.role ?? TENANT_BUDGET) === role),
    );
    // Claims the budget turned away, waiting on any instance, try again: it may have room now.
    await enqueueEvent(tx, {
      type: 'BUDGET_CHANGED',
      tenantId,
      payload: budgetAlertPayload(fresh ?? budget),
    });
    return fresh ?? budget;
  });
}
