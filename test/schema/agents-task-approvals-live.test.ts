import { describe, expect, it } from 'vitest';
import { expireTaskApprovals } from '../../src/domain/agents/task-approvals.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import type { Caller, TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { closeCodeFor, subscribe } from '../support/ws.js';
import { approvalTenant, ClaimTask, queueTask } from './agents-support.js';

const ApprovalChanged = graphql(`
  subscription TaskApprovalChangedForTest($role: String, $after: ID) {
    taskApprovalChanged(role: $role, after: $after) {
      eventId
      tenantId
      kind
      approvalId
      taskId
      role
      status
      requestedBy
      decidedBy
    }
  }
`);

const Ask = graphql(`
  mutation TaskApprovalChangedAsk($taskId: ID!, $input: TaskApprovalRequestInput!) {
    requestTaskApproval(taskId: $taskId, input: $input) {
      id
    }
  }
`);

const Approve = graphql(`
  mutation TaskApprovalChangedApprove($id: ID!) {
    approveTaskApproval(id: $id) {
      id
      status
    }
  }
`);

let t: TestApp;
let server: RunningServer;

serveTestApp((app) => ({ t, server } = app));

const tenant = () => approvalTenant(t);

/** `agent` claims a new task of `role` and asks for a decision on it; the request's id. */
async function ask(member: Caller, agent: Caller, role = 'cfo'): Promise<{ id: string; taskId: string }> {
  const taskId = await queueTask(t, member, role, 'Send the offer?');
  const claimed = await t.graphql(ClaimTask, { role }, agent);
  expect(claimed.data?.claimTask?.id).toBe(taskId);
  const asked = await t.graphql(Ask, { taskId, input: { summary: 'Send this offer' } }, agent);
  expect(asked.errors).toBeUndefined();
  return { id: asked.data?.requestTaskApproval.id ?? '', taskId };
}

type Changed = { next(): Promise<{ data?: any; errors?: readonly any[] }> };
const changed = async (subscription: Changed) => {
  const result = await subscription.next();
  expect(result.errors).toBeUndefined();
  return result.data?.taskApprovalChanged;
};

describe('the taskApprovalChanged subscription', () => {
  it('delivers new and decided requests to the chairman and an operator', async () => {
    const { member, agent, chairman, operator } = await tenant();
    const byChairman = await subscribe(server.url, chairman, ApprovalChanged, {});
    const byOperator = await subscribe(server.url, operator, ApprovalChanged, {});
    try {
      const { id, taskId } = await ask(member, agent);
      const requested = {
        tenantId: member.tenantId,
        kind: 'TASK_APPROVAL_REQUESTED',
        approvalId: id,
        taskId,
        role: 'cfo',
        status: 'pending',
        requestedBy: agent.sub,
        decidedBy: null,
      };
      expect(await changed(byChairman)).toEqual({ ...requested, eventId: expect.any(String) });
      expect(await changed(byOperator)).toEqual({ ...requested, eventId: expect.any(String) });

      expect((await t.graphql(Approve, { id }, operator)).data?.approveTaskApproval.status).toBe('approved');
      const decided = {
        kind: 'TASK_APPROVAL_DECIDED',
        approvalId: id,
        status: 'approved',
        decidedBy: operator.sub,
      };
      expect(await changed(byChairman)).toMatchObject(decided);
      expect(await changed(byOperator)).toMatchObject(decided);
    } finally {
      await Promise.all([byChairman.close(), byOperator.close()]);
    }
  });

  it('gives an agent only the requests it made', async () => {
    const { member, agent, chairman } = await tenant();
    const otherAgent = await t.caller(['agent'], { tenantId: member.tenantId, sub: `other-${member.sub}` });
    const subscription = await subscribe(server.url, agent, ApprovalChanged, {});
    try {
      const theirs = await ask(member, otherAgent, 'ceo');
      const own = await ask(member, agent, 'cfo');
      await t.graphql(Approve, { id: theirs.id }, chairman);
      await t.graphql(Approve, { id: own.id }, chairman);
      expect(await changed(subscription)).toMatchObject({ approvalId: own.id, status: 'pending' });
      expect(await changed(subscription)).toMatchObject({ approvalId: own.id, status: 'approved' });
    } finally {
      await subscription.close();
    }
  });

  it('filters by role', async () => {
    const { member, agent, chairman } = await tenant();
    const subscription = await subscribe(server.url, chairman, ApprovalChanged, { role: 'CFO' });
    try {
      await ask(member, agent, 'ceo');
      const cfo = await ask(member, agent, 'cfo');
      expect(await changed(subscription)).toMatchObject({ approvalId: cfo.id, role: 'cfo' });
    } finally {
      await subscription.close();
    }
  });

  it('replays what happened after an event id, in order, then continues live', async () => {
    const { member, agent, chairman } = await tenant();
    const first = await subscribe(server.url, chairman, ApprovalChanged, {});
    const a = await ask(member, agent);
    const start = (await changed(first)).eventId;
    await first.close();

    await t.graphql(Approve, { id: a.id }, chairman);
    const b = await ask(member, agent, 'ceo');
    // Only published events are replayable.
    await t.app.services.relay.kick();

    const resumed = await subscribe(server.url, chairman, ApprovalChanged, { after: start });
    try {
      expect(await changed(resumed)).toMatchObject({ approvalId: a.id, kind: 'TASK_APPROVAL_DECIDED' });
      expect(await changed(resumed)).toMatchObject({ approvalId: b.id, kind: 'TASK_APPROVAL_REQUESTED' });
      await t.graphql(Approve, { id: b.id }, chairman);
      expect(await changed(resumed)).toMatchObject({ approvalId: b.id, kind: 'TASK_APPROVAL_DECIDED' });
    } finally {
      await resumed.close();
    }
  });

  it('never delivers another tenant’s requests', async () => {
    const own = await tenant();
    const outsider = await tenant();
    const subscription = await subscribe(server.url, own.chairman, ApprovalChanged, {});
    try {
      await ask(outsider.member, outsider.agent);
      const mine = await ask(own.member, own.agent);
      expect(await changed(subscription)).toMatchObject({
        approvalId: mine.id,
        tenantId: own.chairman.tenantId,
      });
    } finally {
      await subscription.close();
    }
  });

  it('announces an expired request as decided, with status expired and no decider', async () => {
    const { member, agent, chairman } = await tenant();
    const subscription = await subscribe(server.url, chairman, ApprovalChanged, {});
    try {
      const { id } = await ask(member, agent);
      expect(await changed(subscription)).toMatchObject({ approvalId: id, status: 'pending' });
      await t.db.prisma.taskApproval.update({
        where: { id },
        data: { expiresAt: new Date(Date.now() - 1000) },
      });
      await expireTaskApprovals(t.db.prisma);
      expect(await changed(subscription)).toMatchObject({
        kind: 'TASK_APPROVAL_DECIDED',
        approvalId: id,
        status: 'expired',
        decidedBy: null,
      });
    } finally {
      await subscription.close();
    }
  });

  it('refuses a member (FORBIDDEN) and a socket without a valid token (4401)', async () => {
    const { member } = await tenant();
    const subscription = await subscribe(server.url, member, ApprovalChanged, {});
    const result = await subscription.next();
    await subscription.close();
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN' });

    expect(await closeCodeFor(server.url, {})).toBe(4401);
    expect(await closeCodeFor(server.url, { authorization: 'Bearer nope' })).toBe(4401);
  });

  it('answers UNAUTHENTICATED to an anonymous subscription over HTTP', async () => {
    const body = await t.graphql(ApprovalChanged, {}, null);
    expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });
});
