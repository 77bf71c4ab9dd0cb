import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CANARY_ANALYSIS_ACTOR, evaluateCanaries } from '../../src/domain/finetuning/canary-rollout.js';
import { graphql } from '../../src/generated/graphql/index.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { databaseKind } from '../support/database.js';
import { createTwoTestApps } from '../support/fixtures.js';
import { CompleteTask, DecideRecommendation, FailTask, queueTask, RecordOutcome } from './agents-support.js';
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

type Policy = ReturnType<typeof failurePolicy>;

/** A bound base model with a production version, a canary at 50 % and `policy`. */
async function canaryLine(app: TestApp, tenant: RoutingTenant, policy: Policy) {
  const { baseModel, production } = await boundLine(app, tenant, 'cfo');
  const canary = await register(app, tenant.operator, baseModel);
  await promote(app, tenant.operator, canary, 50);
  await setPolicy(app, tenant, baseModel, policy);
  return { baseModel, production, canary };
}

async function setPolicy(app: TestApp, tenant: RoutingTenant, baseModel: string, input: Policy) {
  const set = await app.graphql(SetPolicy, { baseModel, input }, tenant.operator);
  expect(set.errors).toBeUndefined();
}

/** The decisions stored for a version: [verdict, action]. */
const decisionsOf = async (modelVersionId: string) =>
  (await t.db.prisma.canaryDecision.findMany({ where: { modelVersionId } })).map((row) => [
    row.verdict,
    row.action,
  ]);

type Arm = 'canary' | 'production';

/**
 * What one routed task does: fail, or complete, with one recommendation whose decision and outcome are
 * recorded when given.
 */
type Script = { fail: true } | { fail: false; accepted?: boolean; matched?: boolean };

const BATCH = 5;

/**
 * Runs `count` tasks through chat and routed claims, five at a time (PGlite runs one transaction at a time,
 * and a transaction that waits more than Prisma's 2 s for its turn is answered 503: ten claims, each a
 * transaction or two, reached that on a loaded machine); `script` says what each does from its
 * arm (the version its claim routed it to) and its number among that arm's tasks. Returns the tasks of each
 * arm.
 */
async function routedTasks(
  app: TestApp,
  tenant: RoutingTenant,
  canary: string,
  count: number,
  script: (arm: Arm, index: number) => Script,
): Promise<Record<Arm, number>> {
  const ran: Record<Arm, number> = { canary: 0, production: 0 };
  const check = (result: { errors?: unknown }) => {
    if (result.errors) throw new Error(JSON.stringify(result.errors));
  };
  // The scripts fail tasks in a row on purpose: the CFO's circuit breakers (docs/breakers.md) would pause it.
  check(
    await app.graphql(
      'mutation { setBreakerPolicy(role: "cfo", input: { enabled: false }) { role } }',
      {},
      tenant.operator,
    ),
  );
  const batches = Array.from({ length: Math.ceil(count / BATCH) }, (_, index) =>
    Math.min(BATCH, count - index * BATCH),
  );
  for (const size of batches) {
    await Promise.all(Array.from({ length: size }, () => queueTask(app, tenant.operator, 'cfo')));
    await Promise.all(
      Array.from({ length: size }, async () => {
        const claim = await claimRouted(app, tenant.agent, 'cfo');
        const id = claim.task?.id as string;
        const arm: Arm = claim.task?.modelVersion?.id === canary ? 'canary' : 'production';
        const step = script(arm, ran[arm]++);
        if (step.fail) {
          check(await app.graphql(FailTask, { id, error: 'bad answer' }, tenant.agent));
          return;
        }
        const recommendations =
          step.accepted === undefined && step.matched === undefined
            ? []
            : [{ summary: 'Hedge the currency exposure', predictedOutcome: 'Margin holds' }];
        const completed = await app.graphql(
          CompleteTask,
          { id, input: { tokensUsed: 1, costUsd: 0, recommendations } },
          tenant.agent,
        );
        check(completed);
        const recommendation = completed.data?.completeTask.recommendations[0]?.id as string;
        if (step.accepted !== undefined) {
          check(
            await app.graphql(
              DecideRecommendation,
              { id: recommendation, accepted: step.accepted },
              tenant.operator,
            ),
          );
        }
        if (step.matched !== undefined) {
          check(
            await app.graphql(RecordOutcome, { id: recommendation, matched: step.matched }, tenant.operator),
          );
        }
      }),
    );
  }
  return ran;
}

/** Runs `count` tasks through claims: the canary's fail, production's complete. */
const scriptedTasks = (app: TestApp, tenant: RoutingTenant, canary: string, count: number) =>
  routedTasks(app, tenant, canary, count, (arm) => ({ fail: arm === 'canary' }));

/**
 * The same outcomes on both arms, by each arm's own task numbers: one task in 20 fails, and of the others'
 * recommendations nine in ten are accepted and nine in ten come true.
 */
const sameOutcomes = (_arm: Arm, index: number): Script =>
  index % 20 === 19 ? { fail: true } : { fail: false, accepted: index % 10 !== 9, matched: index % 10 !== 8 };

/** Long enough for 120 tasks through the API on a busy PostgreSQL. */
const SCRIPTED_MS = 120_000;

/** Every metric guarded, loosely enough for about 120 routed tasks per arm to show equal arms not worse. */
const equalPolicy: Policy = {
  guardrails: [
    { metric: 'failure_rate', direction: 'lower_is_better', tolerance: 0.3 },
    { metric: 'acceptance_rate', direction: 'higher_is_better', tolerance: 0.3 },
    { metric: 'outcome_accuracy', direction: 'higher_is_better', tolerance: 0.3 },
  ],
  minimumTasks: 50,
  maxDurationSeconds: 3600,
  action: 'promote_automatically',
};

/** At most 400 routed tasks before the promotion must have happened (about 250 are needed). */
const PROMOTION_BATCHES = 20;
/** Long enough for 400 routed tasks with their decisions through the API on a busy PostgreSQL. */
const PROMOTION_MS = 240_000;

/**
 * The latest change of a tenant's line: its history rows as (version's role, from, to, share) in order, the
 * MODEL_VERSION_CHANGED events it wrote as (version's role, status), and who made it.
 */
async function lastChange(tenantId: string, roles: Record<string, string>) {
  const history = await t.db.prisma.modelDeployment.findMany({
    where: { tenantId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const firstOfChange = history.findLastIndex((row) => row.toStatus === 'canary') + 1;
  const change = history.slice(firstOfChange);
  const events = await t.db.prisma.outboxEvent.findMany({
    where: { tenantId, type: 'MODEL_VERSION_CHANGED' },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const payloads = events.map(
    (event) => event.payload as { model_version_id: string; deployment_status: string },
  );
  return {
    rows: change.map((row) => [
      roles[row.modelVersionId],
      row.fromStatus,
      row.toStatus,
      row.canaryTrafficPct,
    ]),
    events: payloads
      .slice(-change.length)
      .map((payload) => [roles[payload.model_version_id], payload.deployment_status]),
    actors: [...new Set(change.map((row) => row.actor))],
  };
}

/**
 * A worse canary rolled back by the analysis within its policy's bounds, exactly once: one decision, made
 * before the maximum duration ran out on at most the canary's routed tasks (all failed), one history row
 * and one event taking it to `ready`, one audit row, and production untouched.
 */
async function expectRolledBackOnce(
  app: TestApp,
  tenant: RoutingTenant,
  line: { production: string; canary: string },
  ran: Record<Arm, number>,
  policy: Policy,
) {
  const { prisma } = app.db;
  const decisions = await prisma.canaryDecision.findMany({ where: { modelVersionId: line.canary } });
  expect(decisions.map((row) => [row.verdict, row.action])).toEqual([['worse', 'rolled_back']]);
  const [decision] = decisions;
  if (!decision) throw new Error('no decision');
  expect(decision.createdAt.getTime() - decision.canaryStartedAt.getTime()).toBeLessThanOrEqual(
    policy.maxDurationSeconds * 1000,
  );
  const evidence = decision.evidence as {
    canary_tasks: number;
    guardrails: { metric: string; canary: { observations: number; successes: number } }[];
  };
  expect(evidence.canary_tasks).toBeGreaterThan(0);
  expect(evidence.canary_tasks).toBeLessThanOrEqual(ran.canary);
  const failures = evidence.guardrails.find((guardrail) => guardrail.metric === 'failure_rate')?.canary;
  expect(failures?.successes).toBe(failures?.observations);
  const byAnalysis = await prisma.modelDeployment.findMany({
    where: { tenantId: tenant.tenantId, actor: CANARY_ANALYSIS_ACTOR },
  });
  expect(byAnalysis.map((row) => [row.modelVersionId, row.fromStatus, row.toStatus])).toEqual([
    [line.canary, 'canary', 'ready'],
  ]);
  const audit = await prisma.auditEntry.findMany({
    where: { tenantId: tenant.tenantId, action: 'model.canary_decision' },
  });
  expect(audit.map((entry) => [entry.targetId, entry.outcome])).toEqual([[line.canary, 'rolled_back']]);
  // Registered, put on canary, rolled back once; production only registered and promoted.
  const events = await prisma.outboxEvent.findMany({
    where: { tenantId: tenant.tenantId, type: 'MODEL_VERSION_CHANGED' },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const statusesOf = (id: string) =>
    events
      .map((event) => event.payload as { model_version_id: string; deployment_status: string })
      .filter((payload) => payload.model_version_id === id)
      .map((payload) => payload.deployment_status);
  expect(statusesOf(line.canary)).toEqual(['ready', 'canary', 'ready']);
  expect(statusesOf(line.production)).toEqual(['ready', 'production']);
  const versions = await prisma.modelVersion.findMany({
    where: { id: { in: [line.canary, line.production] } },
    select: { id: true, deploymentStatus: true },
  });
  expect(Object.fromEntries(versions.map((version) => [version.id, version.deploymentStatus]))).toEqual({
    [line.canary]: 'ready',
    [line.production]: 'production',
  });
}

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
    const { baseModel, canary } = await canaryLine(t, tenant, failurePolicy('rollback_automatically'));

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
      const policy = failurePolicy('rollback_automatically');
      const { baseModel, production, canary } = await canaryLine(t, tenant, policy);
      const ran = await scriptedTasks(t, tenant, canary, 120);

      // This pass, or the app's own background pass if it came first, decides; nothing decides again.
      await evaluateCanaries(t.db.prisma);
      const again = await evaluateCanaries(t.db.prisma);

      await expectRolledBackOnce(t, tenant, { production, canary }, ran, policy);
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
    'counts exactly the tasks routed during the canary run, none that either version finished before it',
    async () => {
      const tenant = await routingTenant(t);
      const { baseModel, production } = await boundLine(t, tenant, 'cfo');
      const canary = await register(t, tenant.operator, baseModel);
      await promote(t, tenant.operator, canary, 50);
      // An earlier run, in this same hour: the canary's tasks fail, production's complete.
      const before = await scriptedTasks(t, tenant, canary, 40);
      expect(before.canary).toBeGreaterThan(0);
      expect(before.production).toBeGreaterThan(0);
      // Setting its share again starts a new run, judged from here on; every task of it completes.
      await promote(t, tenant.operator, canary, 50);
      await setPolicy(t, tenant, baseModel, failurePolicy('rollback_automatically'));
      const during = await routedTasks(t, tenant, canary, 20, () => ({ fail: false, accepted: true }));

      await evaluateCanaries(t.db.prisma);

      expect(await decisionsOf(canary)).toEqual([]);
      const analysis = (await t.graphql(Analysis, { baseModel }, tenant.operator)).data?.modelVersions.find(
        (version) => version.id === canary,
      )?.canaryAnalysis;
      expect(analysis).toMatchObject({ decided: false, action: null });
      expect(analysis?.state).not.toBe('worse');
      expect(analysis?.evidence).toMatchObject({
        canary_tasks: during.canary,
        guardrails: [
          {
            metric: 'failure_rate',
            canary: { observations: during.canary, successes: 0 },
            production: { observations: during.production, successes: 0 },
          },
        ],
      });
      // The run's counters, one row per version, follow a changed decision: moved, never counted twice.
      const run = await t.db.prisma.modelDeployment.findFirstOrThrow({
        where: { modelVersionId: canary, toStatus: 'canary' },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      });
      const counted = async () =>
        Object.fromEntries(
          (await t.db.prisma.canaryRunOutcome.findMany({ where: { runId: run.id } })).map((row) => [
            row.modelVersionId,
            [row.completed, row.failed, row.decided, row.accepted],
          ]),
        );
      expect(await counted()).toEqual({
        [canary]: [during.canary, 0, during.canary, during.canary],
        [production]: [during.production, 0, during.production, during.production],
      });
      const recommendation = await t.db.prisma.recommendation.findFirstOrThrow({
        where: { task: { canaryRunId: run.id, modelVersionId: canary } },
      });
      const changed = await t.graphql(
        DecideRecommendation,
        { id: recommendation.id, accepted: false },
        tenant.operator,
      );
      expect(changed.errors).toBeUndefined();
      expect(await counted()).toEqual({
        [canary]: [during.canary, 0, during.canary, during.canary - 1],
        [production]: [during.production, 0, during.production, during.production],
      });
    },
    SCRIPTED_MS,
  );

  it(
    'only recommends under a dry-run policy',
    async () => {
      const tenant = await routingTenant(t);
      const { baseModel, canary } = await canaryLine(t, tenant, failurePolicy('recommend_only'));
      await scriptedTasks(t, tenant, canary, 120);

      await evaluateCanaries(t.db.prisma);

      expect(await decisionsOf(canary)).toEqual([['worse', 'recommended']]);
      const versions = (await t.graphql(Versions, { baseModel }, tenant.operator)).data?.modelVersions;
      expect(versions?.find((version) => version.id === canary)?.deploymentStatus).toBe('canary');
    },
    SCRIPTED_MS,
  );

  it(
    'promotes a canary whose routed tasks match production’s, once, through the manual promotion’s transition',
    async () => {
      const tenant = await routingTenant(t);
      const { baseModel, production, canary } = await canaryLine(t, tenant, equalPolicy);

      // Twenty routed tasks at a time until a pass (this test's or the app's own) decides.
      const ran: Record<Arm, number> = { canary: 0, production: 0 };
      for (let batch = 0; batch < PROMOTION_BATCHES; batch += 1) {
        const more = await routedTasks(t, tenant, canary, 20, (arm, index) =>
          sameOutcomes(arm, ran[arm] + index),
        );
        ran.canary += more.canary;
        ran.production += more.production;
        await evaluateCanaries(t.db.prisma);
        if ((await decisionsOf(canary)).length > 0) break;
      }
      const again = await evaluateCanaries(t.db.prisma);

      expect(await decisionsOf(canary)).toEqual([['not_worse', 'promoted']]);
      expect(again.filter((decision) => decision.modelVersionId === canary)).toEqual([]);
      const versions = (await t.graphql(Versions, { baseModel }, tenant.operator)).data?.modelVersions;
      expect(versions?.map((version) => [version.id, version.deploymentStatus])).toEqual([
        [canary, 'production'],
        [production, 'archived'],
      ]);
      const evidence = (
        await t.db.prisma.canaryDecision.findFirstOrThrow({ where: { modelVersionId: canary } })
      ).evidence as { canary_tasks: number; guardrails: { metric: string; verdict: string }[] };
      expect(evidence.canary_tasks).toBeGreaterThanOrEqual(equalPolicy.minimumTasks);
      expect(evidence.canary_tasks).toBeLessThanOrEqual(ran.canary);
      expect(evidence.guardrails.map((guardrail) => [guardrail.metric, guardrail.verdict])).toEqual([
        ['failure_rate', 'not_worse'],
        ['acceptance_rate', 'not_worse'],
        ['outcome_accuracy', 'not_worse'],
      ]);

      // A manual promotion of a twin canary writes the same history rows and events, by its caller.
      const twin = await routingTenant(t);
      const manual = await canaryLine(t, twin, equalPolicy);
      await promote(t, twin.operator, manual.canary);
      const automatic = await lastChange(tenant.tenantId, { [canary]: 'canary', [production]: 'production' });
      const byHand = await lastChange(twin.tenantId, {
        [manual.canary]: 'canary',
        [manual.production]: 'production',
      });
      expect(automatic.rows).toEqual(byHand.rows);
      expect(automatic.events).toEqual(byHand.events);
      expect(automatic.actors).toEqual(['canary-analysis']);
      expect(byHand.actors).toEqual([twin.operator.sub]);
    },
    PROMOTION_MS,
  );

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
      const { a, b, close } = await createTwoTestApps();
      try {
        const tenant = await routingTenant(a);
        const policy = failurePolicy('rollback_automatically');
        const line = await canaryLine(a, tenant, policy);
        // Routed by instance b, analysed by both: the canary's tasks fail, production's complete.
        const ran = await scriptedTasks(b, tenant, line.canary, 120);

        // Both instances' background passes run too: whoever decides, the decision is made once.
        await Promise.all([evaluateCanaries(a.db.prisma), evaluateCanaries(b.db.prisma)]);
        await Promise.all([evaluateCanaries(a.db.prisma), evaluateCanaries(b.db.prisma)]);

        await expectRolledBackOnce(a, tenant, line, ran, policy);
      } finally {
        await close();
      }
    },
    SCRIPTED_MS,
  );
});
