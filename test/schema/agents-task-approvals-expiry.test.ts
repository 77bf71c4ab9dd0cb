import { describe, expect, it } from 'vitest';
import {
  expireTaskApprovals,
  TASK_APPROVAL_EXPIRY_DEFAULT_SECONDS,
  TASK_APPROVAL_EXPIRY_MAX_SECONDS,
} from '../../src/domain/agents/task-approvals.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { TestApp } from '../support/app.js';
import { withTwoTestApps } from '../support/fixtures.js';
import { approvalRows, ClaimTask, queueTask } from './agents-support.js';

const Ask = graphql(`
  mutation ExpiryRequestApproval($taskId: ID!, $input: TaskApprovalRequestInput!) {
    requestTaskApproval(taskId: $taskId, input: $input) {
      id
      status
      expiresAt
      createdAt
    }
  }
`);

const Approve = graphql(`
  mutation ExpiryApprove($id: ID!) {
    approveTaskApproval(id: $id) {
      id
      status
    }
  }
`);

const Reject = graphql(`
  mutation ExpiryReject($id: ID!, $note: String) {
    rejectTaskApproval(id: $id, note: $note) {
      id
      status
    }
  }
`);

const ReadApproval = graphql(`
  query ExpiryReadApproval($id: ID!) {
    taskApproval(id: $id) {
      id
      status
      expiresAt
    }
  }
`);

const Inbox = graphql(`
  query ExpiryInbox($status: TaskApprovalStatus) {
    taskApprovals(status: $status) {
      nodes {
        id
        status
      }
    }
  }
`);

const TaskWithApproval = graphql(`
  query ExpiryTask($id: ID!) {
    task(id: $id) {
      id
      status
      approval {
        id
        status
        decidedBy
      }
    }
  }
`);

let t: TestApp;
/** A second instance on the same database: both sweep (and either relay may publish an event: no subscription here). */
let other: TestApp;

withTwoTestApps(({ a, b }) => {
  t = a;
  other = b;
});

async function tenant() {
  const member = await t.caller(['member']);
  const agent = await t.caller(['agent'], { tenantId: member.tenantId, sub: `agent-${member.sub}` });
  const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
  await t.app.services.tenants.ensure(member.tenantId);
  return { member, agent, chairman };
}

/** A CFO task of a new tenant, claimed by its agent. */
async function runningTask() {
  const callers = await tenant();
  const taskId = await queueTask(t, callers.member, 'cfo', 'Send the offer?');
  await t.graphql(ClaimTask, { role: 'cfo' }, callers.agent);
  return { ...callers, taskId };
}

/** A waiting request of a new tenant; `expired` moves its expiry to the past, as time passing would. */
async function waitingRequest({ expired = false } = {}) {
  const callers = await runningTask();
  const asked = await t.graphql(
    Ask,
    { taskId: callers.taskId, input: { summary: 'Send this offer' } },
    callers.agent,
  );
  const id = asked.data?.requestTaskApproval.id ?? '';
  if (expired) await pastExpiry(id);
  return { ...callers, id };
}

const pastExpiry = (id: string) =>
  t.db.prisma.taskApproval.update({ where: { id }, data: { expiresAt: new Date(Date.now() - 1000) } });

const expiryRows = async (tenantId: string) => ({
  events: await t.db.prisma.outboxEvent.count({
    where: { tenantId, type: 'TASK_APPROVAL_DECIDED', payload: { path: ['status'], equals: 'expired' } },
  }),
  audit: await t.db.prisma.auditEntry.count({ where: { tenantId, action: 'task_approval.expire' } }),
});

describe('expiresInSeconds', () => {
  it('sets when the request expires, 24 hours when not given', async () => {
    const { agent, taskId } = await runningTask();
    const asked = await t.graphql(
      Ask,
      { taskId, input: { summary: 'Send this offer', expiresInSeconds: 600 } },
      agent,
    );
    expect(asked.errors).toBeUndefined();
    const approval = asked.data?.requestTaskApproval;
    const waits = (row: typeof approval) =>
      (Date.parse(row?.expiresAt ?? '') - Date.parse(row?.createdAt ?? '')) / 1000;
    expect(waits(approval)).toBe(600);

    const second = await runningTask();
    const byDefault = await t.graphql(
      Ask,
      { taskId: second.taskId, input: { summary: 'Send this offer' } },
      second.agent,
    );
    expect(waits(byDefault.data?.requestTaskApproval)).toBe(TASK_APPROVAL_EXPIRY_DEFAULT_SECONDS);
  });

  it('refuses zero, negative, too short and too long waits with BAD_USER_INPUT, changing nothing', async () => {
    const { agent, taskId } = await runningTask();
    const before = await approvalRows(t, agent.tenantId, taskId);
    for (const expiresInSeconds of [0, -5, 59, TASK_APPROVAL_EXPIRY_MAX_SECONDS + 1]) {
      const result = await t.graphql(
        Ask,
        { taskId, input: { summary: 'Send this offer', expiresInSeconds } },
        agent,
      );
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions, String(expiresInSeconds)).toMatchObject({
        code: 'BAD_USER_INPUT',
        detail: [expect.objectContaining({ loc: ['input', 'expiresInSeconds'] })],
      });
    }
    expect(await approvalRows(t, agent.tenantId, taskId)).toEqual(before);
  });

  it('refuses a fractional wait before anything runs (an Int), changing nothing', async () => {
    const { agent, taskId } = await runningTask();
    const before = await approvalRows(t, agent.tenantId, taskId);
    const result = await t.graphql(
      Ask,
      { taskId, input: { summary: 'Send this offer', expiresInSeconds: 90.5 } },
      agent,
    );
    expect(result.data ?? null).toBeNull();
    expect(result.errors?.[0]?.message).toContain('Int cannot represent non-integer value');
    expect(await approvalRows(t, agent.tenantId, taskId)).toEqual(before);
  });
});

describe('an expired request', () => {
  it('reads as expired before any sweep, in the inbox filters too', async () => {
    const { chairman, id } = await waitingRequest({ expired: true });
    expect((await t.graphql(ReadApproval, { id }, chairman)).data?.taskApproval.status).toBe('expired');
    const expired = await t.graphql(Inbox, { status: 'expired' }, chairman);
    const pending = await t.graphql(Inbox, { status: 'pending' }, chairman);
    expect(expired.data?.taskApprovals.nodes).toEqual([{ id, status: 'expired' }]);
    expect(pending.data?.taskApprovals.nodes).toEqual([]);
  });

  it('is swept once: the task returns to the queue with the expired request attached, one event, one audit row', async () => {
    const { chairman, taskId, id } = await waitingRequest({ expired: true });
    const fresh = await waitingRequest();

    // The instances' own periodic sweep may have been first: either way the second finds nothing left.
    await expireTaskApprovals(t.db.prisma);
    expect(await expireTaskApprovals(t.db.prisma)).toBe(0);

    const task = await t.graphql(TaskWithApproval, { id: taskId }, chairman);
    expect(task.data?.task).toEqual({
      id: taskId,
      status: 'pending',
      approval: { id, status: 'expired', decidedBy: null },
    });
    expect(await expiryRows(chairman.tenantId)).toEqual({ events: 1, audit: 1 });
    const stored = await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id } });
    expect(stored.status).toBe('expired');
    expect((await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id: fresh.id } })).status).toBe(
      'pending',
    );
  });

  it('answers a decision with CONFLICT and its status, changing nothing', async () => {
    const { chairman, taskId, id } = await waitingRequest({ expired: true });
    await expireTaskApprovals(t.db.prisma);
    const before = await approvalRows(t, chairman.tenantId, taskId);

    for (const result of [
      await t.graphql(Approve, { id }, chairman),
      await t.graphql(Reject, { id, note: 'too late' }, chairman),
    ]) {
      expect(result.data ?? null).toBeNull();
      expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', status: 'expired' });
    }
    expect(await approvalRows(t, chairman.tenantId, taskId)).toEqual(before);
  });

  it('not yet swept, a decision still loses: CONFLICT, and the expiry is recorded exactly once', async () => {
    const { chairman, taskId, id } = await waitingRequest({ expired: true });
    const result = await t.graphql(Approve, { id }, chairman);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT', status: 'expired' });
    await expireTaskApprovals(t.db.prisma);
    expect(await expiryRows(chairman.tenantId)).toEqual({ events: 1, audit: 1 });
    const stored = await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id } });
    expect(stored).toMatchObject({ status: 'expired', decidedBy: null, note: null });
    expect((await t.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } })).status).toBe('pending');
  });

  it('is expired exactly once when two instances sweep at the same time', async () => {
    const requests = [];
    for (let i = 0; i < 4; i++) requests.push(await waitingRequest({ expired: true }));

    await Promise.all([
      expireTaskApprovals(t.db.prisma),
      expireTaskApprovals(other.db.prisma),
      expireTaskApprovals(t.db.prisma),
      expireTaskApprovals(other.db.prisma),
    ]);

    for (const { chairman, taskId } of requests) {
      expect(await expiryRows(chairman.tenantId)).toEqual({ events: 1, audit: 1 });
      const task = await t.db.prisma.task.findUniqueOrThrow({ where: { id: taskId } });
      expect(task.status).toBe('pending');
    }
  });

  it('refuses another tenant’s request with NOT_FOUND and a member with FORBIDDEN, changing nothing', async () => {
    const { member, taskId, id } = await waitingRequest({ expired: true });
    const stranger = await t.caller(['chairman']);
    await t.app.services.tenants.ensure(stranger.tenantId);
    const before = await approvalRows(t, member.tenantId, taskId);
    expect((await t.graphql(Approve, { id }, stranger)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await t.graphql(Approve, { id }, member)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await approvalRows(t, member.tenantId, taskId)).toEqual(before);
  });
});
