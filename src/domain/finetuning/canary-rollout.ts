import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../audit.js';
import type { PrismaClient } from '../../db/client.js';
import type { CanaryPolicy, Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { notFound } from '../errors.js';
import {
  analyzeCanary,
  type CanaryAnalysis,
  type Guardrail,
  type GuardrailCounts,
  type GuardrailMetric,
} from '../experiments/canary.js';
import type { CANARY_ACTIONS } from '../experiments/canary-policy.js';
import { planPromotion } from './lifecycle.js';
import { applyPlan, type LineState, loadLine, lockLine } from './registry.js';

type Tx = Prisma.TransactionClient;
export type CanaryAction = (typeof CANARY_ACTIONS)[number];

export interface CanaryPolicyInput {
  guardrails: Guardrail[];
  minimumTasks: number;
  maxDurationSeconds: number;
  action: CanaryAction;
}

/** Sets (or replaces) the canary rollout policy of a base model of the caller's tenant; 404 when unknown. */
export async function setCanaryPolicy(
  context: Actor,
  baseModel: string,
  policy: CanaryPolicyInput,
): Promise<CanaryPolicy> {
  const { tenantId } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const line = await tx.modelLine.findUnique({ where: { tenantId_baseModel: { tenantId, baseModel } } });
    if (!line) throw notFound(`Base model '${baseModel}' not found`);
    const data = {
      guardrails: policy.guardrails as unknown as Prisma.InputJsonValue,
      minimumTasks: policy.minimumTasks,
      maxDurationSeconds: policy.maxDurationSeconds,
      action: policy.action,
      updatedBy: context.viewer.sub,
    };
    const stored = await tx.canaryPolicy.upsert({
      where: { lineId: line.id },
      create: { lineId: line.id, tenantId, ...data },
      update: data,
    });
    await recordAudit(tx, context, {
      action: 'model.canary_policy',
      targetType: 'model_line',
      targetId: baseModel,
      outcome: policy.action,
      details: { ...data, guardrails: policy.guardrails } as Record<string, unknown>,
    });
    return stored;
  });
}

interface CountRow {
  model_version_id: string;
  completed: number;
  failed: number;
  decided: number;
  accepted: number;
  evaluated: number;
  matched: number;
}

const ZERO = { completed: 0, failed: 0, decided: 0, accepted: 0, evaluated: 0, matched: 0 };

function metricCounts(row: Omit<CountRow, 'model_version_id'>, metric: GuardrailMetric) {
  if (metric === 'failure_rate') return { observations: row.completed + row.failed, successes: row.failed };
  if (metric === 'acceptance_rate') return { observations: row.decided, successes: row.accepted };
  return { observations: row.evaluated, successes: row.matched };
}

export interface CanaryRun {
  canaryId: string;
  productionId: string;
  startedAt: Date;
  canaryTasks: number;
  analysis: CanaryAnalysis;
  /** The maximum duration has passed. */
  expired: boolean;
}

/**
 * The canary of a line against its production on the policy's guardrails, from the counters of the canary's
 * current run: exactly the tasks claims routed to either version while the run was active (a run starts
 * with the latest history row that put the version on canary), one row per version whatever the number of
 * tasks. Null when the line has no canary or no production.
 */
export async function analyzeCanaryRun(
  db: Tx | PrismaClient,
  state: LineState,
  policy: CanaryPolicy,
  now: Date,
): Promise<CanaryRun | null> {
  const canary = state.versions.find((version) => version.status === 'canary');
  const production = state.versions.find((version) => version.status === 'production');
  if (!canary || !production) return null;
  const startedAt = state.history
    .filter((entry) => entry.modelVersionId === canary.id && entry.toStatus === 'canary')
    .at(-1)?.at;
  if (!startedAt) return null;
  // The run's history row is the latest of the canary's rows into canary, in loadLine's order.
  const rows = await db.$queryRaw<CountRow[]>`
    SELECT model_version_id::text, completed, failed, decided, accepted, evaluated, matched
    FROM canary_run_outcomes
    WHERE model_version_id IN (${canary.id}::uuid, ${production.id}::uuid)
      AND run_id = (
        SELECT id FROM model_deployments WHERE model_version_id = ${canary.id}::uuid AND to_status = 'canary'
        ORDER BY created_at DESC, id DESC LIMIT 1)`;
  const of = (id: string) => rows.find((row) => row.model_version_id === id) ?? ZERO;
  const canaryRow = of(canary.id);
  const productionRow = of(production.id);
  const guardrails = (policy.guardrails as unknown as Guardrail[]).map(
    (guardrail): Guardrail & GuardrailCounts => ({
      ...guardrail,
      production: metricCounts(productionRow, guardrail.metric),
      canary: metricCounts(canaryRow, guardrail.metric),
    }),
  );
  const canaryTasks = canaryRow.completed + canaryRow.failed;
  return {
    canaryId: canary.id,
    productionId: production.id,
    startedAt,
    canaryTasks,
    analysis: analyzeCanary({ guardrails, minimumTasks: policy.minimumTasks, canaryTasks }),
    expired: now.getTime() - startedAt.getTime() > policy.maxDurationSeconds * 1000,
  };
}

/** What the analysis decided on one canary run. */
export interface CanaryDecisionMade {
  tenantId: string;
  baseModel: string;
  modelVersionId: string;
  verdict: 'worse' | 'not_worse' | 'expired';
  action: 'rolled_back' | 'promoted' | 'recommended';
}

/** The actor of automatic decisions, in history rows, audit rows and events. */
export const CANARY_ANALYSIS_ACTOR = 'canary-analysis';

function evidenceOf(run: CanaryRun, policy: CanaryPolicy) {
  return {
    verdict: run.analysis.verdict,
    canary_tasks: run.canaryTasks,
    minimum_tasks: policy.minimumTasks,
    canary_started_at: run.startedAt.toISOString(),
    production_version_id: run.productionId,
    guardrails: run.analysis.guardrails,
  };
}

/**
 * Analyses the canary of one line under its lock and acts once per canary run: a worse canary is sent back
 * to `ready` (production untouched) unless the policy only recommends; a canary not worse on every
 * guardrail after the minimum is promoted through the manual promotion's transition when the policy says
 * so; a run past its maximum duration ends as `expired` with nothing changed. The decision row is written
 * in the same transaction; a manual promotion or rollback holds the same lock, so whichever commits first
 * wins and the other sees the result.
 */
async function decideLine(
  prisma: PrismaClient,
  lineId: string,
  now: Date,
): Promise<CanaryDecisionMade | null> {
  return prisma.$transaction(async (tx) => {
    const line = await lockLine(tx, { lineId });
    const policy = await tx.canaryPolicy.findUnique({ where: { lineId } });
    if (!line || !policy) return null;
    const state = await loadLine(tx, line.id, line.base_model);
    const run = await analyzeCanaryRun(tx, state, policy, now);
    if (!run) return null;
    const decided = await tx.canaryDecision.findUnique({
      where: {
        modelVersionId_canaryStartedAt: { modelVersionId: run.canaryId, canaryStartedAt: run.startedAt },
      },
    });
    if (decided) return null;
    const { verdict: analysed } = run.analysis;
    const verdict =
      analysed === 'worse' || analysed === 'not_worse' ? analysed : run.expired ? 'expired' : null;
    if (verdict === null) return null;
    const action =
      verdict === 'worse' && policy.action !== 'recommend_only'
        ? 'rolled_back'
        : verdict === 'not_worse' && policy.action === 'promote_automatically'
          ? 'promoted'
          : 'recommended';
    const evidence = evidenceOf(run, policy);
    // Automatic decisions are the system's: the tenant's, made by the analysis, not by a request.
    const context: Pick<Actor, 'viewer' | 'requestId'> = {
      viewer: { tenantId: policy.tenantId, sub: CANARY_ANALYSIS_ACTOR, roles: [] },
      requestId: randomUUID(),
    };
    const failing = run.analysis.guardrails.filter((guardrail) => guardrail.verdict === 'worse');
    if (action === 'rolled_back') {
      await applyPlan(
        tx,
        context,
        state,
        {
          ok: true,
          result: run.canaryId,
          transitions: [{ versionId: run.canaryId, from: 'canary', to: 'ready', canaryTrafficPct: null }],
        },
        {
          reason: `canary analysis: worse on ${failing.map((guardrail) => guardrail.metric).join(', ')}`,
          performedBy: null,
        },
      );
    } else if (action === 'promoted') {
      const plan = planPromotion(state.versions, run.canaryId, null);
      if (!plan.ok) throw new Error(plan.reason);
      await applyPlan(tx, context, state, plan, {
        reason: 'canary analysis: not worse on every guardrail',
        performedBy: null,
      });
    }
    await tx.canaryDecision.create({
      data: {
        tenantId: policy.tenantId,
        modelVersionId: run.canaryId,
        canaryStartedAt: run.startedAt,
        verdict,
        action,
        evidence: evidence as unknown as Prisma.InputJsonValue,
      },
    });
    await recordAudit(tx, context, {
      action: 'model.canary_decision',
      targetType: 'model_version',
      targetId: run.canaryId,
      outcome: action,
      details: { base_model: line.base_model, ...evidence, verdict },
    });
    return {
      tenantId: policy.tenantId,
      baseModel: line.base_model,
      modelVersionId: run.canaryId,
      verdict,
      action,
    };
  });
}

/** One pass over every line with a policy and a canary, in every tenant. Returns the decisions made. */
export async function evaluateCanaries(
  prisma: PrismaClient,
  now = new Date(),
): Promise<CanaryDecisionMade[]> {
  const lines = await prisma.$queryRaw<{ line_id: string }[]>`
    SELECT p.line_id::text FROM canary_policies p
    WHERE EXISTS (SELECT 1 FROM model_versions v WHERE v.line_id = p.line_id AND v.deployment_status = 'canary')`;
  const decisions: CanaryDecisionMade[] = [];
  for (const { line_id } of lines) {
    const decision = await decideLine(prisma, line_id, now);
    if (decision) decisions.push(decision);
  }
  return decisions;
}
