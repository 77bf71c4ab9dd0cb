import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateCanaries } from '../../src/domain/finetuning/canary-rollout.js';
import { graphql } from '../../src/generated/graphql/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind } from '../support/database.js';
import { CompleteTask, FailTask, queueTask } from './agents-support.js';
import { promote, register, Versions } from './finetuning-support.js';
import { boundLine, claimRouted, type RoutingTenant, routingTenant } from './model-routing-support.js';

const SetPolicy = graphql(`
  mutation CanarySetPolicy($baseModel: String!, $input: CanaryPolicyInput!) {
    setCanaryPolicy(baseModel: $baseModel, input: $input) {
      guardrails {
        metric
        direction
        tolerance
      }
      minimumTasks
      maxDurationSeconds
      action
    }
  }
`);

const Analysis = graphql(`
  query CanaryAnalysisOf($baseModel: String!) {
    modelVersions(baseModel: $baseModel) {
      id
      deploymentStatus
      canaryAnalysis {
        state
        decided
        action
        evidence
      }
    }
  }
`);

const failurePolicy = (action: string, tolerance = 0.05) => ({
  guardrails: [{ metric: 'failure_rate', direction: 'lower_is_better', tolerance }],
  minimumTasks: 10,
  maxDurationSeconds: 3600,
  action,
});

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function canaryLine(app: TestApp, tenant: RoutingTenant, action: string, tolerance?: number) {
  const { baseModel, production } = await boundLine(app, tenant, 'cfo');
  const canary = await register(app, tenant.operator, baseModel);
  await promote(app, tenant.operator, canary, 50);
  const set = await app.graphql(
    SetPolicy,
    { baseModel, input: failurePolicy(action, tolerance) },
    tenant.operator,
  );
  expect(set.errors).toBeUndefined();
  return { baseModel, production, canary };
}

/** The decisions stored for a version: [verdict, action]. */
const decisionsOf = async (modelVersionId: string) =>
  (await t.db.prisma.canaryDecision.findMany({ where: { modelVersionId } })).map((row) => [
    row.verdict,
    row.action,
  ]);

/** Runs `count` tasks through claims, ten at a time: the canary's fail, production's complete. */
async function scriptedTasks(app: TestApp, tenant: RoutingTenant, canary: string, count: number) {
  const batches = Array.from({ length: Math.ceil(count / 10) }, (_, index) =>
    Math.min(10, count - index * 10),
  );
  for (const size of batches) {
    await Promise.all(Array.from({ length: size }, () => queueTask(app, tenant.operator, 'cfo')));
    await Promise.all(
      Array.from({ length: size }, async () => {
        const claim = await claimRouted(app, tenant.agent, 'cfo');
        const id = claim.task?.id as string;
        const result =
          claim.task?.modelVersion?.id === canary
            ? await app.graphql(FailTask, { id, error: 'bad answer' }, tenant.agent)
            : await app.graphql(CompleteTask, { id, input: { tokensUsed: 1, costUsd: 0 } }, tenant.agent);
        if (result.errors) throw new Error(JSON.stringify(result.errors));
      }),
    );
  }
}

/** Long enough for 120 tasks through the API on a busy PostgreSQL. */
const SCRIPTED_MS = 120_000;

describe('setCanaryPolicy', () => {
  it.each([
    [
      'a tolerance above 1',
      {
        ...failurePolicy('recommend_only'),
        guardrails: [{ metric: 'failure_rate', direction: 'lower_is_better', tolerance: 1.5 }],
      },
    ],
    ['a minimum of 0', { ...failurePolicy('recommend_only'), minimumTasks: 0 }],
    [
      'an unknown metric',
      {
        ...failurePolicy('recommend_only'),
        guardrails: [{ metric: 'latency', direction: 'lower_is_better', tolerance: 0.1 }],
      },
    ],
    ['an unknown action', failurePolicy('shrug')],
  ])('refuses %s with BAD_USER_INPUT and stores nothing', async (_name, input) => {
    const tenant = await routingTenant(t);
    const baseModel = (await boundLine(t, tenant, 'cfo')).baseModel;
    const result = await t.graphql(SetPolicy, { baseModel, input }, tenant.operator);
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await t.db.prisma.canaryPolicy.count({ where: { tenantId: tenant.tenantId } })).toBe(0);
  });

  it('answers NOT_FOUND for another tenant’s base model, and FORBIDDEN to a member', async () => {
    const mine = await routingTenant(t);
    const theirs = await routingTenant(t);
    const { baseModel } = await boundLine(t, theirs, 'cfo');
    const across = await t.graphql(
      SetPolicy,
      { baseModel, input: failurePolicy('recommend_only') },
      mine.operator,
    );
    expect(across.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const member = await t.caller(['member'], { tenantId: theirs.tenantId });
    const refused = await t.graphql(SetPolicy, { baseModel, input: failurePolicy('recommend_only') }, member);
    expect(refused.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await t.db.prisma.canaryPolicy.count({ where: { tenantId: theirs.tenantId } })).toBe(0);
  });
});

describe('automatic canary decisions', () => {
  it('shows a canary without outcomes as collecting and leaves it alone', async () => {
    const tenant = await routingTenant(t);
    const { baseModel, canary } = await canaryLine(t, tenant, 'rollback_automatically');

    await evaluateCanaries(t.db.prisma);
    expect(await decisionsOf(canary)).toEqual([]);
    const versions = (await t.graphql(Analysis, { baseModel }, tenant.operator)).data?.modelVersions;
    expect(versions?.find((version) => version.id === canary)).toMatchObject({
      deploymentStatus: 'canary',
      canaryAnalysis: { state: 'collecting', decided: false, action: null },
    });
  });

  it(
    'takes a canary whose tasks fail off canary, once, with its evidence, and leaves production',
    async () => {
      const tenant = await routingTenant(t);
      const { baseModel, production, canary } = await canaryLine(t, tenant, 'rollback_automatically');
      await scriptedTasks(t, tenant, canary, 120);

      // This pass, or the app's own background pass if it came first, decides; nothing decides again.
      await evaluateCanaries(t.db.prisma);
      const again = await evaluateCanaries(t.db.prisma);

      expect(await decisionsOf(canary)).toEqual([['worse', 'rolled_back']]);
      expect(again.filter((decision) => decision.modelVersionId === canary)).toEqual([]);
      const versions = (await t.graphql(Versions, { baseModel }, tenant.operator)).data?.modelVersions;
      expect(versions?.map((version) => [version.id, version.deploymentStatus])).toEqual([
        [canary, 'ready'],
        [production, 'production'],
      ]);
      const analysis = (await t.graphql(Analysis, { baseModel }, tenant.operator)).data?.modelVersions.find(
        (version) => version.id === canary,
      )?.canaryAnalysis;
      expect(analysis).toMatchObject({ state: 'worse', decided: true, action: 'rolled_back' });
      expect(analysis?.evidence).toMatchObject({
        verdict: 'worse',
        guardrails: [expect.objectContaining({ metric: 'failure_rate', verdict: 'worse' })],
      });
      const audit = await t.db.prisma.auditEntry.findMany({
        where: { tenantId: tenant.tenantId, action: 'model.canary_decision' },
      });
      expect(audit.map((entry) => [entry.targetId, entry.outcome, entry.actor])).toEqual([
        [canary, 'rolled_back', 'canary-analysis'],
      ]);
      const events = await t.db.prisma.outboxEvent.findMany({
        where: { tenantId: tenant.tenantId, type: 'MODEL_VERSION_CHANGED' },
      });
      expect(
        events.map((event) => (event.payload as { deployment_status: string }).deployment_status),
      ).toContain('ready');
      // The next claim routes to production only.
      await queueTask(t, tenant.operator, 'cfo');
      expect((await claimRouted(t, tenant.agent, 'cfo')).task?.modelVersion?.id).toBe(production);
    },
    SCRIPTED_MS,
  );

  it(
    'only recommends under a dry-run policy',
    async () => {
      const tenant = await routingTenant(t);
      const { baseModel, canary } = await canaryLine(t, tenant, 'recommend_only');
      await scriptedTasks(t, tenant, canary, 120);

      await evaluateCanaries(t.db.prisma);

      expect(await decisionsOf(canary)).toEqual([['worse', 'recommended']]);
      const versions = (await t.graphql(Versions, { baseModel }, tenant.operator)).data?.modelVersions;
      expect(versions?.find((version) => version.id === canary)?.deploymentStatus).toBe('canary');
    },
    SCRIPTED_MS,
  );

  it('promotes a canary with the same outcomes as production under an auto-promote policy', async () => {
    const tenant = await routingTenant(t);
    const { baseModel, production, canary } = await canaryLine(t, tenant, 'promote_automatically', 0.1);
    // 400 tasks each, 5 % failed on both: counted as the queue counts them, in the current hour.
    await t.db.prisma.$executeRaw`
      INSERT INTO model_version_outcomes (tenant_id, model_version_id, hour_start, completed, failed)
      SELECT ${tenant.tenantId}::uuid, v::uuid, date_bin('1 hour'::interval, now(), timestamptz '1970-01-01 00:00:00+00'), 380, 20
      FROM unnest(ARRAY[${production}, ${canary}]) AS v`;

    await evaluateCanaries(t.db.prisma);

    expect(await decisionsOf(canary)).toEqual([['not_worse', 'promoted']]);
    const versions = (await t.graphql(Versions, { baseModel }, tenant.operator)).data?.modelVersions;
    expect(versions?.map((version) => [version.id, version.deploymentStatus])).toEqual([
      [canary, 'production'],
      [production, 'archived'],
    ]);
  });

  it(
    'never acts on a canary a manual decision already took off canary',
    async () => {
      const tenant = await routingTenant(t);
      const { baseModel, production } = await boundLine(t, tenant, 'cfo');
      const canary = await register(t, tenant.operator, baseModel);
      await promote(t, tenant.operator, canary, 50);
      await scriptedTasks(t, tenant, canary, 120);
      // A new canary replaces the failing one by hand (it returns to ready), then the policy arrives.
      const other = await register(t, tenant.operator, baseModel);
      await promote(t, tenant.operator, other, 10);
      const set = await t.graphql(
        SetPolicy,
        { baseModel, input: failurePolicy('rollback_automatically') },
        tenant.operator,
      );
      expect(set.errors).toBeUndefined();

      await evaluateCanaries(t.db.prisma);

      expect(await decisionsOf(canary)).toEqual([]);
      expect(await decisionsOf(other)).toEqual([]);
      const versions = (await t.graphql(Versions, { baseModel }, tenant.operator)).data?.modelVersions;
      expect(versions?.map((version) => [version.id, version.deploymentStatus])).toEqual([
        [other, 'canary'],
        [canary, 'ready'],
        [production, 'production'],
      ]);
    },
    SCRIPTED_MS,
  );
});

describe('two instances on one database', () => {
  it.skipIf(databaseKind === 'pglite')(
    'decide a worse canary exactly once when both analyse at once',
    async () => {
      const database = await createTestDatabase();
      const a = await createTestApp({ database });
      const b = await createTestApp({ database });
      try {
        const tenant = await routingTenant(a);
        const { canary } = await canaryLine(a, tenant, 'rollback_automatically');
        await scriptedTasks(b, tenant, canary, 120);

        // Both instances' background passes run too: whoever decides, the decision is made once.
        await Promise.all([evaluateCanaries(a.db.prisma), evaluateCanaries(b.db.prisma)]);

        expect(await a.db.prisma.canaryDecision.count({ where: { modelVersionId: canary } })).toBe(1);
        const rows = await a.db.prisma.modelDeployment.findMany({
          where: { modelVersionId: canary, actor: 'canary-analysis' },
        });
        expect(rows.map((row) => row.toStatus)).toEqual(['ready']);
      } finally {
        await a.close();
        await b.close();
        await database.drop();
      }
    },
    SCRIPTED_MS,
  );
});
