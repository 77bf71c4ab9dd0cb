import { describe, expect, it } from 'vitest';
import { sweepExpiredLeases } from '../../src/domain/agents/lease-sweeper.js';
import { DEFAULT_LEASE_MS } from '../../src/domain/agents/queue.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';
import { ClaimTask, CompleteTask, memberAndAgent, queueTask } from './agents-support.js';

const RenewLease = graphql(`
  mutation AgentsRenewLease($id: ID!) {
    renewTaskLease(id: $id) {
      id
      status
      claimedBy
      attempts
      leaseExpiresAt
    }
  }
`);

let t: TestApp;

withTestApp((app) => (t = app));

const tenant = () => memberAndAgent(t);

/** A running task of the tenant's CFO claimed by `agent`, with its lease moved `agoMs` into the past. */
async function runningTask(agoMs?: number) {
  const { member, agent } = await tenant();
  const id = await queueTask(t, member, 'cfo');
  await t.graphql(ClaimTask, { role: 'cfo' }, agent);
  if (agoMs !== undefined)
    await t.db.prisma.task.update({ where: { id }, data: { leaseExpiresAt: new Date(Date.now() - agoMs) } });
  return { member, agent, id };
}

const row = (id: string) => t.db.prisma.task.findUniqueOrThrow({ where: { id } });

describe('renewTaskLease', () => {
  it('extends the holder’s lease to a full lease from now, and the task stays its', async () => {
    const { agent, id } = await runningTask();
    // A lease with one minute left.
    const shortened = new Date(Date.now() + 60_000);
    await t.db.prisma.task.update({ where: { id }, data: { leaseExpiresAt: shortened } });
    const events = (type: 'TASK_UPDATED' | 'TASK_STEPS_RECORDED') =>
      t.db.prisma.outboxEvent.count({ where: { tenantId: agent.tenantId, type } });
    const [updated, recorded] = [await events('TASK_UPDATED'), await events('TASK_STEPS_RECORDED')];

    const result = await t.graphql(RenewLease, { id }, agent);

    expect(result.errors).toBeUndefined();
    expect(result.data?.renewTaskLease).toMatchObject({
      id,
      status: 'running',
      claimedBy: agent.sub,
      attempts: 1,
    });
    const renewed = Date.parse(result.data?.renewTaskLease.leaseExpiresAt ?? '');
    expect(renewed).toBeGreaterThan(shortened.getTime());
    const stored = await row(id);
    expect(stored.leaseExpiresAt?.getTime()).toBe(renewed);
    expect(renewed - stored.updatedAt.getTime()).toBe(DEFAULT_LEASE_MS);
    // A renewal changes nothing a task event carries: it announces only its recorded step.
    expect(await events('TASK_UPDATED')).toBe(updated);
    expect(await events('TASK_STEPS_RECORDED')).toBe(recorded + 1);
    // The task can still be completed by its holder.
    const done = await t.graphql(CompleteTask, { id, input: { tokensUsed: 1, costUsd: 0.01 } }, agent);
    expect(done.data?.completeTask.status).toBe('completed');
  });

  it('keeps a renewed task from the sweeper', async () => {
    const { agent, id } = await runningTask(1000);
    // Lapsed but not yet swept: refused, and the sweeper takes it back.
    const refused = await t.graphql(RenewLease, { id }, agent);
    expect(refused.errors?.[0]?.extensions).toMatchObject({
      code: 'CONFLICT',
      reason: 'lease_expired',
      status: 'running',
    });
    await sweepExpiredLeases(t.db.prisma);
    expect((await row(id)).status).toBe('pending');

    // Claimed again and renewed in time: the sweeper leaves it alone.
    await t.graphql(ClaimTask, { role: 'cfo' }, agent);
    expect((await t.graphql(RenewLease, { id }, agent)).errors).toBeUndefined();
    await sweepExpiredLeases(t.db.prisma);
    expect((await row(id)).status).toBe('running');
  });

  it('refuses a lease the sweeper already returned to the queue: CONFLICT task_not_running', async () => {
    const { agent, id } = await runningTask(1000);
    await sweepExpiredLeases(t.db.prisma);
    const before = await row(id);

    const result = await t.graphql(RenewLease, { id }, agent);

    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'CONFLICT',
      reason: 'task_not_running',
      status: 'pending',
    });
    expect(await row(id)).toEqual(before);
  });

  it('refuses a finished task: CONFLICT', async () => {
    const { agent, id } = await runningTask();
    await t.graphql(CompleteTask, { id, input: { tokensUsed: 1, costUsd: 0 } }, agent);

    const result = await t.graphql(RenewLease, { id }, agent);

    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', status: 'completed' });
  });

  it('refuses another agent of the tenant: FORBIDDEN, and the lease is unchanged', async () => {
    const { member, id } = await runningTask();
    const other = await t.caller(['agent'], { tenantId: member.tenantId, sub: 'another-runtime' });
    const before = await row(id);

    const result = await t.graphql(RenewLease, { id }, other);

    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await row(id)).toEqual(before);
  });

  it('answers NOT_FOUND for another tenant’s task, and FORBIDDEN to callers without the agent role', async () => {
    const { member, id } = await runningTask();
    const stranger = await t.caller(['agent']);
    await t.app.services.tenants.ensure(stranger.tenantId);
    const before = await row(id);

    expect((await t.graphql(RenewLease, { id }, stranger)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    for (const roles of [['member'], ['operator'], ['chairman']] as const) {
      const caller = await t.caller([...roles], { tenantId: member.tenantId });
      expect((await t.graphql(RenewLease, { id }, caller)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    }
    expect((await t.graphql(RenewLease, { id }, null)).errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(await row(id)).toEqual(before);
  });

  it('answers BAD_USER_INPUT for an id that is not a uuid', async () => {
    const { agent } = await tenant();

    const result = await t.graphql(RenewLease, { id: 'not-a-uuid' }, agent);

    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });
});
