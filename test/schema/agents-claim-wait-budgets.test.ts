import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimWaitersOf } from '../../src/domain/agents/claim-wait.js';
import { graphql } from '../../src/generated/graphql/index.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';
import { eventually } from '../support/eventually.js';
import { setBudget } from './agents-budgets-support.js';
import { ClaimTask, queueTask } from './agents-support.js';

const ClaimWaiting = graphql(`
  mutation BudgetWaitClaim($role: String!, $waitSeconds: Int) {
    claimNextTask(role: $role, waitSeconds: $waitSeconds) {
      outcome
      retryAt
      task {
        id
      }
    }
  }
`);

const Release = graphql(`
  mutation BudgetWaitRelease($id: ID!) {
    releaseTask(id: $id) {
      status
    }
  }
`);

// The claims wait on instance A; the change that gives room is made on instance B. On PostgreSQL + Redis
// they are two instances sharing the database and the bus; on PGlite, one instance plays both.
let database: TestDatabase | undefined;
let a: TestApp;
let b: TestApp;
beforeAll(async () => {
  if (databaseKind === 'postgresql') {
    database = await createTestDatabase();
    a = await createTestApp({ database });
    b = await createTestApp({ database });
  } else {
    a = await createTestApp();
    b = a;
  }
});
afterAll(async () => {
  await a?.close();
  if (b !== a) await b?.close();
  await database?.drop();
});

async function company() {
  const chairman = await a.caller(['chairman']);
  const member = await a.caller(['member'], { tenantId: chairman.tenantId });
  const agent = await a.caller(['agent'], { tenantId: chairman.tenantId });
  await a.app.services.tenants.ensure(chairman.tenantId);
  return { chairman, member, agent };
}

/** Waiting claims on A that have their answer and wait with it. */
const waiting = () => claimWaitersOf(a.app.services.bus).waiting;

/**
 * A claim of `role` waiting on A (up to 20 s), once it waits with its first answer: a budget's refusal,
 * which the test checks when it ends.
 */
async function refusedClaim(agent: Caller, role: string) {
  const before = waiting();
  const answer = a.graphql(ClaimWaiting, { role, waitSeconds: 20 }, agent);
  await eventually(() => expect(waiting()).toBe(before + 1));
  // In an object: an async function returning the promise itself would wait for it.
  return { answer };
}

describe('a change that gives a budget room wakes the claims it turned away, on every instance', () => {
  it('the chairman raising the tenant’s spent limit', async () => {
    const { chairman, member, agent } = await company();
    await setBudget(b, chairman, { period: 'month', limitUsd: '0.5', estimateUsd: '1' });
    const id = await queueTask(a, member, 'cfo');
    const { answer: claim } = await refusedClaim(agent, 'cfo');
    await setBudget(b, chairman, { period: 'month', limitUsd: '10', estimateUsd: '1' });

    expect((await claim).data?.claimNextTask).toEqual({ outcome: 'claimed', retryAt: null, task: { id } });
  });

  it('the chairman raising a role’s limit', async () => {
    const { chairman, member, agent } = await company();
    await setBudget(b, chairman, { role: 'cfo', period: 'day', limitUsd: '0.5', estimateUsd: '1' });
    const id = await queueTask(a, member, 'cfo');
    const { answer: claim } = await refusedClaim(agent, 'cfo');

    await setBudget(b, chairman, { role: 'cfo', period: 'day', limitUsd: '5', estimateUsd: '1' });

    expect((await claim).data?.claimNextTask).toEqual({ outcome: 'claimed', retryAt: null, task: { id } });
  });

  it('a new period: the month’s spending no longer counts once the budget runs by the day', async () => {
    const { chairman, member, agent } = await company();
    const budget = await setBudget(b, chairman, { period: 'month', limitUsd: '2', estimateUsd: '1' });
    // Spent earlier this month: no task of today's counts.
    await a.db.prisma.budget.update({ where: { id: budget.id }, data: { spentUsd: '2' } });
    const id = await queueTask(a, member, 'cfo');
    const { answer: claim } = await refusedClaim(agent, 'cfo');

    await setBudget(b, chairman, { period: 'day', limitUsd: '2', estimateUsd: '1' });

    expect((await claim).data?.claimNextTask).toEqual({ outcome: 'claimed', retryAt: null, task: { id } });
  });

  it('a reservation released by another role’s task, while the tenant’s budget turned the claim away', async () => {
    const { chairman, member, agent } = await company();
    await setBudget(b, chairman, { period: 'month', limitUsd: '1', estimateUsd: '1' });
    const ceoTask = await queueTask(b, member, 'ceo');
    expect((await b.graphql(ClaimTask, { role: 'ceo' }, agent)).data?.claimTask?.id).toBe(ceoTask);
    const id = await queueTask(a, member, 'cfo');
    const { answer: claim } = await refusedClaim(agent, 'cfo');

    expect((await b.graphql(Release, { id: ceoTask }, agent)).data?.releaseTask.status).toBe('pending');

    expect((await claim).data?.claimNextTask).toEqual({ outcome: 'claimed', retryAt: null, task: { id } });
  });
});
