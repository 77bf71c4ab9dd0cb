import { Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { Refusal } from '../errors.js';
import { roleScopeSql } from './role-binding.js';
import { safeCount } from './vitals.js';

/**
 * Cost and tokens of the tasks that finished in a period, grouped one way (docs/cost-attribution.md). The
 * source rows are those of the vitals and the budgets: `tasks.cost_usd` and `tokens_used`, summed exactly in
 * the database, so every grouping adds up to the same total, to the micro-dollar.
 */

export const COST_GROUPS = ['ROLE', 'MODEL_VERSION', 'THREAD', 'ROOT_TASK', 'ROUTINE', 'CONNECTOR'] as const;
export type CostGroup = (typeof COST_GROUPS)[number];

/** The longest period one attribution covers. */
export const MAX_ATTRIBUTION_DAYS = 366;

export interface CostAttributionRow {
  /** The role, or the id of the model version, thread, root task, routine or connector; null: none. */
  key: string | null;
  label: string;
  /** Exact decimal sum, as text. */
  costUsd: string;
  tokensUsed: number;
  inputTokens: number;
  outputTokens: number;
  /** Finished tasks counted in the row. */
  tasks: number;
  /** Connector calls the row's tasks made (CONNECTOR only; 0 otherwise). */
  connectorCalls: number;
}

export interface CostAttribution {
  groupBy: CostGroup;
  from: Date;
  to: Date;
  /** The rows, costliest first (then by label); they add up to the totals. */
  rows: CostAttributionRow[];
  totalCostUsd: string;
  totalTokensUsed: number;
  tasks: number;
}

interface GroupRow {
  key: string | null;
  tasks: number;
  cost: string;
  tokens: string;
  input_tokens: string;
  output_tokens: string;
  calls: string;
}

/** The SQL that keys a task (of `scoped`) in each grouping but CONNECTOR. */
const KEY_OF: Record<Exclude<CostGroup, 'CONNECTOR'>, Prisma.Sql> = {
  ROLE: Prisma.sql`role`,
  MODEL_VERSION: Prisma.sql`model_version_id::text`,
  THREAD: Prisma.sql`thread_id::text`,
  ROOT_TASK: Prisma.sql`root_id::text`,
  ROUTINE: Prisma.sql`routine_id::text`,
};

const sums = Prisma.sql`coalesce(sum(cost_usd), 0)::text AS cost, coalesce(sum(tokens_used), 0)::text AS tokens,
  coalesce(sum(input_tokens), 0)::text AS input_tokens, coalesce(sum(output_tokens), 0)::text AS output_tokens`;

/** Checks a period: `from` before `to`, at most MAX_ATTRIBUTION_DAYS long (BAD_USER_INPUT, `invalid_period`). */
function checkPeriod(from: Date, to: Date) {
  const days = (to.getTime() - from.getTime()) / 86_400_000;
  if (!(days > 0) || days > MAX_ATTRIBUTION_DAYS) {
    throw new Refusal(
      'BAD_USER_INPUT',
      `from must be before to, at most ${MAX_ATTRIBUTION_DAYS} days apart`,
      { reason: 'invalid_period', facts: { from: from.toISOString(), to: to.toISOString() } },
    );
  }
}

/**
 * Cost and tokens of the caller's tenant's tasks that finished in [from, to) (an agent token: of its roles),
 * grouped by `groupBy`. A delegated sub-task counts under its root task, and under its root's thread and
 * routine when it has none of its own; its model version and role are its own. CONNECTOR: a connector call
 * has no price of its own, so connector rows carry their calls and no cost, and one row without a key
 * carries the tasks' model cost; every grouping so partitions the same total.
 */
export async function costAttribution(
  context: Actor,
  groupBy: CostGroup,
  period: { from?: Date | null | undefined; to?: Date | null | undefined },
): Promise<CostAttribution> {
  const to = period.to ?? new Date();
  const from = period.from ?? new Date(to.getTime() - 24 * 60 * 60 * 1000);
  checkPeriod(from, to);
  const { tenantId } = context.viewer;
  const scoped = Prisma.sql`
    scoped AS (
      SELECT t.id, t.role, t.model_version_id, t.cost_usd, t.tokens_used, t.input_tokens, t.output_tokens,
        coalesce(t.root_task_id, t.id) AS root_id,
        coalesce(t.thread_id, r.thread_id) AS thread_id,
        coalesce(t.routine_id, r.routine_id) AS routine_id
      FROM tasks t LEFT JOIN tasks r ON r.id = t.root_task_id
      WHERE t.tenant_id = ${tenantId}::uuid AND t.finished_at >= ${from} AND t.finished_at < ${to}
        ${roleScopeSql(context.viewer, 't.role')}
    )`;
  const grouped =
    groupBy === 'CONNECTOR'
      ? await context.prisma.$queryRaw<GroupRow[]>`
        WITH ${scoped},
        called AS (
          SELECT f.connector_id, f.task_id, sum(f.count) AS calls
          FROM connector_call_fingerprints f JOIN scoped s ON s.id = f.task_id
          WHERE f.connector_id IS NOT NULL
          GROUP BY f.connector_id, f.task_id
        )
        SELECT connector_id::text AS key, count(*)::int AS tasks, '0' AS cost, '0' AS tokens,
          '0' AS input_tokens, '0' AS output_tokens, sum(calls)::text AS calls
        FROM called GROUP BY connector_id
        UNION ALL
        SELECT NULL, count(*)::int, ${sums}, '0' FROM scoped HAVING count(*) > 0`
      : await context.prisma.$queryRaw<GroupRow[]>`
        WITH ${scoped}
        SELECT ${KEY_OF[groupBy]} AS key, count(*)::int AS tasks, ${sums}, '0' AS calls
        FROM scoped GROUP BY 1`;
  const labels = await labelsOf(context, groupBy, grouped);
  const rows = grouped.map(
    (row): CostAttributionRow => ({
      key: row.key,
      label: (row.key === null ? null : labels.get(row.key)) ?? noneLabel(groupBy, row.key),
      costUsd: new Prisma.Decimal(row.cost).toFixed(6),
      tokensUsed: safeCount(row.tokens),
      inputTokens: safeCount(row.input_tokens),
      outputTokens: safeCount(row.output_tokens),
      tasks: row.tasks,
      connectorCalls: safeCount(row.calls),
    }),
  );
  rows.sort(
    (a, b) =>
      new Prisma.Decimal(b.costUsd).comparedTo(a.costUsd) ||
      (a.label < b.label ? -1 : a.label > b.label ? 1 : 0),
  );
  const total = grouped.reduce((sum, row) => sum.plus(row.cost), new Prisma.Decimal(0));
  const tokens = grouped.reduce((sum, row) => sum + BigInt(row.tokens), 0n);
  return {
    groupBy,
    from,
    to,
    rows,
    totalCostUsd: total.toFixed(6),
    totalTokensUsed: safeCount(tokens.toString()),
    tasks:
      groupBy === 'CONNECTOR'
        ? (grouped.find((row) => row.key === null)?.tasks ?? 0)
        : grouped.reduce((sum, row) => sum + row.tasks, 0),
  };
}

function noneLabel(groupBy: CostGroup, key: string | null): string {
  if (key !== null) return key;
  const none: Record<CostGroup, string> = {
    ROLE: '(no role)',
    MODEL_VERSION: '(no model version)',
    THREAD: '(no thread)',
    ROOT_TASK: '(no root task)',
    ROUTINE: '(no routine)',
    CONNECTOR: '(model usage, not a connector)',
  };
  return none[groupBy];
}

const excerpt = (text: string) => (text.length > 80 ? `${text.slice(0, 79)}…` : text);

/** Names people read for the keys of the rows: a role's display name, a model version, a message. */
async function labelsOf(
  context: Actor,
  groupBy: CostGroup,
  rows: readonly GroupRow[],
): Promise<Map<string, string>> {
  const keys = rows.flatMap((row) => (row.key === null ? [] : [row.key]));
  const { tenantId } = context.viewer;
  if (keys.length === 0) return new Map();
  const prisma = context.prisma;
  switch (groupBy) {
    case 'ROLE': {
      const roles = await prisma.agentRole.findMany({ where: { tenantId, role: { in: keys } } });
      return new Map(roles.map((role) => [role.role, role.displayName ?? role.role]));
    }
    case 'MODEL_VERSION': {
      const versions = await prisma.modelVersion.findMany({ where: { tenantId, id: { in: keys } } });
      return new Map(
        versions.map((version) => [version.id, `${version.baseModel} v${version.versionNumber}`]),
      );
    }
    case 'THREAD': {
      const threads = await prisma.thread.findMany({ where: { tenantId, id: { in: keys } } });
      return new Map(threads.map((thread) => [thread.id, `${thread.role} thread ${thread.id.slice(0, 8)}`]));
    }
    case 'ROOT_TASK': {
      const tasks = await prisma.task.findMany({ where: { tenantId, id: { in: keys } } });
      return new Map(tasks.map((task) => [task.id, `${task.role}: ${excerpt(task.message)}`]));
    }
    case 'ROUTINE': {
      const routines = await prisma.routine.findMany({ where: { tenantId, id: { in: keys } } });
      return new Map(routines.map((routine) => [routine.id, `${routine.role} ${routine.cron}`]));
    }
    case 'CONNECTOR': {
      const connectors = await prisma.connector.findMany({ where: { tenantId, id: { in: keys } } });
      return new Map(connectors.map((connector) => [connector.id, connector.name]));
    }
  }
}
