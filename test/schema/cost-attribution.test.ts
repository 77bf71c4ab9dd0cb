import { describe, expect, it } from 'vitest';
import { COST_GROUPS, type CostGroup } from '../../src/domain/agents/cost-attribution.js';
import { Prisma } from '../../src/generated/prisma/client.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';
import { BudgetQuery, SetBudget } from './agents-budgets-support.js';
import {
  AgentVitalsQuery,
  ClaimTask,
  CompleteTask,
  memberAndAgent,
  queueTask,
  taskSeeder,
} from './agents-support.js';

let t: TestApp;

withTestApp((app) => (t = app));

const { seedTask } = taskSeeder(() => t);

const Attribution = `
  query AttributionForTest($groupBy: CostGroup!, $from: DateTime, $to: DateTime) {
    costAttribution(groupBy: $groupBy, from: $from, to: $to) {
      groupBy from to totalCostUsd totalTokensUsed tasks
      rows { key label costUsd tokensUsed inputTokens outputTokens tasks connectorCalls }
    }
  }`;

interface AttributionView {
  totalCostUsd: string;
  totalTokensUsed: number;
  tasks: number;
  rows: {
    key: string | null;
    label: string;
    costUsd: string;
    tokensUsed: number;
    tasks: number;
    connectorCalls: number;
  }[];
}

async function attribution(caller: Caller, groupBy: CostGroup, period: { from?: Date; to?: Date } = {}) {
  const result = await t.graphql(
    Attribution,
    {
      groupBy,
      from: period.from?.toISOString() ?? null,
      to: period.to?.toISOString() ?? null,
    },
    caller,
  );
  expect(result.errors).toBeUndefined();
  return (result.data as { costAttribution: AttributionView }).costAttribution;
}

const decimalSum = (values: readonly string[]) =>
  values.reduce((sum, value) => sum.plus(value), new Prisma.Decimal(0));

/** Completes a queued task of `role` through the API, reporting `costUsd` and `tokensUsed`. */
async function completeOne(member: Caller, agent: Caller, role: string, costUsd: number, tokensUsed: number) {
  const id = await queueTask(t, member, role);
  expect((await t.graphql(ClaimTask, { role }, agent)).data?.claimTask?.id).toBe(id);
  const done = await t.graphql(CompleteTask, { id, input: { tokensUsed, costUsd } }, agent);
  expect(done.errors).toBeUndefined();
  return id;
}

describe('costAttribution', () => {
  it('adds up, in every grouping, to the vitals’ cost and the budgets’ spend to the micro-dollar', async () => {
    const { member, agent } = await memberAndAgent(t);
    const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
    for (const role of ['cfo', 'cto', null]) {
      const set = await t.graphql(
        SetBudget,
        { input: { role, period: 'day', limitUsd: '1000', estimateUsd: '0.01' } },
        chairman,
      );
      expect(set.errors).toBeUndefined();
    }
    await completeOne(member, agent, 'cfo', 0.123456, 120);
    await completeOne(member, agent, 'cfo', 0.000001, 7);
    await completeOne(member, agent, 'cto', 1.1, 1000);
    await completeOne(member, agent, 'cfo', 0.2, 33);

    const budgetOf = async (role: string | null) =>
      (
        (await t.graphql(BudgetQuery, { role }, chairman)).data as {
          budget: { spentUsd: string; periodStart: string };
        }
      ).budget;
    const tenantBudget = await budgetOf(null);
    const from = new Date(tenantBudget.periodStart);
    const to = new Date(Date.now() + 1000);
    for (const groupBy of COST_GROUPS) {
      const view = await attribution(chairman, groupBy, { from, to });
      expect(decimalSum(view.rows.map((row) => row.costUsd)).toFixed(6)).toBe(view.totalCostUsd);
      expect(new Prisma.Decimal(view.totalCostUsd).equals(tenantBudget.spentUsd)).toBe(true);
      expect(view.totalCostUsd).toBe('1.423457');
      expect(view.totalTokensUsed).toBe(1160);
      expect(view.tasks).toBe(4);
    }
    const byRole = await attribution(chairman, 'ROLE', { from, to });
    for (const role of ['cfo', 'cto']) {
      const row = byRole.rows.find((candidate) => candidate.key === role);
      const vitals = (await t.graphql(AgentVitalsQuery, { role }, member)).data?.agentVitals;
      expect(new Prisma.Decimal(row?.costUsd ?? '0').equals((await budgetOf(role)).spentUsd)).toBe(true);
      expect(Number(row?.costUsd)).toBe(vitals?.costUsd);
      expect(row?.tokensUsed).toBe(vitals?.tokensUsed);
    }
    expect(byRole.rows.map((row) => [row.key, row.costUsd, row.tasks])).toEqual([
      ['cto', '1.100000', 1],
      ['cfo', '0.323457', 3],
    ]);
  });

  it('counts a delegated sub-task under its root, and under its root’s thread and routine', async () => {
    const { member } = await memberAndAgent(t);
    const tenantId = member.tenantId;
    const prisma = t.db.prisma;
    const thread = await prisma.thread.create({ data: { tenantId, role: 'cfo', createdBy: 'seed' } });
    const routine = await prisma.routine.create({
      data: {
        tenantId,
        role: 'cfo',
        cron: '0 9 * * 1',
        timeZone: 'UTC',
        message: 'Weekly cash report',
        nextRunAt: new Date(Date.now() + 86_400_000),
        createdBy: 'seed',
      },
    });
    const finishedAt = new Date(Date.now() - 60_000);
    const ended = {
      status: 'completed' as const,
      finishedAt,
      startedAt: new Date(finishedAt.getTime() - 1000),
    };
    const root = await seedTask(tenantId, 'cfo', {
      ...ended,
      message: 'Cash report',
      threadId: thread.id,
      routineId: routine.id,
      costUsd: '1.000001',
      tokensUsed: 10,
    });
    const child = await seedTask(tenantId, 'cto', {
      ...ended,
      parentTaskId: root.id,
      rootTaskId: root.id,
      depth: 1,
      costUsd: '0.5',
      tokensUsed: 5,
    });
    await seedTask(tenantId, 'cmo', {
      ...ended,
      parentTaskId: child.id,
      rootTaskId: root.id,
      depth: 2,
      costUsd: '0.25',
      tokensUsed: 2,
    });
    const other = await seedTask(tenantId, 'cfo', {
      ...ended,
      message: 'Other',
      costUsd: '2',
      tokensUsed: 1,
    });
    const connector = await prisma.connector.create({
      data: { tenantId, name: 'Ledger', nameKey: 'ledger', template: {}, createdBy: 'seed' },
    });
    await prisma.connectorCallFingerprint.createMany({
      data: [
        { taskId: root.id, fingerprint: 'a', connectorId: connector.id, count: 3 },
        { taskId: child.id, fingerprint: 'b', connectorId: connector.id, count: 2 },
      ],
    });
    const chairman = await t.caller(['chairman'], { tenantId });
    const rowsOf = async (groupBy: CostGroup) =>
      (await attribution(chairman, groupBy)).rows.map((row) => [
        row.key,
        row.costUsd,
        row.tasks,
        row.connectorCalls,
      ]);

    expect(await rowsOf('ROOT_TASK')).toEqual([
      [other.id, '2.000000', 1, 0],
      [root.id, '1.750001', 3, 0],
    ]);
    expect(await rowsOf('THREAD')).toEqual([
      [null, '2.000000', 1, 0],
      [thread.id, '1.750001', 3, 0],
    ]);
    expect(await rowsOf('ROUTINE')).toEqual([
      [null, '2.000000', 1, 0],
      [routine.id, '1.750001', 3, 0],
    ]);
    expect(await rowsOf('MODEL_VERSION')).toEqual([[null, '3.750001', 4, 0]]);
    expect(await rowsOf('CONNECTOR')).toEqual([
      [null, '3.750001', 4, 0],
      [connector.id, '0.000000', 2, 5],
    ]);
    const byRoot = await attribution(chairman, 'ROOT_TASK');
    expect(byRoot.rows[1]?.label).toBe('cfo: Cash report');
  });

  it('refuses a period that is empty, reversed or longer than 366 days, with the reason', async () => {
    const chairman = await t.caller(['chairman']);
    const now = Date.now();
    for (const [from, to] of [
      [now, now],
      [now, now - 1000],
      [now - 367 * 86_400_000, now],
    ] as const) {
      const result = await t.graphql(
        Attribution,
        { groupBy: 'ROLE', from: new Date(from).toISOString(), to: new Date(to).toISOString() },
        chairman,
      );
      expect(result.errors?.[0]?.extensions).toMatchObject({
        code: 'BAD_USER_INPUT',
        reason: 'invalid_period',
      });
    }
    const unknown = await t.graphql(Attribution, { groupBy: 'PLANET' }, chairman);
    expect(unknown.errors?.[0]).toBeDefined();
  });

  it('shows another tenant none of it, and an agent token only its roles', async () => {
    const { member, agent } = await memberAndAgent(t);
    await completeOne(member, agent, 'cfo', 0.5, 10);
    await completeOne(member, agent, 'cto', 0.25, 10);
    const stranger = await t.caller(['chairman']);
    const cfoAgent = await t.caller(['agent'], { tenantId: member.tenantId, agentRoles: ['cfo'] });

    const theirs = await attribution(stranger, 'ROLE');
    const scoped = await attribution(cfoAgent, 'ROLE');

    expect(theirs).toMatchObject({ rows: [], tasks: 0, totalCostUsd: '0.000000' });
    expect(scoped.rows.map((row) => row.key)).toEqual(['cfo']);
    expect(scoped.totalCostUsd).toBe('0.500000');
  });
});
