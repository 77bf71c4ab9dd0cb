import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetAlertPayload, readBudgets } from '../../src/domain/agents/budgets.js';
import { sweepExpiredLeases } from '../../src/domain/agents/lease-sweeper.js';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  budgetRows,
  claimNext,
  complete,
  Fail,
  queueTasks,
  readBudget,
  SetBudget,
  setBudget,
} from './agents-budgets-support.js';
import { ClaimTask, watchBus } from './agents-support.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function tenant() {
  const chairman = await t.caller(['chairman']);
  const agent = await t.caller(['agent'], { tenantId: chairman.tenantId, sub: `agent-${chairman.sub}` });
  await t.app.services.tenants.ensure(chairman.tenantId);
  return { chairman, agent, tenantId: chairman.tenantId };
}

/** Orders alerts by type and budget, so two lists compare whatever order they were written in. */
const byKey = (a: AlertLike, b: AlertLike) => alertKey(a).localeCompare(alertKey(b));
type AlertLike = { type?: unknown; action?: unknown; payload?: unknown; targetId?: unknown };
const alertKey = (row: AlertLike) =>
  `${String(row.type ?? row.action)}:${String(row.targetId ?? (row.payload as { budget_id?: string }).budget_id)}`;

const roleBudget = (
  role: string,
  limitUsd: string,
  estimateUsd: string,
  extra: Record<string, unknown> = {},
) => ({
  role,
  period: 'month',
  limitUsd,
  estimateUsd,
  ...extra,
});

describe('setBudget', () => {
  it('creates a role budget for the current UTC month with nothing spent or reserved', async () => {
    const { chairman } = await tenant();

    const budget = await setBudget(t, chairman, roleBudget('CFO', '25.50', '0.5'));

    const now = new Date();
    expect(budget).toMatchObject({
      role: 'cfo',
      period: 'month',
      limitUsd: '25.5',
      estimateUsd: '0.5',
      warningThreshold: 0.8,
      spentUsd: '0',
      reservedUsd: '0',
      remainingUsd: '25.5',
      limitTokens: null,
      remainingTokens: null,
      periodStart: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString(),
      periodEnd: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      warnedAt: null,
      exhaustedAt: null,
    });
    const audit = await t.db.prisma.auditEntry.findMany({ where: { tenantId: chairman.tenantId } });
    expect(audit.map((entry) => [entry.action, entry.outcome])).toEqual([['budget.set', 'created']]);
  });

  it('takes a threshold of up to 3 decimals as given', async () => {
    const { chairman } = await tenant();

    const budget = await setBudget(t, chairman, roleBudget('cfo', '10', '1', { warningThreshold: 0.57 }));

    expect(budget.warningThreshold).toBe(0.57);
  });

  it('starts a new budget from what the period already spent', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await queueTasks(t, tenantId, 'cmo', 1);
    const claim = await claimNext(t, agent, 'cmo');
    await complete(t, agent, claim.task?.id ?? '', 1.25, 300);

    const budget = await setBudget(t, chairman, { period: 'day', limitUsd: '10', estimateUsd: '1' });

    expect(budget).toMatchObject({ role: null, period: 'day', spentUsd: '1.25', spentTokens: 300 });
  });

  it.each([
    ['a negative limit', { limitUsd: '-1' }],
    ['NaN', { limitUsd: 'NaN' }],
    ['an exponent', { limitUsd: '1e5' }],
    ['words', { limitUsd: 'ten dollars' }],
    ['an absurd limit', { limitUsd: '99999999999' }],
    ['more than 6 decimals', { limitUsd: '1.0000001' }],
    ['a zero estimate', { estimateUsd: '0' }],
    ['a threshold of 0', { warningThreshold: 0 }],
    ['a threshold above 1', { warningThreshold: 1.5 }],
    ['a threshold with 4 decimals', { warningThreshold: 0.5705 }],
    ['a token limit without a token estimate', { limitTokens: 1000 }],
    ['a bad role slug', { role: '../ceo' }],
  ])('refuses %s with BAD_USER_INPUT and writes nothing', async (_name, change) => {
    const { chairman, tenantId } = await tenant();
    const before = await budgetRows(t, tenantId);

    const result = await t.graphql(
      SetBudget,
      { input: { ...roleBudget('cfo', '10', '1'), ...change } },
      chairman,
    );

    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await budgetRows(t, tenantId)).toEqual(before);
  });

  it('answers NOT_FOUND for a role of another tenant and writes nothing', async () => {
    const { chairman: other } = await tenant();
    await t.graphql(
      'mutation R($input: RegisterAgentRoleInput!) { registerAgentRole(input: $input) { role } }',
      { input: { role: 'growth' } },
      await t.caller(['operator'], { tenantId: other.tenantId }),
    );
    const { chairman, tenantId } = await tenant();

    const result = await t.graphql(SetBudget, { input: roleBudget('growth', '10', '1') }, chairman);

    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await budgetRows(t, tenantId)).toMatchObject({ budgets: [], audit: 0, outbox: 0 });
    expect(await t.db.prisma.budget.count({ where: { tenantId: other.tenantId } })).toBe(0);
  });

  it('lets only the chairman set a budget; operators, members and agents read it', async () => {
    const { chairman, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('cto', '10', '1'));
    const before = await budgetRows(t, tenantId);

    for (const role of ['operator', 'member', 'agent'] as const) {
      const caller = await t.caller([role], { tenantId });
      const result = await t.graphql(SetBudget, { input: roleBudget('cto', '999', '1') }, caller);
      expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
      expect((await readBudget(t, caller, 'cto'))?.limitUsd).toBe('10');
    }
    expect(await budgetRows(t, tenantId)).toEqual(before);
  });

  it('shows each role’s budget on the role', async () => {
    const { chairman } = await tenant();
    await setBudget(t, chairman, roleBudget('cfo', '10', '1'));

    const result = await t.graphql<
      { agents: { role: string; budget: { limitUsd: string } | null }[] },
      unknown
    >('{ agents { role budget { limitUsd } } }', undefined, chairman);

    const byRole = Object.fromEntries(result.data?.agents.map((agent) => [agent.role, agent.budget]) ?? []);
    expect(byRole.cfo).toEqual({ limitUsd: '10' });
    expect(byRole.ceo).toBeNull();
  });

  it('shows no budget of another tenant', async () => {
    const { chairman } = await tenant();
    await setBudget(t, chairman, { period: 'month', limitUsd: '10', estimateUsd: '1' });
    const { chairman: stranger } = await tenant();

    expect(await readBudget(t, stranger)).toBeNull();
    const result = await t.graphql<{ budgets: unknown[] }, unknown>(
      '{ budgets { id } }',
      undefined,
      stranger,
    );
    expect(result.data?.budgets).toEqual([]);
  });
});

describe('claims under a budget', () => {
  it('reserve the estimate on claim, then charge the actual cost and release it on completion', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('cfo', '10', '2'));
    await setBudget(t, chairman, { period: 'month', limitUsd: '100', estimateUsd: '3' });
    await queueTasks(t, tenantId, 'cfo', 1);

    const claim = await claimNext(t, agent, 'cfo');

    expect(claim).toMatchObject({
      outcome: 'claimed',
      retryAt: null,
      budget: null,
      task: { status: 'running' },
    });
    expect(await readBudget(t, chairman, 'cfo')).toMatchObject({ reservedUsd: '2', remainingUsd: '8' });
    expect(await readBudget(t, chairman)).toMatchObject({ reservedUsd: '3', remainingUsd: '97' });

    await complete(t, agent, claim.task?.id ?? '', 1.5);

    expect(await readBudget(t, chairman, 'cfo')).toMatchObject({ spentUsd: '1.5', reservedUsd: '0' });
    expect(await readBudget(t, chairman)).toMatchObject({
      spentUsd: '1.5',
      reservedUsd: '0',
      remainingUsd: '98.5',
    });
    expect((await budgetRows(t, tenantId)).reservations).toBe(0);
  });

  it('release the reservation when the task fails', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('cfo', '10', '2'));
    await queueTasks(t, tenantId, 'cfo', 1);
    const claim = await claimNext(t, agent, 'cfo');

    await t.graphql(Fail, { id: claim.task?.id, error: 'model refused' }, agent);

    expect(await readBudget(t, chairman, 'cfo')).toMatchObject({ spentUsd: '0', reservedUsd: '0' });
    expect((await budgetRows(t, tenantId)).reservations).toBe(0);
  });

  it('release the reservation when the lease lapses, and reserve again on the next claim', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('cfo', '10', '2'));
    await queueTasks(t, tenantId, 'cfo', 1);
    const claim = await claimNext(t, agent, 'cfo');
    await t.db.prisma.task.update({
      where: { id: claim.task?.id ?? '' },
      data: { leaseExpiresAt: new Date(Date.now() - 1000) },
    });

    await sweepExpiredLeases(t.db.prisma);

    expect(await readBudget(t, chairman, 'cfo')).toMatchObject({ reservedUsd: '0' });
    expect(await claimNext(t, agent, 'cfo')).toMatchObject({
      outcome: 'claimed',
      task: { id: claim.task?.id },
    });
    expect(await readBudget(t, chairman, 'cfo')).toMatchObject({ reservedUsd: '2' });
  });

  it('refuse a claim that would pass the role limit, change nothing, and say why', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('cfo', '5', '3'));
    await queueTasks(t, tenantId, 'cfo', 2);
    await claimNext(t, agent, 'cfo');
    const before = await budgetRows(t, tenantId);

    const refused = await claimNext(t, agent, 'cfo');

    expect(refused).toMatchObject({
      outcome: 'role_budget_exhausted',
      task: null,
      budget: { role: 'cfo', limitUsd: '5', spentUsd: '0', reservedUsd: '3' },
    });
    expect(refused.retryAt).toBe((await readBudget(t, chairman, 'cfo'))?.periodEnd);
    expect((await t.graphql(ClaimTask, { role: 'cfo' }, agent)).data?.claimTask).toBeNull();
    expect(await budgetRows(t, tenantId)).toEqual(before);
  });

  it('refuse a claim that would pass the tenant limit, for any role', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, { period: 'day', limitUsd: '1', estimateUsd: '0.6' });
    await setBudget(t, chairman, roleBudget('cto', '100', '0.1'));
    await queueTasks(t, tenantId, 'cfo', 1);
    await queueTasks(t, tenantId, 'cto', 1);
    await claimNext(t, agent, 'cfo');
    const before = await budgetRows(t, tenantId);

    expect(await claimNext(t, agent, 'cto')).toMatchObject({
      outcome: 'tenant_budget_exhausted',
      task: null,
      budget: { role: null, reservedUsd: '0.6' },
    });
    expect(await budgetRows(t, tenantId)).toEqual(before);
  });

  it('say the role is paused, or the queue is empty', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('coo', '0', '1'));

    expect((await claimNext(t, agent, 'cfo')).outcome).toBe('queue_empty');
    await t.db.prisma.agentRole.update({
      where: { tenantId_role: { tenantId, role: 'coo' } },
      data: { paused: true },
    });
    expect(await claimNext(t, agent, 'coo')).toMatchObject({
      outcome: 'role_paused',
      task: null,
      budget: null,
    });
  });

  it('take no new work once the limit is lowered below what was spent, until it is raised', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('cfo', '10', '1'));
    await queueTasks(t, tenantId, 'cfo', 2);
    const first = await claimNext(t, agent, 'cfo');
    await complete(t, agent, first.task?.id ?? '', 2);

    const lowered = await setBudget(t, chairman, roleBudget('cfo', '1.5', '1'));

    expect(lowered).toMatchObject({ spentUsd: '2', remainingUsd: '0' });
    expect(lowered.exhaustedAt).not.toBeNull();
    expect((await claimNext(t, agent, 'cfo')).outcome).toBe('role_budget_exhausted');
    const audit = await t.db.prisma.auditEntry.findMany({
      where: { tenantId, action: 'budget.set' },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit.map((entry) => entry.outcome)).toEqual(['created', 'lowered_below_spent']);
    expect(audit[1]?.details).toMatchObject({ limit_usd: '1.5', previous_limit_usd: '10', spent_usd: '2' });

    await setBudget(t, chairman, roleBudget('cfo', '3', '1'));
    expect((await claimNext(t, agent, 'cfo')).outcome).toBe('claimed');
  });

  it('report a task whose cost passed its estimate as overshoot, audited', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('cfo', '10', '1'));
    await queueTasks(t, tenantId, 'cfo', 1);
    const claim = await claimNext(t, agent, 'cfo');

    await complete(t, agent, claim.task?.id ?? '', 1.75);

    expect(await readBudget(t, chairman, 'cfo')).toMatchObject({ spentUsd: '1.75', overshootUsd: '0.75' });
    const audit = await t.db.prisma.auditEntry.findMany({ where: { tenantId, action: 'budget.overshoot' } });
    expect(audit.map((entry) => entry.details)).toEqual([
      expect.objectContaining({
        task_id: claim.task?.id,
        estimate_usd: '1',
        cost_usd: '1.75',
        overshoot_usd: '0.75',
      }),
    ]);
  });

  it('enforce a token limit beside the dollar limit', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('cfo', '100', '1', { limitTokens: 1000, estimateTokens: 600 }));
    await queueTasks(t, tenantId, 'cfo', 2);

    expect((await claimNext(t, agent, 'cfo')).outcome).toBe('claimed');
    expect(await claimNext(t, agent, 'cfo')).toMatchObject({
      outcome: 'role_budget_exhausted',
      budget: { role: 'cfo', reservedUsd: '1' },
    });
    expect(await readBudget(t, chairman, 'cfo')).toMatchObject({ reservedTokens: 600, remainingTokens: 400 });
  });
});

describe('BUDGET_CHANGED', () => {
  it('announces each setBudget with the budget as it stands, for the events stream and recentEvents', async () => {
    const { chairman, tenantId } = await tenant();
    const changes = await watchBus(t, 'BUDGET_CHANGED', tenantId);
    try {
      const created = await setBudget(t, chairman, roleBudget('cfo', '5', '0.5'));
      expect((await changes.next()).payload).toEqual({
        ...budgetAlertPayload((await readBudgets(t.db.prisma, tenantId, 'cfo'))[0] as never),
        event_id: expect.any(String),
        type: 'BUDGET_CHANGED',
        tenant_id: tenantId,
      });
      await setBudget(t, chairman, { period: 'day', limitUsd: '20', estimateUsd: '1' });
      expect((await changes.next()).payload).toMatchObject({ role: null, period: 'day', limit_usd: '20' });

      await t.app.services.relay.kick();
      const recent = await t.graphql<{ recentEvents: { event: Record<string, unknown> }[] }, unknown>(
        `{ recentEvents(types: [BUDGET_CHANGED]) {
            event { __typename ... on BudgetChangedEvent { budgetId role period limitUsd spentUsd } } } }`,
        undefined,
        chairman,
      );
      expect(recent.data?.recentEvents.map((row) => row.event)).toEqual([
        {
          __typename: 'BudgetChangedEvent',
          budgetId: expect.any(String),
          role: null,
          period: 'day',
          limitUsd: '20',
          spentUsd: '0',
        },
        {
          __typename: 'BudgetChangedEvent',
          budgetId: created.id,
          role: 'cfo',
          period: 'month',
          limitUsd: '5',
          spentUsd: '0',
        },
      ]);
    } finally {
      await changes.close();
    }
  });
});

describe('budget alerts', () => {
  it('publish the warning and the exhaustion once per period, each with an audit row', async () => {
    const { chairman, agent, tenantId } = await tenant();
    const warnings = await watchBus(t, 'BUDGET_WARNING', tenantId);
    const exhaustions = await watchBus(t, 'BUDGET_EXHAUSTED', tenantId);
    try {
      await setBudget(t, chairman, roleBudget('cfo', '1', '0.25', { warningThreshold: 0.5 }));
      await queueTasks(t, tenantId, 'cfo', 6);
      const costs: number[] = [];
      for (;;) {
        const claim = await claimNext(t, agent, 'cfo');
        if (!claim.task) break;
        await complete(t, agent, claim.task.id, 0.25);
        costs.push(0.25);
      }
      expect(costs).toHaveLength(4);

      const warning = await warnings.next();
      expect(warning.payload).toMatchObject({
        role: 'cfo',
        limit_usd: '1',
        spent_usd: '0.5',
        period: 'month',
      });
      const exhausted = await exhaustions.next();
      expect(exhausted.payload).toMatchObject({ role: 'cfo', spent_usd: '1' });

      // A limit raised and spent again within the period announces nothing new.
      await setBudget(t, chairman, roleBudget('cfo', '1.5', '0.25', { warningThreshold: 0.5 }));
      for (;;) {
        const claim = await claimNext(t, agent, 'cfo');
        if (!claim.task) break;
        await complete(t, agent, claim.task.id, 0.25);
      }
      const outbox = await t.db.prisma.outboxEvent.groupBy({
        by: ['type'],
        where: { tenantId, type: { in: ['BUDGET_WARNING', 'BUDGET_EXHAUSTED'] } },
        _count: true,
      });
      expect(Object.fromEntries(outbox.map((row) => [row.type, row._count]))).toEqual({
        BUDGET_WARNING: 1,
        BUDGET_EXHAUSTED: 1,
      });
      const audit = await t.db.prisma.auditEntry.groupBy({
        by: ['action'],
        where: { tenantId, action: { in: ['budget.warning', 'budget.exhausted'] } },
        _count: true,
      });
      expect(Object.fromEntries(audit.map((row) => [row.action, row._count]))).toEqual({
        'budget.warning': 1,
        'budget.exhausted': 1,
      });

      const recent = await t.graphql<{ recentEvents: { event: Record<string, unknown> }[] }, unknown>(
        `{ recentEvents(types: [BUDGET_WARNING, BUDGET_EXHAUSTED]) {
            event { ... on BudgetAlertEvent { alert role limitUsd spentUsd periodStart periodEnd } } } }`,
        undefined,
        chairman,
      );
      expect(recent.data?.recentEvents.map((row) => row.event.alert).sort()).toEqual([
        'BUDGET_EXHAUSTED',
        'BUDGET_WARNING',
      ]);
    } finally {
      await warnings.close();
      await exhaustions.close();
    }
  });

  it('carry the payload budgetAlertPayload gives the stored budget, in the outbox and the audit row', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(
      t,
      chairman,
      roleBudget('cfo', '2.5', '0.4', { warningThreshold: 0.6, limitTokens: 1000, estimateTokens: 20 }),
    );
    await setBudget(t, chairman, {
      period: 'day',
      limitUsd: '100',
      estimateUsd: '0.4',
      warningThreshold: 0.01,
    });
    await queueTasks(t, tenantId, 'cfo', 1);
    const claim = await claimNext(t, agent, 'cfo');

    // One completion passes the role's warning and exhausts it (tokens), and passes the tenant's warning.
    await complete(t, agent, claim.task?.id ?? '', 1.6, 990);

    const events = await t.db.prisma.outboxEvent.findMany({
      where: { tenantId, type: { in: ['BUDGET_WARNING', 'BUDGET_EXHAUSTED'] } },
      orderBy: { seq: 'asc' },
    });
    const budgets = await readBudgets(t.db.prisma, tenantId);
    const expected = budgets.flatMap((budget) =>
      (
        [
          ['BUDGET_WARNING', budget.warnedAt],
          ['BUDGET_EXHAUSTED', budget.exhaustedAt],
        ] as const
      )
        .filter(([, stamp]) => stamp !== null)
        .map(([type]) => ({ type, payload: budgetAlertPayload(budget) })),
    );
    expect(expected.map((event) => `${event.payload.role}:${event.type}`).sort()).toEqual([
      'cfo:BUDGET_EXHAUSTED',
      'cfo:BUDGET_WARNING',
      'null:BUDGET_WARNING',
    ]);
    expect(events.map((event) => ({ type: event.type, payload: event.payload })).sort(byKey)).toEqual(
      expected
        .map(({ type, payload }) => ({
          type,
          payload: { ...payload, event_id: expect.any(String), type, tenant_id: tenantId },
        }))
        .sort(byKey),
    );
    const audit = await t.db.prisma.auditEntry.findMany({
      where: { tenantId, action: { in: ['budget.warning', 'budget.exhausted'] } },
    });
    expect(audit.map((entry) => ({ ...entry, id: undefined, createdAt: undefined })).sort(byKey)).toEqual(
      events
        .map((event) => {
          const { type, tenant_id, ...payload } = event.payload as Record<string, unknown>;
          return {
            id: undefined,
            createdAt: undefined,
            tenantId,
            actor: agent.sub,
            action: type === 'BUDGET_WARNING' ? 'budget.warning' : 'budget.exhausted',
            targetType: 'budget',
            targetId: payload.budget_id,
            outcome: type === 'BUDGET_WARNING' ? 'threshold_passed' : 'exhausted',
            details: { subject: agent.sub, ...payload },
            requestId: expect.any(String),
          };
        })
        .sort(byKey),
    );
  });

  it('start over when the period rolls over: nothing spent, work taken, alerts again', async () => {
    const { chairman, agent, tenantId } = await tenant();
    await setBudget(t, chairman, roleBudget('cfo', '1', '0.5', { warningThreshold: 0.5 }));
    await queueTasks(t, tenantId, 'cfo', 4);
    for (let index = 0; index < 2; index += 1) {
      const claim = await claimNext(t, agent, 'cfo');
      await complete(t, agent, claim.task?.id ?? '', 0.5);
    }
    expect((await claimNext(t, agent, 'cfo')).outcome).toBe('role_budget_exhausted');

    // The stored counters become last month's, as if the month had ended.
    await t.db.prisma.$executeRawUnsafe(
      `UPDATE budgets SET period_start = period_start - interval '1 month' WHERE tenant_id = '${tenantId}'`,
    );

    const budget = await readBudget(t, chairman, 'cfo');
    expect(budget).toMatchObject({ spentUsd: '0', reservedUsd: '0', warnedAt: null, exhaustedAt: null });
    const claim = await claimNext(t, agent, 'cfo');
    expect(claim.outcome).toBe('claimed');
    await complete(t, agent, claim.task?.id ?? '', 0.5);
    expect(await readBudget(t, chairman, 'cfo')).toMatchObject({
      spentUsd: '0.5',
      periodStart: budget?.periodStart,
    });
    expect(await t.db.prisma.outboxEvent.count({ where: { tenantId, type: 'BUDGET_WARNING' } })).toBe(2);
  });
});
