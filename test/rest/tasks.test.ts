import { describe, expect, it } from 'vitest';
import { CLAIM, company, ok } from '../schema/agents-delegation-support.js';
import { queueTask } from '../schema/agents-support.js';
import type { TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';

let t: TestApp;
withTestApp((app) => {
  t = app;
});

/** A tenant whose CEO agent holds a running task. */
async function runningCeoTask() {
  const people = await company(t);
  const rootId = await queueTask(t, people.chairman, 'ceo', 'Brief the board.');
  await ok(t, CLAIM, { role: 'ceo' }, people.agent);
  return { ...people, rootId };
}

/** What a refused call must not have changed: the tenant's tasks, events and audit entries. */
const footprint = async (tenantId: string) => ({
  tasks: await t.db.prisma.task.findMany({ where: { tenantId }, orderBy: { id: 'asc' } }),
  outbox: await t.db.prisma.outboxEvent.count({ where: { tenantId } }),
  audit: await t.db.prisma.auditEntry.count({ where: { tenantId } }),
});

const delegations = [
  { role: 'cfo', message: 'Revenue this quarter?', cost_cap_usd: 2 },
  { role: 'clo', message: 'Open litigation?' },
];

describe('/api/v1/tasks/{id}/delegations and /cancel', () => {
  it('delegates a running task to two roles (201) and cancels the tree (200)', async () => {
    const { chairman, agent, rootId } = await runningCeoTask();

    const delegated = await t.rest('POST', `/api/v1/tasks/${rootId}/delegations`, {
      caller: agent,
      body: { delegations, tokens_used: 100, cost_usd: 0.001 },
    });
    expect(delegated.status).toBe(201);
    expect(delegated.body.data.parent).toEqual({
      id: rootId,
      role: 'ceo',
      status: 'waiting',
      parent_task_id: null,
      root_task_id: rootId,
      depth: 0,
      cost_cap_usd: null,
    });
    expect(
      delegated.body.data.children.map((child: any) => [
        child.role,
        child.status,
        child.depth,
        child.cost_cap_usd,
      ]),
    ).toEqual([
      ['cfo', 'pending', 1, 2],
      ['clo', 'pending', 1, null],
    ]);

    const cancelled = await t.rest('POST', `/api/v1/tasks/${rootId}/cancel`, {
      caller: chairman,
      body: { reason: 'The board changed its mind.' },
    });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.data).toMatchObject({ id: rootId, status: 'cancelled' });
    const statuses = await t.db.prisma.task.findMany({
      where: { rootTaskId: rootId },
      select: { status: true },
    });
    expect(statuses.map((task) => task.status)).toEqual(['cancelled', 'cancelled']);

    const again = await t.rest('POST', `/api/v1/tasks/${rootId}/cancel`, { caller: chairman, body: {} });
    expect(again.status).toBe(409);
    expect(again.body.reason ?? again.body.errors?.[0]?.extensions?.reason ?? again.body).toBeDefined();
  });

  it('refuses a delegation against the rules with 422 and its reason, writing nothing but the cycle breaker’s pause', async () => {
    const { tenantId, agent, rootId } = await runningCeoTask();
    const before = await footprint(tenantId);
    const refusals: [Record<string, unknown>, string][] = [
      [{ delegations: [{ role: 'nobody', message: 'x' }], tokens_used: 0, cost_usd: 0 }, 'unknown_role'],
      [{ delegations: [{ role: 'ceo', message: 'x' }], tokens_used: 0, cost_usd: 0 }, 'delegation_cycle'],
    ];
    for (const [body, reason] of refusals) {
      const answer = await t.rest('POST', `/api/v1/tasks/${rootId}/delegations`, { caller: agent, body });
      expect(answer.status).toBe(422);
      expect(JSON.stringify(answer.body)).toContain(reason);
    }
    const invalid = [
      { delegations: [{ role: 'cfo', message: 'x', cost_cap_usd: -1 }], tokens_used: 0, cost_usd: 0 },
      { delegations: [], tokens_used: 0, cost_usd: 0 },
      { delegations: [{ role: 'cfo', message: '' }], tokens_used: 0, cost_usd: 0 },
      { delegations: [{ role: 'cfo', message: 'x' }], tokens_used: -1, cost_usd: 0 },
      { delegations: [{ role: 'cfo', message: 'x' }], resume_on: 'never', tokens_used: 0, cost_usd: 0 },
    ];
    for (const body of invalid) {
      const answer = await t.rest('POST', `/api/v1/tasks/${rootId}/delegations`, { caller: agent, body });
      expect(answer.status, JSON.stringify(body)).toBe(422);
    }
    // The refusals write nothing; the cycle trips the CEO's breaker (docs/breakers.md), whose pause is one
    // event and one audit row.
    expect(await footprint(tenantId)).toEqual({
      ...before,
      outbox: before.outbox + 1,
      audit: before.audit + 1,
    });
  });

  it('answers 404 to another tenant and 403 to a member cancelling a task someone else queued', async () => {
    const { tenantId, member, agent, rootId } = await runningCeoTask();
    const stranger = await company(t);
    const before = await footprint(tenantId);

    const foreignCancel = await t.rest('POST', `/api/v1/tasks/${rootId}/cancel`, {
      caller: stranger.chairman,
      body: {},
    });
    const foreignDelegation = await t.rest('POST', `/api/v1/tasks/${rootId}/delegations`, {
      caller: stranger.agent,
      body: { delegations, tokens_used: 0, cost_usd: 0 },
    });
    const memberCancel = await t.rest('POST', `/api/v1/tasks/${rootId}/cancel`, { caller: member, body: {} });
    const memberDelegation = await t.rest('POST', `/api/v1/tasks/${rootId}/delegations`, {
      caller: member,
      body: { delegations, tokens_used: 0, cost_usd: 0 },
    });

    expect(foreignCancel.status).toBe(404);
    expect(foreignDelegation.status).toBe(404);
    expect(memberCancel.status).toBe(403);
    expect(memberDelegation.status).toBe(403);
    expect(await footprint(tenantId)).toEqual(before);
    expect((await t.db.prisma.task.findUniqueOrThrow({ where: { id: rootId } })).claimedBy).toBe(agent.sub);
  });
});
