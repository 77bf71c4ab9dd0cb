import { randomUUID } from 'node:crypto';
import { recordAudit } from '../../audit.js';
import { enqueueEvent } from '../../events/outbox.js';
import type { ModelVersion, Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { conflict, notFound } from '../errors.js';
import {
  applyTransitions,
  type DeploymentStatus,
  type HistoryEntry,
  historyTimestamps,
  type ModelProvider,
  type Plan,
  planPromotion,
  planRollback,
  type VersionState,
} from './lifecycle.js';

type Tx = Prisma.TransactionClient;

export interface RegisterCommand {
  baseModel: string;
  provider: ModelProvider;
  trainingDataHash: string;
  hyperparameters: Record<string, unknown>;
  evaluationMetrics: Record<string, unknown>;
}

export interface PromoteCommand {
  id: string;
  /** 1–99 puts the version on canary with that share of traffic; null makes it production. */
  canaryTrafficPct: number | null;
}

export interface RollbackCommand {
  /** The tenant named by the caller (REST path); must be the caller's own. */
  tenantId: string;
  baseModel: string;
  reason: string;
  performedBy: string | null;
}

/** Who and why, stored on every history row of one change. */
interface ChangeNote {
  reason: string | null;
  performedBy: string | null;
}

export interface LineState {
  lineId: string;
  baseModel: string;
  versions: VersionState[];
  history: HistoryEntry[];
  latestAt: Date | null;
}

const lineNotFound = (baseModel: string) => notFound(`Base model '${baseModel}' not found`);

/** Locks the (tenant, base model) row: promotions and rollbacks of one base model run one at a time. */
export async function lockLine(tx: Tx, where: { tenantId: string; baseModel: string } | { lineId: string }) {
  const [line] =
    'lineId' in where
      ? await tx.$queryRaw<{ id: string; base_model: string }[]>`
          SELECT id::text, base_model FROM model_lines WHERE id = ${where.lineId}::uuid FOR UPDATE`
      : await tx.$queryRaw<{ id: string; base_model: string }[]>`
          SELECT id::text, base_model FROM model_lines
          WHERE tenant_id = ${where.tenantId}::uuid AND base_model = ${where.baseModel} FOR UPDATE`;
  return line;
}

/** The line's versions and history, read under its lock. */
export async function loadLine(tx: Tx, lineId: string, baseModel: string): Promise<LineState> {
  const versions = await tx.modelVersion.findMany({
    where: { lineId },
    select: { id: true, versionNumber: true, deploymentStatus: true, canaryTrafficPct: true },
  });
  const history = await tx.modelDeployment.findMany({
    where: { modelVersion: { lineId } },
    select: { modelVersionId: true, toStatus: true, createdAt: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return {
    lineId,
    baseModel,
    versions: versions.map((version) => ({
      id: version.id,
      versionNumber: version.versionNumber,
      status: version.deploymentStatus,
      canaryTrafficPct: version.canaryTrafficPct,
    })),
    history: history.map((entry) => ({
      modelVersionId: entry.modelVersionId,
      toStatus: entry.toStatus,
      at: entry.createdAt,
    })),
    latestAt: history.at(-1)?.createdAt ?? null,
  };
}

/** Writes a plan: status updates, one history row and one MODEL_VERSION_CHANGED event per transition. */
export async function applyPlan(
  tx: Tx,
  context: Pick<Actor, 'viewer' | 'requestId'>,
  line: LineState,
  plan: Plan & { ok: true },
  note: ChangeNote,
) {
  const after = applyTransitions(line.versions, plan.transitions);
  const productionsBefore = line.versions.filter((version) => version.status === 'production').length;
  const productionsAfter = after.filter((version) => version.status === 'production').length;
  if (productionsAfter > 1 || (productionsBefore > 0 && productionsAfter !== 1)) {
    throw new Error(`plan for line ${line.lineId} would leave ${productionsAfter} production versions`);
  }
  const times = historyTimestamps(line.latestAt, plan.transitions.length);
  for (const [index, transition] of plan.transitions.entries()) {
    const version = await tx.modelVersion.update({
      where: { id: transition.versionId },
      data: { deploymentStatus: transition.to, canaryTrafficPct: transition.canaryTrafficPct },
    });
    await tx.modelDeployment.create({
      data: {
        tenantId: context.viewer.tenantId,
        modelVersionId: transition.versionId,
        fromStatus: transition.from,
        toStatus: transition.to,
        canaryTrafficPct: transition.canaryTrafficPct,
        reason: note.reason,
        performedBy: note.performedBy,
        actor: context.viewer.sub,
        createdAt: times[index],
      },
    });
    await announce(tx, context, version, transition.from);
  }
}

async function announce(
  tx: Tx,
  context: Pick<Actor, 'viewer' | 'requestId'>,
  version: ModelVersion,
  previousStatus: DeploymentStatus | null,
) {
  await enqueueEvent(tx, {
    type: 'MODEL_VERSION_CHANGED',
    tenantId: context.viewer.tenantId,
    payload: {
      base_model: version.baseModel,
      model_version_id: version.id,
      deployment_status: version.deploymentStatus,
      version_number: version.versionNumber,
      previous_status: previousStatus,
      canary_traffic_pct: version.canaryTrafficPct,
    },
  });
}

/** Registers a trained version as `ready`, numbered after the highest version of its base model. */
export async function registerModelVersion(context: Actor, command: RegisterCommand): Promise<ModelVersion> {
  const { tenantId } = context.viewer;
  const version = await context.prisma.$transaction(async (tx) => {
    await tx.$executeRaw`
      INSERT INTO model_lines (id, tenant_id, base_model, created_at, updated_at)
      VALUES (${randomUUID()}::uuid, ${tenantId}::uuid, ${command.baseModel}, now(), now())
      ON CONFLICT (tenant_id, base_model) DO NOTHING`;
    const line = await lockLine(tx, { tenantId, baseModel: command.baseModel });
    if (!line) throw new Error(`model line ${command.baseModel} missing after insert`);
    const state = await loadLine(tx, line.id, line.base_model);
    const versionNumber = Math.max(0, ...state.versions.map((existing) => existing.versionNumber)) + 1;
    const [at] = historyTimestamps(state.latestAt, 1);
    const created = await tx.modelVersion.create({
      data: {
        tenantId,
        lineId: line.id,
        baseModel: line.base_model,
        provider: command.provider,
        versionNumber,
        deploymentStatus: 'ready',
        trainingDataHash: command.trainingDataHash,
        hyperparameters: command.hyperparameters as Prisma.InputJsonValue,
        evaluationMetrics: command.evaluationMetrics as Prisma.InputJsonValue,
        deployments: {
          create: { tenantId, fromStatus: null, toStatus: 'ready', actor: context.viewer.sub, createdAt: at },
        },
      },
    });
    await recordAudit(tx, context, {
      action: 'model.register',
      targetType: 'model_version',
      targetId: created.id,
      outcome: 'ready',
      details: { base_model: created.baseModel, version_number: versionNumber, provider: created.provider },
    });
    await announce(tx, context, created, null);
    return created;
  });
  return version;
}

/** Puts a version on canary or in production; the production it replaces is archived. */
export async function promoteModelVersion(context: Actor, command: PromoteCommand): Promise<ModelVersion> {
  const { tenantId } = context.viewer;
  const version = await context.prisma.$transaction(async (tx) => {
    const target = await tx.modelVersion.findFirst({
      where: { id: command.id, tenantId },
      select: { lineId: true },
    });
    if (!target) throw notFound(`Model version ${command.id} not found`);
    const line = await lockLine(tx, { lineId: target.lineId });
    if (!line) throw new Error(`model line ${target.lineId} missing`);
    const state = await loadLine(tx, line.id, line.base_model);
    const plan = planPromotion(state.versions, command.id, command.canaryTrafficPct);
    if (!plan.ok) throw conflict(plan.reason);
    const replaced = plan.transitions.filter((transition) => transition.versionId !== command.id);
    await applyPlan(tx, context, state, plan, { reason: null, performedBy: null });
    const promoted = await tx.modelVersion.findUniqueOrThrow({ where: { id: command.id } });
    await recordAudit(tx, context, {
      action: 'model.promote',
      targetType: 'model_version',
      targetId: promoted.id,
      outcome: promoted.deploymentStatus,
      details: {
        base_model: promoted.baseModel,
        version_number: promoted.versionNumber,
        canary_traffic_pct: promoted.canaryTrafficPct,
        replaced: replaced.map((transition) => ({
          model_version_id: transition.versionId,
          deployment_status: transition.to,
        })),
      },
    });
    return promoted;
  });
  return version;
}

/**
 * Retires the current production version of a base model and restores the one that was production
 * before it. Another tenant's id in the path is answered like an unknown base model.
 */
export async function rollbackModel(context: Actor, command: RollbackCommand): Promise<ModelVersion> {
  const { tenantId } = context.viewer;
  if (command.tenantId.toLowerCase() !== tenantId.toLowerCase()) {
    throw lineNotFound(command.baseModel);
  }
  const version = await context.prisma.$transaction(async (tx) => {
    const line = await lockLine(tx, { tenantId, baseModel: command.baseModel });
    if (!line) throw lineNotFound(command.baseModel);
    const state = await loadLine(tx, line.id, line.base_model);
    const plan = planRollback(state.versions, state.history);
    if (!plan.ok) throw conflict(plan.reason);
    const retired = plan.transitions.find((transition) => transition.to === 'retired');
    await applyPlan(tx, context, state, plan, { reason: command.reason, performedBy: command.performedBy });
    const restored = await tx.modelVersion.findUniqueOrThrow({ where: { id: plan.result } });
    await recordAudit(tx, context, {
      action: 'model.rollback',
      targetType: 'model_line',
      targetId: line.base_model,
      outcome: 'rolled_back',
      ...(command.performedBy ? { actor: command.performedBy } : {}),
      details: {
        reason: command.reason,
        performed_by: command.performedBy,
        retired_version_id: retired?.versionId ?? null,
        restored_version_id: restored.id,
        restored_version_number: restored.versionNumber,
      },
    });
    return restored;
  });
  return version;
}

/** Every version of a base model of the caller's tenant, newest first; empty for an unknown base model. */
export function listModelVersions(context: Actor, baseModel: string): Promise<ModelVersion[]> {
  return context.prisma.modelVersion.findMany({
    where: { tenantId: context.viewer.tenantId, baseModel },
    orderBy: { versionNumber: 'desc' },
  });
}

/** The production version of a base model, or null when none is in production. */
export function findProductionModel(context: Actor, baseModel: string): Promise<ModelVersion | null> {
  return context.prisma.modelVersion.findFirst({
    where: { tenantId: context.viewer.tenantId, baseModel, deploymentStatus: 'production' },
  });
}
