import { describe, expect, it } from 'vitest';
import type { Role } from '../../src/auth/viewer.js';
import { expireTaskApprovals } from '../../src/domain/agents/task-approvals.js';
import { ClaimTask, queueTask } from '../schema/agents-support.js';
import type { TestApp } from '../support/app.js';
import { withTwoTestApps } from '../support/fixtures.js';

let t: TestApp;
/** A second instance on the same database: a request asked on one is decided on the other. */
let other: TestApp;

withTwoTestApps(({ a, b }) => {
  t = a;
  other = b;
});

const REQUEST = `mutation ($taskId: ID!) {
  requestTaskApproval(taskId: $taskId, input: { summary: "Send this offer", payload: { amount: 1200 } }) { id }
}`;

/** A tenant whose CFO agent (by default a token with the agent role only) asked for a decision on its running task. */
async function waitingRequest(agentRoles: Role[] = ['agent']) {
  const member = await t.caller(['member']);
  const agent = await t.caller(agentRoles, { tenantId: member.tenantId, sub: `agent-${member.sub}` });
  const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
  await t.app.services.tenants.ensure(member.tenantId);
  const taskId = await queueTask(t, member, 'cfo');
  await t.graphql(ClaimTask, { role: 'cfo' }, agent);
  const asked = await t.graphql<{ requestTaskApproval: { id: string } }, { taskId: string }>(
    REQUEST,
    { taskId },
    agent,
  );
  return { member, agent, chairman, taskId, id: asked.data?.requestTaskApproval.id ?? '' };
}

describe('/api/v1/task-approvals', () => {
  it('lists the inbox to the chairman and decides through it', async () => {
    const { chairman, agent, taskId, id } = await waitingRequest();

    const inbox = await t.rest('GET', '/api/v1/task-approvals?status=pending', { caller: chairman });
    expect(inbox.status).toBe(200);
    expect(inbox.body).toEqual({
      data: [
        expect.objectContaining({
          id,
          task_id: taskId,
          role: 'cfo',
          summary: 'Send this offer',
          payload: { amount: 1200 },
          status: 'pending',
          requested_by: agent.sub,
        }),
      ],
      next_cursor: null,
    });

    const approved = await t.rest('POST', `/api/v1/task-approvals/${id}/approve`, {
      caller: chairman,
      body: { note: 'Go ahead' },
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      id,
      status: 'approved',
      note: 'Go ahead',
      decided_by: chairman.sub,
    });
    const read = await t.rest('GET', `/api/v1/task-approvals/${id}`, { caller: agent });
    expect(read.body).toMatchObject({ status: 'approved' });
    expect((await t.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } })).status).toBe('pending');
  });

  it('refuses a rejection without a reason (422), a member (403), another tenant (404): nothing changes', async () => {
    const { member, id } = await waitingRequest();
    const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
    const stranger = await t.caller(['chairman']);
    await t.app.services.tenants.ensure(stranger.tenantId);

    const unexplained = await t.rest('POST', `/api/v1/task-approvals/${id}/reject`, {
      caller: chairman,
      body: {},
    });
    const byMember = await t.rest('POST', `/api/v1/task-approvals/${id}/approve`, {
      caller: member,
      body: {},
    });
    const listByMember = await t.rest('GET', '/api/v1/task-approvals', { caller: member });
    const byStranger = await t.rest('POST', `/api/v1/task-approvals/${id}/approve`, {
      caller: stranger,
      body: {},
    });

    expect(unexplained.status).toBe(422);
    expect(byMember.status).toBe(403);
    expect(listByMember.status).toBe(403);
    expect(byStranger.status).toBe(404);
    expect((await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id } })).status).toBe('pending');
  });

  it('answers 409 with its status to a decision on an expired request, changing nothing', async () => {
    const { chairman, taskId, id } = await waitingRequest();
    await t.db.prisma.taskApproval.update({
      where: { id },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    await expireTaskApprovals(t.db.prisma);
    const before = {
      approval: await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id } }),
      task: await t.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } }),
      outbox: await t.db.prisma.outboxEvent.count({ where: { tenantId: chairman.tenantId } }),
      audit: await t.db.prisma.auditEntry.count({ where: { tenantId: chairman.tenantId } }),
    };

    const approved = await t.rest('POST', `/api/v1/task-approvals/${id}/approve`, {
      caller: chairman,
      body: {},
    });
    expect(approved.status).toBe(409);
    expect(approved.body).toEqual({
      detail: `Task approval ${id} expired at ${before.approval.expiresAt.toISOString()}; its status is expired`,
    });
    const listed = await t.rest('GET', '/api/v1/task-approvals?status=expired', { caller: chairman });
    expect(listed.body.data).toEqual([expect.objectContaining({ id, status: 'expired', decided_by: null })]);
    expect(before).toEqual({
      approval: await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id } }),
      task: await t.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } }),
      outbox: await t.db.prisma.outboxEvent.count({ where: { tenantId: chairman.tenantId } }),
      audit: await t.db.prisma.auditEntry.count({ where: { tenantId: chairman.tenantId } }),
    });
  });

  it('is never decided by whoever asked, whatever roles the token carries: 403 on every face, nothing changes', async () => {
    const { agent, chairman, taskId, id } = await waitingRequest(['agent', 'operator']);
    const snapshot = async () => ({
      approval: await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id } }),
      task: await t.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } }),
      outbox: await t.db.prisma.outboxEvent.count({ where: { tenantId: agent.tenantId } }),
      audit: await t.db.prisma.auditEntry.count({ where: { tenantId: agent.tenantId } }),
    });
    const before = await snapshot();
    expect(before.task.status).toBe('awaiting_approval');

    for (const verb of ['approve', 'reject', 'request-changes']) {
      const answer = await other.rest('POST', `/api/v1/task-approvals/${id}/${verb}`, {
        caller: agent,
        body: { note: 'mine' },
      });
      expect(answer.status, verb).toBe(403);
      expect(answer.body).toEqual({
        detail: `Task approval ${id} was requested by you (${agent.sub}): someone else decides it`,
      });
    }
    const overGraphQL = await other.graphql(
      'mutation ($id: ID!) { approveTaskApproval(id: $id) { id } }',
      { id },
      agent,
    );
    expect(overGraphQL.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'own_request' });
    expect(await snapshot()).toEqual(before);

    // Anyone else who may decide does, on either instance.
    const approved = await other.rest('POST', `/api/v1/task-approvals/${id}/approve`, {
      caller: chairman,
      body: {},
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decided_by: chairman.sub });
  });
});
