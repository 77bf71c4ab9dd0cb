import type { Caller, TestApp } from '../support/app.js';

export const BUDGET_FIELDS = `
  id role period limitUsd limitTokens warningThreshold estimateUsd estimateTokens spentUsd reservedUsd
  remainingUsd overshootUsd spentTokens reservedTokens remainingTokens periodStart periodEnd warnedAt exhaustedAt`;

export const SetBudget = `
  mutation SetBudgetForTest($input: SetBudgetInput!) {
    setBudget(input: $input) { ${BUDGET_FIELDS} }
  }`;

export const BudgetQuery = `
  query BudgetForTest($role: String) {
    budget(role: $role) { ${BUDGET_FIELDS} }
  }`;

export const BudgetsQuery = `
  query BudgetsForTest {
    budgets { ${BUDGET_FIELDS} }
  }`;

export const ClaimNextTask = `
  mutation ClaimNextForTest($role: String!) {
    claimNextTask(role: $role) {
      outcome
      retryAt
      task { id role status }
      budget { role limitUsd spentUsd reservedUsd }
    }
  }`;

export const Complete = `
  mutation CompleteForTest($id: ID!, $input: CompleteTaskInput!) {
    completeTask(id: $id, input: $input) { id status costUsd }
  }`;

export const Fail = `
  mutation FailForTest($id: ID!, $error: String!) {
    failTask(id: $id, error: $error) { id status }
  }`;

export interface BudgetView {
  id: string;
  role: string | null;
  period: string;
  limitUsd: string;
  limitTokens: number | null;
  warningThreshold: number;
  estimateUsd: string;
  estimateTokens: number;
  spentUsd: string;
  reservedUsd: string;
  remainingUsd: string;
  overshootUsd: string;
  spentTokens: number;
  reservedTokens: number;
  remainingTokens: number | null;
  periodStart: string;
  periodEnd: string;
  warnedAt: string | null;
  exhaustedAt: string | null;
}

export interface ClaimView {
  outcome: string;
  retryAt: string | null;
  task: { id: string; role: string; status: string } | null;
  budget: { role: string | null; limitUsd: string; spentUsd: string; reservedUsd: string } | null;
}

export async function setBudget(t: TestApp, caller: Caller, input: Record<string, unknown>) {
  const result = await t.graphql<{ setBudget: BudgetView }, unknown>(SetBudget, { input }, caller);
  if (result.errors) throw new Error(`setBudget failed: ${JSON.stringify(result.errors)}`);
  return (result.data as { setBudget: BudgetView }).setBudget;
}

export async function readBudget(t: TestApp, caller: Caller, role?: string) {
  const result = await t.graphql<{ budget: BudgetView | null }, unknown>(BudgetQuery, { role }, caller);
  if (result.errors) throw new Error(`budget failed: ${JSON.stringify(result.errors)}`);
  return (result.data as { budget: BudgetView | null }).budget;
}

export async function claimNext(t: TestApp, agent: Caller, role: string): Promise<ClaimView> {
  const result = await t.graphql<{ claimNextTask: ClaimView }, unknown>(ClaimNextTask, { role }, agent);
  if (result.errors) throw new Error(`claimNextTask failed: ${JSON.stringify(result.errors)}`);
  return (result.data as { claimNextTask: ClaimView }).claimNextTask;
}

export async function complete(t: TestApp, agent: Caller, id: string, costUsd: number, tokensUsed = 100) {
  const result = await t.graphql(Complete, { id, input: { tokensUsed, costUsd } }, agent);
  if (result.errors) throw new Error(`completeTask failed: ${JSON.stringify(result.errors)}`);
}

/** Queues tasks of a role straight in the database. */
export async function queueTasks(t: TestApp, tenantId: string, role: string, count: number) {
  await t.app.services.tenants.ensure(tenantId);
  await t.db.prisma.task.createMany({
    data: Array.from({ length: count }, (_, index) => ({
      tenantId,
      role,
      message: `task ${index}`,
      createdBy: 'test',
      // Distinct times keep the claim order stable.
      createdAt: new Date(Date.now() - (count - index) * 10),
    })),
  });
}

/** Rows a budget operation may leave in a tenant. */
export async function budgetRows(t: TestApp, tenantId: string) {
  const prisma = t.db.prisma;
  const [budgets, reservations, audit, outbox, running] = await Promise.all([
    prisma.budget.findMany({ where: { tenantId }, orderBy: { role: 'asc' } }),
    prisma.budgetReservation.count({ where: { task: { tenantId } } }),
    prisma.auditEntry.count({ where: { tenantId } }),
    prisma.outboxEvent.count({ where: { tenantId } }),
    prisma.task.count({ where: { tenantId, status: 'running' } }),
  ]);
  return { budgets, reservations, audit, outbox, running };
}
