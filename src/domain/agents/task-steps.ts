import { recordAudit } from '../../audit.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { conflict, notFound, Refusal } from '../errors.js';
import type { ModelStep } from './completion-rules.js';
import { lockOwnRunningTask } from './queue.js';
import { roleScopeSql } from './role-binding.js';
import { stepsRecordedRows } from './task-events.js';
import { ENDED_STATUSES } from './task-tree.js';

/**
 * A task's run record (docs/runs.md): ordered steps, numbered per task by the gateway. The agent reports its
 * model calls (reportTaskSteps); the gateway records what it sees itself (claims, connector calls, approvals,
 * delegations, lease renewals, releases, ends) in the statements that make those changes.
 */

export const STEP_KINDS = [
  'claimed',
  'model_call',
  'connector_call',
  'approval_requested',
  'approval_decided',
  'delegated',
  'lease_renewed',
  'released',
  'lease_expired',
  'completed',
  'review_requested',
  'review_accepted',
  'review_rejected',
  'failed',
  'cancelled',
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** The most characters of each captured body kept (after redaction). */
export const MAX_CAPTURED_CHARS = 16 * 1024;
/** The kinds that charge a task (its cost and its budgets): each ends an attempt. */
const CHARGE_KINDS: readonly StepKind[] = ['completed', 'delegated'];

/** A step as the gateway writes it: the columns of task_steps it sets, in snake case. */
export interface StepRow {
  kind: StepKind;
  source?: 'agent' | 'gateway';
  actor?: string | null;
  started_at?: string | null;
  duration_ms?: number | null;
  model?: string | null;
  input_tokens?: number | null;
  cached_input_tokens?: number | null;
  output_tokens?: number | null;
  reasoning_tokens?: number | null;
  tokens?: number | string | null;
  cost_usd?: string | null;
  finish_reason?: string | null;
  connector_id?: string | null;
  endpoint?: string | null;
  http_status?: number | null;
  bytes?: number | null;
  outcome?: string | null;
  approval_id?: string | null;
  child_task_id?: string | null;
  model_version_id?: string | null;
  routing?: string | null;
  reason?: string | null;
  content?: { request?: string | null; response?: string | null } | null;
  content_expires_at?: string | null;
}

const RECORD_COLUMNS = Prisma.raw(`
  n int, kind text, source text, actor text, started_at timestamptz, duration_ms int, model text,
  input_tokens bigint, cached_input_tokens bigint, output_tokens bigint, reasoning_tokens bigint, tokens bigint,
  cost_usd numeric, finish_reason text, connector_id uuid, endpoint text, http_status int, bytes int, outcome text,
  approval_id uuid, child_task_id uuid, model_version_id uuid, routing text, reason text, content jsonb,
  content_expires_at timestamptz`);

/**
 * The INSERT of `steps` for the one task row of `source` (a CTE or table alias whose `steps_recorded` has
 * already been raised by their number, in the same statement: that row lock orders every writer of the
 * task's steps, so sequence numbers never collide). `overrides` give SQL for columns taken from the
 * statement (the claim's routing). The rows travel as one `json` text read once by `json_to_recordset`
 * (not `jsonb`, which would first build a binary copy the statement reads only once).
 */
export function stepsInsert(
  source: string,
  steps: readonly StepRow[],
  overrides: { modelVersionId?: Prisma.Sql; routing?: Prisma.Sql } = {},
): Prisma.Sql {
  const rows = steps.map((step, index) => ({ source: 'gateway', ...step, n: index + 1 }));
  return Prisma.sql`
    INSERT INTO task_steps (id, tenant_id, task_id, seq, attempt, kind, source, actor, started_at, duration_ms,
      model, input_tokens, cached_input_tokens, output_tokens, reasoning_tokens, tokens, cost_usd, finish_reason,
      connector_id, endpoint, http_status, bytes, outcome, approval_id, child_task_id, model_version_id, routing,
      reason, content, content_expires_at)
    SELECT gen_random_uuid(), c.tenant_id, c.id, c.steps_recorded - ${rows.length}::int + s.n, c.claims, s.kind,
      s.source, s.actor, coalesce(s.started_at, now()), s.duration_ms, s.model, s.input_tokens,
      s.cached_input_tokens, s.output_tokens, s.reasoning_tokens, s.tokens, coalesce(s.cost_usd, 0),
      s.finish_reason, s.connector_id, s.endpoint, s.http_status, s.bytes, s.outcome, s.approval_id,
      s.child_task_id, ${overrides.modelVersionId ?? Prisma.sql`s.model_version_id`},
      ${overrides.routing ?? Prisma.sql`s.routing`}, s.reason, s.content, s.content_expires_at
    FROM ${Prisma.raw(source)} c
    CROSS JOIN json_to_recordset(${JSON.stringify(rows)}::json) AS s(${RECORD_COLUMNS})`;
}

/**
 * Records gateway steps of one task, of the tenant, in a statement of its own (in the caller's transaction,
 * after the change they record), with their TASK_STEPS_RECORDED event. A task that no longer exists gets
 * none.
 */
export async function recordSteps(
  db: Prisma.TransactionClient,
  tenantId: string,
  taskId: string,
  steps: readonly StepRow[],
): Promise<void> {
  if (steps.length === 0) return;
  await db.$executeRaw`
    WITH counted AS (
      UPDATE tasks SET steps_recorded = steps_recorded + ${steps.length}::int
      WHERE id = ${taskId}::uuid AND tenant_id = ${tenantId}::uuid
      RETURNING id, tenant_id, role, root_task_id, steps_recorded, claims
    ),
    inserted AS (${stepsInsert('counted', steps)})
    INSERT INTO outbox_events (id, tenant_id, type, payload)
    ${stepsRecordedRows(tenantId, 'counted')}`;
}

// Credentials never reach a run record: bearer and basic schemes, key=value pairs under secret-looking
// names, and tokens of well-known shapes.
const SECRET_PATTERNS: [RegExp, string][] = [
  [/\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [REDACTED]'],
  [
    /("?(?:api[_-]?key|x-api-key|authorization|password|passwd|secret|client_secret|access_token|refresh_token|token|cookie|set-cookie)"?\s*[:=]\s*)("[^"]*"|[^\s,;&}]+)/gi,
    '$1[REDACTED]',
  ],
  [/\b(?:sk|pk|rk)-[A-Za-z0-9_-]{12,}\b/g, '[REDACTED]'],
  [/\b(?:ghp|gho|ghs|ghu|github_pat|xox[abprs])[-_][A-Za-z0-9_-]{10,}\b/g, '[REDACTED]'],
  [/\bAKIA[0-9A-Z]{16}\b/g, '[REDACTED]'],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g, '[REDACTED]'],
];

/** A body as a run record keeps it: credentials replaced by `[REDACTED]`, cut to MAX_CAPTURED_CHARS. */
export function redactCaptured(text: string): string {
  let redacted = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) redacted = redacted.replace(pattern, replacement);
  return redacted.length > MAX_CAPTURED_CHARS
    ? `${redacted.slice(0, MAX_CAPTURED_CHARS)}…[truncated]`
    : redacted;
}

interface CapturePolicy {
  capture: boolean;
  retentionDays: number;
}

async function capturePolicy(db: Prisma.TransactionClient, tenantId: string): Promise<CapturePolicy> {
  const tenant = await db.tenant.findUnique({
    where: { id: tenantId },
    select: { runContentCapture: true, runContentRetentionDays: true },
  });
  return {
    capture: tenant?.runContentCapture ?? false,
    retentionDays: tenant?.runContentRetentionDays ?? 30,
  };
}

/** A reported model call as a step row: bodies only when the tenant captures them, redacted. */
function modelStepRow(step: ModelStep, actor: string, policy: CapturePolicy, now: number): StepRow {
  const hasBody = !!(step.request || step.response);
  const content =
    policy.capture && hasBody
      ? {
          request: step.request ? redactCaptured(step.request) : null,
          response: step.response ? redactCaptured(step.response) : null,
        }
      : null;
  return {
    kind: 'model_call',
    source: 'agent',
    actor,
    started_at: step.startedAt ?? null,
    duration_ms: step.durationMs,
    model: step.model,
    input_tokens: step.inputTokens,
    cached_input_tokens: step.cachedInputTokens ?? 0,
    output_tokens: step.outputTokens,
    reasoning_tokens: step.reasoningTokens ?? 0,
    tokens: step.inputTokens + step.outputTokens,
    cost_usd: step.costUsd.toFixed(6),
    finish_reason: step.finishReason ?? null,
    content,
    content_expires_at: content ? new Date(now + policy.retentionDays * 86_400_000).toISOString() : null,
  };
}

export interface StepsReport {
  taskId: string;
  attempt: number;
  firstSeq: number;
  lastSeq: number;
  recorded: number;
}

/**
 * Reported model calls as step rows of `context`'s agent: the tenant's capture setting is read only when a
 * step carries a body.
 */
export async function modelStepRows(context: Actor, steps: readonly ModelStep[]): Promise<StepRow[]> {
  if (steps.length === 0) return [];
  const policy = steps.some((step) => step.request || step.response)
    ? await capturePolicy(context.prisma, context.viewer.tenantId)
    : { capture: false, retentionDays: 0 };
  const now = Date.now();
  return steps.map((step) => modelStepRow(step, context.viewer.sub, policy, now));
}

/**
 * Records model calls the agent holding a running task reports, in order, under the current attempt. 404
 * another tenant's task (or one of a role the token is not bound to), 409 a task not running, 403 another
 * agent's; a refusal writes nothing. Bodies are kept only when the tenant captures content (redacted).
 */
export async function reportTaskSteps(
  context: Actor,
  taskId: string,
  steps: readonly ModelStep[],
): Promise<StepsReport> {
  const { tenantId, sub } = context.viewer;
  const rows = await modelStepRows(context, steps);
  // One statement, its own transaction (as endRunningTask): it changes the task only when it is the
  // caller's tenant's, of a role its token works for, running and the caller's; its TASK_STEPS_RECORDED
  // event is the statement's main query (the outbox's rule allows no data-modifying WITH query).
  const [counted] = await context.prisma.$queryRaw<{ steps_recorded: number; claims: number }[]>`
    WITH counted AS (
      UPDATE tasks SET steps_recorded = steps_recorded + ${rows.length}::int
      WHERE id = ${taskId}::uuid AND tenant_id = ${tenantId}::uuid ${roleScopeSql(context.viewer)}
        AND status = 'running' AND claimed_by = ${sub}
      RETURNING id, tenant_id, role, root_task_id, steps_recorded, claims
    ),
    inserted AS (${stepsInsert('counted', rows)})
    INSERT INTO outbox_events (id, tenant_id, type, payload)
    ${stepsRecordedRows(tenantId, 'counted')}
    RETURNING (SELECT steps_recorded FROM counted) AS steps_recorded, (SELECT claims FROM counted) AS claims`;
  if (!counted) {
    // Nothing written: which of 404, 409 and 403 it is.
    await context.prisma.$transaction((tx) => lockOwnRunningTask(tx, context, taskId));
    throw conflict(`Task ${taskId} is no longer running`);
  }
  return {
    taskId,
    attempt: counted.claims,
    firstSeq: counted.steps_recorded - rows.length + 1,
    lastSeq: counted.steps_recorded,
    recorded: rows.length,
  };
}

/** What the current attempt's reported model calls come to. */
interface AttemptUsage {
  calls: number;
  costUsd: Prisma.Decimal;
  tokens: bigint;
}

async function attemptUsage(context: Actor, taskId: string): Promise<AttemptUsage | null> {
  const [row] = await context.prisma.$queryRaw<{ calls: number; cost: string; tokens: bigint }[]>`
    SELECT count(s.id)::int AS calls, coalesce(sum(s.cost_usd), 0)::text AS cost,
      coalesce(sum(s.tokens), 0)::bigint AS tokens
    FROM tasks t LEFT JOIN task_steps s ON s.task_id = t.id AND s.attempt = t.claims AND s.kind = 'model_call'
    WHERE t.id = ${taskId}::uuid AND t.tenant_id = ${context.viewer.tenantId}::uuid ${roleScopeSql(context.viewer, 't.role')}
    GROUP BY t.id`;
  return row ? { calls: row.calls, costUsd: new Prisma.Decimal(row.cost), tokens: BigInt(row.tokens) } : null;
}

/**
 * The step that records a charge (a completion's or a delegation's usage), after checking it against the
 * model calls of this attempt: those reported before, and `along` (the model-call rows the charge itself
 * carries, recorded in its statement). When there are any, the charge must be exactly their sum (cost to
 * the micro-dollar, and tokens), else BAD_USER_INPUT `costs_do_not_add_up` and nothing changes; the step
 * then carries no cost of its own. When there are none, the step carries the charge itself. Either way
 * the costs of a task's charged steps add up to its cost (docs/runs.md).
 */
export async function chargeStep(
  context: Actor,
  taskId: string,
  kind: 'completed' | 'delegated',
  charge: { costUsd: number; tokensUsed: number },
  along: readonly StepRow[] = [],
): Promise<StepRow> {
  const reported = new Prisma.Decimal(charge.costUsd.toFixed(6));
  const before = await attemptUsage(context, taskId);
  const base: StepRow = { kind, actor: context.viewer.sub };
  // A task the caller cannot see: the statement that charges it changes nothing and says why (404).
  if (!before) return { ...base, cost_usd: reported.toFixed(6), tokens: charge.tokensUsed };
  const usage = along.reduce(
    (sum, row) => ({
      calls: sum.calls + 1,
      costUsd: sum.costUsd.plus(row.cost_usd ?? 0),
      tokens: sum.tokens + BigInt(row.tokens ?? 0),
    }),
    before,
  );
  if (usage.calls === 0) {
    return { ...base, cost_usd: reported.toFixed(6), tokens: charge.tokensUsed };
  }
  if (!usage.costUsd.equals(reported) || usage.tokens !== BigInt(charge.tokensUsed)) {
    throw new Refusal(
      'BAD_USER_INPUT',
      `The reported usage ($${reported.toFixed(6)}, ${charge.tokensUsed} tokens) is not what this attempt's ` +
        `${usage.calls} reported model calls add up to ($${usage.costUsd.toFixed(6)}, ${usage.tokens} tokens)`,
      {
        reason: 'costs_do_not_add_up',
        facts: {
          reportedCostUsd: reported.toNumber(),
          stepsCostUsd: usage.costUsd.toNumber(),
          reportedTokens: charge.tokensUsed,
          stepsTokens: Number(usage.tokens),
        },
      },
    );
  }
  return { ...base, tokens: 0 };
}

/** A step as it is read, with whether its cost counts in the task's (a model call of an attempt that charged). */
export interface StepView {
  id: string;
  seq: number;
  attempt: number;
  kind: StepKind;
  source: string;
  actor: string | null;
  startedAt: Date;
  durationMs: number | null;
  model: string | null;
  inputTokens: number | null;
  cachedInputTokens: number | null;
  outputTokens: number | null;
  reasoningTokens: number | null;
  tokens: number | null;
  /** Exactly, as the decimal text of its 6 places. */
  costUsd: string;
  charged: boolean;
  finishReason: string | null;
  connectorId: string | null;
  endpoint: string | null;
  httpStatus: number | null;
  bytes: number | null;
  outcome: string | null;
  approvalId: string | null;
  childTaskId: string | null;
  modelVersionId: string | null;
  routing: string | null;
  reason: string | null;
  content: Prisma.JsonValue | null;
}

const CHARGE_KINDS_SQL = Prisma.raw(CHARGE_KINDS.map((kind) => `'${kind}'`).join(', '));

/** Each StepView key as the page's SQL reads it (`st`: the step, `charged`: the charged attempts). */
const STEP_VIEW_SQL: Record<keyof StepView, Prisma.Sql> = {
  id: Prisma.sql`st.id`,
  seq: Prisma.sql`st.seq`,
  attempt: Prisma.sql`st.attempt`,
  kind: Prisma.sql`st.kind`,
  source: Prisma.sql`st.source`,
  actor: Prisma.sql`st.actor`,
  startedAt: Prisma.sql`st.started_at AS "startedAt"`,
  durationMs: Prisma.sql`st.duration_ms AS "durationMs"`,
  model: Prisma.sql`st.model`,
  inputTokens: Prisma.sql`st.input_tokens AS "inputTokens"`,
  cachedInputTokens: Prisma.sql`st.cached_input_tokens AS "cachedInputTokens"`,
  outputTokens: Prisma.sql`st.output_tokens AS "outputTokens"`,
  reasoningTokens: Prisma.sql`st.reasoning_tokens AS "reasoningTokens"`,
  tokens: Prisma.sql`st.tokens`,
  costUsd: Prisma.sql`st.cost_usd::text AS "costUsd"`,
  charged: Prisma.sql`st.kind IN (${CHARGE_KINDS_SQL})
    OR (st.kind = 'model_call' AND st.attempt IN (SELECT attempt FROM charged)) AS charged`,
  finishReason: Prisma.sql`st.finish_reason AS "finishReason"`,
  connectorId: Prisma.sql`st.connector_id AS "connectorId"`,
  endpoint: Prisma.sql`st.endpoint`,
  httpStatus: Prisma.sql`st.http_status AS "httpStatus"`,
  bytes: Prisma.sql`st.bytes`,
  outcome: Prisma.sql`st.outcome`,
  approvalId: Prisma.sql`st.approval_id AS "approvalId"`,
  childTaskId: Prisma.sql`st.child_task_id AS "childTaskId"`,
  modelVersionId: Prisma.sql`st.model_version_id AS "modelVersionId"`,
  routing: Prisma.sql`st.routing`,
  reason: Prisma.sql`st.reason`,
  content: Prisma.sql`st.content`,
};
const STEP_VIEW_KEYS = Object.keys(STEP_VIEW_SQL) as (keyof StepView)[];

/** Whether `key` names a StepView key. */
export const isStepViewKey = (key: string): key is keyof StepView => Object.hasOwn(STEP_VIEW_SQL, key);

/**
 * A page of a task's steps in order (seq ascending), after `afterSeq`: of each step its `seq` and the keys
 * `fields` names (all of them without it). The database writes the page as one JSON text: a 1,000-step
 * timeline read as rows cost five times as much, most of it spent turning each of 30,000 fields into a
 * JavaScript value on both sides of PGlite's thread (docs/runs.md); the fields not asked for are not written.
 */
export async function readTaskSteps(
  db: Prisma.TransactionClient,
  taskId: string,
  {
    first,
    afterSeq,
    fields,
  }: { first: number; afterSeq: number; fields?: ReadonlySet<keyof StepView> | undefined },
): Promise<{ nodes: StepView[]; nextSeq: number | null }> {
  const keys = STEP_VIEW_KEYS.filter((key) => key === 'seq' || !fields || fields.has(key));
  const [row] = await db.$queryRaw<{ page: string }[]>`
    WITH charged AS (
      SELECT DISTINCT attempt FROM task_steps WHERE task_id = ${taskId}::uuid AND kind IN (${CHARGE_KINDS_SQL})
    )
    SELECT coalesce(json_agg(s ORDER BY s.seq), '[]')::text AS page FROM (
      SELECT ${Prisma.join(keys.map((key) => STEP_VIEW_SQL[key]))}
      FROM task_steps st
      WHERE st.task_id = ${taskId}::uuid AND st.seq > ${afterSeq}
      ORDER BY st.seq
      LIMIT ${first + 1}
    ) s`;
  const rows = (
    JSON.parse(row?.page ?? '[]') as (Omit<StepView, 'startedAt'> & { startedAt?: string })[]
  ).map(
    (step) =>
      (step.startedAt === undefined ? step : { ...step, startedAt: new Date(step.startedAt) }) as StepView,
  );
  const nodes = rows.slice(0, first);
  return { nodes, nextSeq: rows.length > first ? (nodes.at(-1)?.seq ?? null) : null };
}

/** Removes the captured bodies of steps past their retention; returns how many it cleared. */
export async function expireStepContent(db: Prisma.TransactionClient): Promise<number> {
  return db.$executeRaw`
    UPDATE task_steps SET content = NULL, content_expires_at = NULL
    WHERE id IN (SELECT id FROM task_steps WHERE content_expires_at < now() ORDER BY content_expires_at LIMIT 1000)`;
}

/**
 * Deletes a task of the caller's tenant that has ended, with everything under it (its sub-tasks, its run
 * record's steps, approvals, attachments: the foreign keys cascade). 404 a task the caller cannot see; 409
 * (`task_not_ended`) while it or any task under it has not ended. Returns the ids deleted.
 */
export async function deleteTask(context: Actor, id: string): Promise<string[]> {
  const { tenantId } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string; status: string }[]>`
      WITH RECURSIVE tree AS (
        SELECT id FROM tasks WHERE id = ${id}::uuid AND tenant_id = ${tenantId}::uuid ${roleScopeSql(context.viewer)}
        UNION ALL
        SELECT t.id FROM tasks t JOIN tree ON t.parent_task_id = tree.id
      )
      SELECT t.id::text, t.status::text FROM tasks t JOIN tree ON t.id = tree.id ORDER BY t.id FOR UPDATE OF t`;
    if (rows.length === 0) throw notFound(`Task ${id} not found`);
    const open = rows.filter((row) => !(ENDED_STATUSES as readonly string[]).includes(row.status));
    if (open.length > 0) {
      throw new Refusal('CONFLICT', `Task ${id} or a task under it has not ended`, {
        reason: 'task_not_ended',
        facts: { openTaskIds: open.map((row) => row.id) },
      });
    }
    await tx.$executeRaw`DELETE FROM tasks WHERE id = ${id}::uuid`;
    const ids = rows.map((row) => row.id);
    await recordAudit(tx, context, {
      action: 'task.delete',
      targetType: 'task',
      targetId: id,
      outcome: 'deleted',
      details: { deleted: ids },
    });
    return ids;
  });
}
