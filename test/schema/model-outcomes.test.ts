import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reapExpiredLeases } from '../../src/domain/agents/queue.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { CompleteTask, DecideRecommendation, FailTask, queueTask, RecordOutcome } from './agents-support.js';
import { promote, register } from './finetuning-support.js';
import {
  boundLine,
  claimRouted,
  type RoutingTenant,
  routingTenant,
  VersionOutcomes,
} from './model-routing-support.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function outcomes(tenant: RoutingTenant, baseModel: string, hours?: number) {
  const result = await t.graphql(
    VersionOutcomes,
    { baseModel, ...(hours ? { hours } : {}) },
    tenant.operator,
  );
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  return new Map(result.data.modelVersions.map((version) => [version.id, version.outcomes]));
}

async function completeOne(tenant: RoutingTenant, role: string, report: Record<string, unknown>) {
  await queueTask(t, tenant.operator, role);
  const claim = await claimRouted(t, tenant.agent, role);
  const id = claim.task?.id as string;
  const result = await t.graphql(
    CompleteTask,
    { id, input: { tokensUsed: 0, costUsd: 0, ...report } as never },
    tenant.agent,
  );
  if (!result.data) throw new Error(JSON.stringify(result.errors));
  return result.data.completeTask;
}

describe('ModelVersion.outcomes', () => {
  it('counts completions, failures, usage and recommendations of the tasks routed to each version', async () => {
    const tenant = await routingTenant(t);
    const { baseModel, production } = await boundLine(t, tenant, 'cfo');
    const first = await completeOne(tenant, 'cfo', {
      tokensUsed: 1200,
      costUsd: 0.125,
      recommendations: [
        { summary: 'Raise prices', predictedOutcome: 'Margin up' },
        { summary: 'Cut travel', predictedOutcome: 'Costs down' },
      ],
    });
    await completeOne(tenant, 'cfo', { tokensUsed: 800, costUsd: 0.075 });
    await queueTask(t, tenant.operator, 'cfo');
    const failing = await claimRouted(t, tenant.agent, 'cfo');
    await t.graphql(FailTask, { id: failing.task?.id as string, error: 'provider timeout' }, tenant.agent);
    const [accepted, rejected] = first.recommendations.map((recommendation) => recommendation.id);
    await t.graphql(DecideRecommendation, { id: accepted as string, accepted: true }, tenant.operator);
    await t.graphql(DecideRecommendation, { id: rejected as string, accepted: false }, tenant.operator);
    await t.graphql(RecordOutcome, { id: accepted as string, matched: true }, tenant.operator);

    const read = (await outcomes(tenant, baseModel)).get(production);

    expect(read).toMatchObject({
      hours: 24,
      tasksCompleted: 2,
      tasksFailed: 1,
      failureRate: 1 / 3,
      acceptanceRate: 0.5,
      outcomeAccuracy: 1,
      decided: 2,
      accepted: 1,
      evaluated: 1,
      matched: 1,
      tokensUsed: 2000,
      costUsd: 0.2,
    });
    expect(read?.avgExecutionTimeSeconds).toBeGreaterThanOrEqual(0);
    const tasks = await t.db.prisma.task.findMany({
      where: { tenantId: tenant.tenantId, status: 'completed' },
      select: { startedAt: true, finishedAt: true },
    });
    const mean =
      tasks.reduce(
        (sum, task) => sum + ((task.finishedAt?.getTime() ?? 0) - (task.startedAt?.getTime() ?? 0)),
        0,
      ) /
      tasks.length /
      1000;
    expect(read?.avgExecutionTimeSeconds).toBeCloseTo(mean, 3);
  });

  it('moves a changed decision instead of counting it twice, and ignores a repeated one', async () => {
    const tenant = await routingTenant(t);
    const { baseModel, production } = await boundLine(t, tenant, 'coo');
    const task = await completeOne(tenant, 'coo', {
      recommendations: [{ summary: 'Hire', predictedOutcome: 'More output' }],
    });
    const id = task.recommendations[0]?.id as string;
    for (const accepted of [true, true, false])
      await t.graphql(DecideRecommendation, { id, accepted }, tenant.operator);
    for (const matched of [false, true]) await t.graphql(RecordOutcome, { id, matched }, tenant.operator);

    expect((await outcomes(tenant, baseModel)).get(production)).toMatchObject({
      decided: 1,
      accepted: 0,
      acceptanceRate: 0,
      evaluated: 1,
      matched: 1,
      outcomeAccuracy: 1,
    });
  });

  it('keeps each version’s outcomes apart and leaves unrouted tasks out', async () => {
    const tenant = await routingTenant(t);
    const { baseModel, production } = await boundLine(t, tenant, 'cmo');
    await completeOne(tenant, 'cmo', { tokensUsed: 10, costUsd: 1 });
    const next = await register(t, tenant.operator, baseModel);
    await promote(t, tenant.operator, next);
    await completeOne(tenant, 'cmo', { tokensUsed: 20, costUsd: 2 });
    await completeOne(tenant, 'cto', { tokensUsed: 40, costUsd: 4 });

    const read = await outcomes(tenant, baseModel);

    expect(read.get(production)).toMatchObject({ tasksCompleted: 1, tokensUsed: 10, costUsd: 1 });
    expect(read.get(next)).toMatchObject({ tasksCompleted: 1, tokensUsed: 20, costUsd: 2 });
    const rows = await t.db.prisma.modelVersionOutcome.findMany({ where: { tenantId: tenant.tenantId } });
    expect(rows.map((row) => row.modelVersionId).sort()).toEqual([production, next].sort());
  });

  it('counts a task whose lease lapsed on its last attempt as failed', async () => {
    const tenant = await routingTenant(t);
    const { baseModel, production } = await boundLine(t, tenant, 'clo');
    const id = await queueTask(t, tenant.operator, 'clo');
    await claimRouted(t, tenant.agent, 'clo');
    await t.db.prisma.task.update({
      where: { id },
      data: { attempts: 3, leaseExpiresAt: new Date(Date.now() - 1000) },
    });

    await t.db.prisma.$transaction((tx) => reapExpiredLeases(tx, tenant.tenantId, 'clo'));

    expect((await outcomes(tenant, baseModel)).get(production)).toMatchObject({
      tasksCompleted: 0,
      tasksFailed: 1,
      failureRate: 1,
      avgExecutionTimeSeconds: null,
    });
  });

  it('reads zeros and null rates for a version with no routed task, over a window of whole hours', async () => {
    const tenant = await routingTenant(t);
    const { baseModel, production } = await boundLine(t, tenant, 'ceo');

    const read = (await outcomes(tenant, baseModel, 3)).get(production);

    expect(read).toMatchObject({
      hours: 3,
      tasksCompleted: 0,
      tasksFailed: 0,
      failureRate: null,
      acceptanceRate: null,
      outcomeAccuracy: null,
      tokensUsed: 0,
      costUsd: 0,
      avgExecutionTimeSeconds: null,
    });
    const start = new Date(read?.windowStart as string);
    const end = new Date(read?.windowEnd as string);
    expect(start.getTime() % 3_600_000).toBe(0);
    expect(end.getTime() - start.getTime()).toBeGreaterThanOrEqual(2 * 3_600_000);
    expect(end.getTime() - start.getTime()).toBeLessThan(3 * 3_600_000);
  });

  it('answers the counters as they are now, not from the response cache of modelVersions', async () => {
    const tenant = await routingTenant(t);
    const { baseModel, production } = await boundLine(t, tenant, 'cfo');
    const task = await completeOne(tenant, 'cfo', { recommendations: [{ summary: 'Hedge' }] });
    expect((await outcomes(tenant, baseModel)).get(production)?.decided).toBe(0);

    // A decision returns no ModelVersion, so it invalidates no cached modelVersions answer.
    await t.graphql(
      DecideRecommendation,
      { id: task.recommendations[0]?.id as string, accepted: true },
      tenant.operator,
    );

    expect((await outcomes(tenant, baseModel)).get(production)?.decided).toBe(1);
  });

  it.each([[0], [-1], [24 * 90 + 1]])('refuses a window of %i hours', async (hours) => {
    const tenant = await routingTenant(t);
    const { baseModel } = await boundLine(t, tenant, 'cpo');
    const result = await t.graphql(VersionOutcomes, { baseModel, hours }, tenant.operator);
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('shows nothing of another tenant’s versions', async () => {
    const mine = await routingTenant(t);
    const theirs = await routingTenant(t);
    const { baseModel } = await boundLine(t, theirs, 'cfo');
    await completeOne(theirs, 'cfo', { tokensUsed: 5, costUsd: 1 });

    expect((await outcomes(mine, baseModel)).size).toBe(0);
  });
});
