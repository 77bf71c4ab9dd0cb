import { describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Prisma } from '../../src/generated/prisma/client.js';
import type { TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';
import { ago, HOUR, freshTenant as memberOfFreshTenant, taskSeeder } from './agents-support.js';

const ByHour = graphql(`
  query AgentVitalsByHourTest($role: String!) {
    agentVitalsByHour(role: $role) {
      ...AgentVitalsFields
    }
    agentVitals(role: $role) {
      tasksCompleted
      tasksFailed
      tokensUsed
      costUsd
      periodStart
      periodEnd
    }
  }
`);

let t: TestApp;

withTestApp((app) => (t = app));

const freshTenant = () => memberOfFreshTenant(t);
const { seedTask, completed } = taskSeeder(() => t);

describe('agentVitalsByHour', () => {
  it('answers 24 hours, oldest first, that tile the period of agentVitals', async () => {
    const caller = await freshTenant();

    const { data, errors } = await t.graphql(ByHour, { role: 'ceo' }, caller);

    expect(errors).toBeUndefined();
    const hours = data?.agentVitalsByHour ?? [];
    expect(hours).toHaveLength(24);
    for (const [index, hour] of hours.entries()) {
      expect(Date.parse(hour.periodEnd) - Date.parse(hour.periodStart)).toBe(HOUR);
      const next = hours[index + 1];
      if (next) expect(next.periodStart).toBe(hour.periodEnd);
      expect(hour).toMatchObject({
        agentRole: 'ceo',
        tasksCompleted: 0,
        tasksFailed: 0,
        avgExecutionTimeSeconds: null,
        acceptanceRate: null,
        outcomeAccuracy: null,
        tokensUsed: 0,
        costUsd: 0,
      });
    }
    // Both periods end at the request, each read by its own statement of the same database clock.
    const day = data?.agentVitals;
    expect(
      Math.abs(Date.parse(hours[0]?.periodStart ?? '') - Date.parse(day?.periodStart ?? '')),
    ).toBeLessThan(60_000);
    expect(Date.parse(hours[23]?.periodEnd ?? '') - Date.parse(hours[0]?.periodStart ?? '')).toBe(24 * HOUR);
  });

  it('puts each finished task in the hour it finished, with that hour’s average and exact cost', async () => {
    const caller = await freshTenant();
    const { tenantId } = caller;
    await completed(tenantId, 'cfo', 0.5, 10, 100, '0.1');
    await completed(tenantId, 'cfo', 0.6, 30, 200, '0.000001');
    await completed(tenantId, 'cfo', 5.5, 60, 700, '2');
    await seedTask(tenantId, 'cfo', {
      status: 'failed',
      attempts: 1,
      startedAt: ago(5.6 * HOUR),
      finishedAt: ago(5.5 * HOUR),
    });
    await completed(tenantId, 'cfo', 23.5, 4, 1, '1');
    await completed(tenantId, 'cfo', 25, 10, 9999, '9');
    await completed(tenantId, 'cto', 0.5, 10, 5000, '5');
    const other = await freshTenant();
    await completed(other.tenantId, 'cfo', 0.5, 10, 5000, '5');

    const hours = (await t.graphql(ByHour, { role: 'CFO' }, caller)).data?.agentVitalsByHour ?? [];

    expect(hours[23]).toMatchObject({
      agentRole: 'cfo',
      tasksCompleted: 2,
      tasksFailed: 0,
      avgExecutionTimeSeconds: 20,
      tokensUsed: 300,
      costUsd: 0.100001,
    });
    expect(hours[18]).toMatchObject({
      tasksCompleted: 1,
      tasksFailed: 1,
      avgExecutionTimeSeconds: 60,
      costUsd: 2,
    });
    expect(hours[0]).toMatchObject({ tasksCompleted: 1, avgExecutionTimeSeconds: 4, tokensUsed: 1 });
    const busy = hours.flatMap((hour, index) => (hour.tasksCompleted + hour.tasksFailed > 0 ? [index] : []));
    expect(busy).toEqual([0, 18, 23]);
  });

  it('adds up to the day’s vitals', async () => {
    const caller = await freshTenant();
    const { tenantId } = caller;
    for (const hoursAgo of [0.1, 1.2, 1.3, 7.9, 12, 22.2]) {
      await completed(tenantId, 'coo', hoursAgo, 3, 11, '0.03');
    }
    await seedTask(tenantId, 'coo', {
      status: 'running',
      attempts: 3,
      startedAt: ago(3 * HOUR),
      leaseExpiresAt: ago(2.5 * HOUR),
    });

    const data = (await t.graphql(ByHour, { role: 'coo' }, caller)).data;
    const hours = data?.agentVitalsByHour ?? [];
    const sum = (pick: (hour: (typeof hours)[number]) => number) =>
      hours.reduce((total, hour) => total + pick(hour), 0);

    expect(sum((hour) => hour.tasksCompleted)).toBe(data?.agentVitals.tasksCompleted);
    expect(sum((hour) => hour.tasksFailed)).toBe(data?.agentVitals.tasksFailed);
    expect(sum((hour) => hour.tokensUsed)).toBe(data?.agentVitals.tokensUsed);
    expect(sum((hour) => hour.costUsd)).toBeCloseTo(data?.agentVitals.costUsd ?? Number.NaN, 9);
    expect(data?.agentVitals).toMatchObject({ tasksCompleted: 6, tasksFailed: 1 });
  });

  it('rates decisions and outcomes in the hour they were recorded', async () => {
    const caller = await freshTenant();
    const { tenantId } = caller;
    const task = await completed(tenantId, 'cmo', 30, 10, 1, '0');
    const recommend = (data: Partial<Prisma.RecommendationUncheckedCreateInput>) =>
      t.db.prisma.recommendation.create({
        data: { tenantId, taskId: task.id, role: 'cmo', summary: 'seeded', ...data },
      });
    await recommend({ accepted: true, decidedAt: ago(0.2 * HOUR) });
    await recommend({ accepted: false, decidedAt: ago(0.3 * HOUR) });
    await recommend({ predictedOutcome: 'x', outcomeMatched: true, outcomeRecordedAt: ago(3.5 * HOUR) });

    const hours = (await t.graphql(ByHour, { role: 'cmo' }, caller)).data?.agentVitalsByHour ?? [];

    expect(hours[23]).toMatchObject({ acceptanceRate: 0.5, outcomeAccuracy: null });
    expect(hours[20]).toMatchObject({ acceptanceRate: null, outcomeAccuracy: 1 });
  });

  it('answers NOT_FOUND for a role the tenant does not have', async () => {
    const caller = await freshTenant();

    const result = await t.graphql(ByHour, { role: 'cso' }, caller);

    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND' });
    expect(result.data).toBeNull();
  });

  it('answers UNAUTHENTICATED without a token', async () => {
    const result = await t.graphql(ByHour, { role: 'ceo' }, null);

    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHENTICATED' });
  });
});
