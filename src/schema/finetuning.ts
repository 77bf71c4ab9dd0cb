import { z } from 'zod';
import { builder } from '../builder.js';
import {
  CANARY_MAX_PCT,
  CANARY_MIN_PCT,
  DEPLOYMENT_STATUSES,
  type DeploymentStatus,
  MODEL_PROVIDERS,
} from '../domain/finetuning/lifecycle.js';
import {
  MAX_OUTCOME_WINDOW_HOURS,
  outcomesOfVersion,
  type VersionOutcomes,
} from '../domain/finetuning/outcomes.js';
import {
  findProductionModel,
  listModelVersions,
  promoteModelVersion,
  registerModelVersion,
  rollbackModel,
} from '../domain/finetuning/registry.js';
import { graphqlArg, idArg, zodField, zodInputType, zodSubscription } from './args.js';
import { afterArg, eventStream } from './event-stream.js';

const DeploymentStatusRef = builder.enumType('DeploymentStatus', {
  description:
    'Where a fine-tuned model version stands: training → ready → canary → production → archived | retired.',
  values: DEPLOYMENT_STATUSES,
});

builder.prismaObject('ModelDeployment', {
  description: 'One recorded status change of a model version.',
  fields: (t) => ({
    id: t.exposeID('id'),
    fromStatus: t.expose('fromStatus', {
      type: DeploymentStatusRef,
      nullable: true,
      description: 'Null when registered.',
    }),
    toStatus: t.expose('toStatus', { type: DeploymentStatusRef }),
    canaryTrafficPct: t.exposeInt('canaryTrafficPct', { nullable: true }),
    reason: t.exposeString('reason', { nullable: true }),
    performedBy: t.exposeString('performedBy', {
      nullable: true,
      description: 'The user or agent named by the caller.',
    }),
    actor: t.exposeString('actor', { description: 'Subject of the token that made the change.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

export const ModelVersionRef = builder.prismaObject('ModelVersion', {
  fields: (t) => ({
    id: t.exposeID('id'),
    tenantId: t.exposeID('tenantId'),
    baseModel: t.exposeString('baseModel'),
    provider: t.exposeString('provider'),
    versionNumber: t.exposeInt('versionNumber'),
    deploymentStatus: t.expose('deploymentStatus', { type: DeploymentStatusRef }),
    canaryTrafficPct: t.exposeInt('canaryTrafficPct', {
      nullable: true,
      description: 'Share of traffic while on canary.',
    }),
    trainingDataHash: t.exposeString('trainingDataHash'),
    hyperparameters: t.expose('hyperparameters', { type: 'JSON' }),
    evaluationMetrics: t.expose('evaluationMetrics', { type: 'JSON' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    deployments: t.relation('deployments', {
      description: 'Every status change of this version, oldest first.',
      query: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

const VersionOutcomesRef = builder.objectRef<VersionOutcomes>('ModelVersionOutcomes').implement({
  description:
    'What the tasks routed to a model version came to over a window of whole UTC hours ending with the ' +
    'current one, read from hourly counters kept when tasks finish and recommendations are decided.',
  fields: (t) => ({
    windowStart: t.expose('windowStart', { type: 'DateTime', description: 'Start of the first hour.' }),
    windowEnd: t.expose('windowEnd', { type: 'DateTime', description: 'When it was read.' }),
    hours: t.exposeInt('hours'),
    tasksCompleted: t.exposeInt('tasksCompleted'),
    tasksFailed: t.exposeInt('tasksFailed', {
      description: 'Failed by the agent, or on a lease lapsing on the last attempt.',
    }),
    failureRate: t.exposeFloat('failureRate', {
      nullable: true,
      description: 'failed / (completed + failed); null when none ended.',
    }),
    acceptanceRate: t.exposeFloat('acceptanceRate', {
      nullable: true,
      description: 'Accepted / decided recommendations of its tasks; null when none was decided.',
    }),
    outcomeAccuracy: t.exposeFloat('outcomeAccuracy', {
      nullable: true,
      description: 'Matched / evaluated predicted outcomes of its tasks; null when none was evaluated.',
    }),
    decided: t.exposeInt('decided'),
    accepted: t.exposeInt('accepted'),
    evaluated: t.exposeInt('evaluated'),
    matched: t.exposeInt('matched'),
    tokensUsed: t.expose('tokensUsed', { type: 'SafeInt' }),
    costUsd: t.exposeFloat('costUsd'),
    avgExecutionTimeSeconds: t.exposeFloat('avgExecutionTimeSeconds', {
      nullable: true,
      description: 'Mean finish − start of completed tasks; null when none completed.',
    }),
  }),
});

builder.objectField(ModelVersionRef, 'outcomes', (t) =>
  t.field({
    type: VersionOutcomesRef,
    description: `Outcomes of the tasks routed to this version over the last \`hours\` UTC hours (the current one included; 1–${MAX_OUTCOME_WINDOW_HOURS}, default 24).`,
    ...zodField(
      t,
      z.object({ hours: graphqlArg(z.int().min(1).max(MAX_OUTCOME_WINDOW_HOURS), { defaultValue: 24 }) }),
      (version, { hours }, context) => outcomesOfVersion(context.prisma, version.tenantId, version.id, hours),
    ),
  }),
);

const baseModelName = z.string().min(1).max(200);
const jsonObject = graphqlArg(z.record(z.string(), z.unknown()), { type: 'JSON', description: 'An object.' });

const registerInput = z.object({
  baseModel: graphqlArg(baseModelName.regex(/^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/), {
    description: 'e.g. gpt-4o-mini-2024-07-18 or meta-llama/Llama-3.1-8B',
  }),
  provider: graphqlArg(z.enum(MODEL_PROVIDERS), { type: 'String', description: MODEL_PROVIDERS.join(', ') }),
  trainingDataHash: z.string().min(1).max(256),
  hyperparameters: jsonObject,
  evaluationMetrics: jsonObject,
});
zodInputType('RegisterModelVersionInput', registerInput);

export const registerArgs = z.object({ input: registerInput });

export const promoteArgs = z.object({
  id: idArg(),
  canaryTrafficPct: z.int().min(CANARY_MIN_PCT).max(CANARY_MAX_PCT).nullish(),
});

const rollbackInput = z.object({
  reason: graphqlArg(z.string().trim().min(1).max(2000), {
    description: 'Why; kept in the audit log and the deployment history.',
  }),
  performedBy: graphqlArg(z.string().trim().min(1).max(200).optional(), {
    description: 'The user or agent performing the rollback.',
  }),
});
zodInputType('RollbackInput', rollbackInput);

export const rollbackArgs = z.object({ tenantId: idArg(), baseModel: baseModelName, input: rollbackInput });

const baseModelArgs = z.object({ baseModel: baseModelName });

builder.mutationField('registerModelVersion', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: ModelVersionRef,
    description:
      'Registers a fine-tuned version as ready, numbered after the highest version of its base model.',
    ...zodField(t, registerArgs, async (_root, { input }, context) => {
      const version = await registerModelVersion(context, input);
      await context.services.modelVersionsChanged();
      return version;
    }),
  }),
);

builder.mutationField('promoteModelVersion', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: ModelVersionRef,
    description:
      'Puts a ready, canary or archived version on canary (canaryTrafficPct 1–99; another canary returns to ready) ' +
      'or, without canaryTrafficPct, in production (the production it replaces is archived).',
    ...zodField(t, promoteArgs, async (_root, { id, canaryTrafficPct }, context) => {
      const version = await promoteModelVersion(context, { id, canaryTrafficPct: canaryTrafficPct ?? null });
      await context.services.modelVersionsChanged();
      return version;
    }),
  }),
);

builder.mutationField('rollbackModel', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: ModelVersionRef,
    description:
      'Retires the production version of a base model and restores the version that was production before it ' +
      '(409 when there is none). tenantId must be the caller’s tenant (404 otherwise), as in the REST path.',
    ...zodField(t, rollbackArgs, async (_root, { tenantId, baseModel, input }, context) => {
      const version = await rollbackModel(context, {
        tenantId,
        baseModel,
        reason: input.reason,
        performedBy: input.performedBy ?? null,
      });
      await context.services.modelVersionsChanged();
      return version;
    }),
  }),
);

builder.queryField('modelVersions', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: [ModelVersionRef],
    description: 'Every version of a base model, newest first (empty for an unknown base model).',
    ...zodField(t, baseModelArgs, (_root, { baseModel }, context) => listModelVersions(context, baseModel)),
  }),
);

builder.queryField('productionModel', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ModelVersionRef,
    nullable: true,
    description: 'The version of a base model now in production, or null.',
    ...zodField(t, baseModelArgs, (_root, { baseModel }, context) => findProductionModel(context, baseModel)),
  }),
);

builder.queryField('productionModels', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: [ModelVersionRef],
    description: 'The production version of every base model of the caller’s tenant that has one, by name.',
    resolve: (_root, _args, context) =>
      context.prisma.modelVersion.findMany({
        where: { tenantId: context.viewer.tenantId, deploymentStatus: 'production' },
        orderBy: { baseModel: 'asc' },
      }),
  }),
);

export interface ModelVersionChangedPayload {
  event_id: string;
  tenant_id: string;
  base_model: string;
  model_version_id: string;
  version_number: number;
  deployment_status: DeploymentStatus;
  previous_status: DeploymentStatus | null;
  canary_traffic_pct: number | null;
}

export const ModelVersionChangedEvent = builder
  .objectRef<ModelVersionChangedPayload>('ModelVersionChangedEvent')
  .implement({
    description: 'A status change of a model version (also its registration and a new canary share).',
    fields: (t) => ({
      eventId: t.exposeID('event_id'),
      tenantId: t.exposeID('tenant_id'),
      baseModel: t.exposeString('base_model'),
      modelVersionId: t.exposeID('model_version_id'),
      versionNumber: t.exposeInt('version_number'),
      deploymentStatus: t.field({ type: DeploymentStatusRef, resolve: (event) => event.deployment_status }),
      previousStatus: t.field({
        type: DeploymentStatusRef,
        nullable: true,
        resolve: (event) => event.previous_status,
      }),
      canaryTrafficPct: t.exposeInt('canary_traffic_pct', { nullable: true }),
      modelVersion: t.field({
        type: ModelVersionRef,
        description: 'The version as it is now.',
        resolve: (event, _args, context) =>
          context.prisma.modelVersion.findFirstOrThrow({
            where: { id: event.model_version_id, tenantId: event.tenant_id },
          }),
      }),
    }),
  });

const changesArgs = baseModelArgs.extend({ after: afterArg });

builder.subscriptionField('modelVersionChanged', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: ModelVersionChangedEvent,
    description: 'Registrations, promotions and rollbacks of one base model in the subscriber’s tenant.',
    ...zodSubscription(t, changesArgs, (_root, { baseModel, after }, context) => {
      return eventStream(
        context,
        ['MODEL_VERSION_CHANGED'],
        after,
        (event) => event.payload.base_model === baseModel,
      );
    }),
    resolve: (event) => event.payload as unknown as ModelVersionChangedPayload,
  }),
);
