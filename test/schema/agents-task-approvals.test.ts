import { describe, expect, it } from 'vitest';
import { claimWaitersOf } from '../../src/domain/agents/claim-wait.js';
import { MAX_APPROVAL_PAYLOAD_BYTES } from '../../src/domain/agents/task-approvals.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Caller, TestApp } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { withTestApp } from '../support/fixtures.js';
import {
  approvalRows,
  approvalTenant,
  ClaimTask,
  CompleteTask,
  queueTask,
  watchBus,
} from './agents-support.js';

const RequestApproval = graphql(`
  mutation AgentsRequestApproval($taskId: ID!, $input: TaskApprovalRequestInput!) {
    requestTaskApproval(taskId: $taskId, input: $input) {
      id
      taskId
      role
      summary
      payload
      status
      requestedBy
      decidedBy
      note
      task {
        id
        status
        leaseExpiresAt
        attempts
      }
    }
  }
`);

const Approve = graphql(`
  mutation AgentsApproveTaskApproval($id: ID!, $note: String) {
    approveTaskApproval(id: $id, note: $note) {
      id
      status
      decidedBy
      note
      task {
        id
        status
      }
    }
  }
`);

const Reject = graphql(`
  mutation AgentsRejectTaskApproval($id: ID!, $note: String) {
    rejectTaskApproval(id: $id, note: $note) {
      id
      status
      decidedBy
      note
    }
  }
`);

const RequestChanges = graphql(`
  mutation AgentsRequestTaskApprovalChanges($id: ID!, $note: String) {
    requestTaskApprovalChanges(id: $id, note: $note) {
      id
      status
      note
    }
  }
`);

const Inbox = graphql(`
  query AgentsTaskApprovals($status: TaskApprovalStatus, $role: String) {
    taskApprovals(status: $status, role: $role) {
      nodes {
        id
        status
        role
        summary
      }
    }
  }
`);

const ClaimWithApproval = graphql(`
  mutation AgentsClaimWithApproval($role: String!) {
    claimNextTask(role: $role) {
      outcome
      task {
        id
        status
        attempts
        approval {
          id
          status
          note
          decidedBy
          payload
        }
      }
    }
  }
`);

const ClaimWaiting = graphql(`
  mutation AgentsClaimWaitingForDecision($role: String!) {
    claimNextTask(role: $role, waitSeconds: 30) {
      outcome
      task {
        id
        approval {
          status
        }
      }
    }
  }
`);

const Counts = graphql(`
  query AgentsTaskCounts($role: String) {
    taskCounts(role: $role) {
      pending
      running
      failed
      awaitingApproval
    }
  }
`);

let t: TestApp;

withTestApp((app) => (t = app));

const tenant = () => approvalTenant(t);

/** A tenant with a CFO task claimed by its agent. */
async function runningTask() {
  const callers = await tenant();
  const id = await queueTask(t, callers.member, 'cfo', 'Send the offer?');
  await t.graphql(ClaimTask, { role: 'cfo' }, callers.agent);
  return { ...callers, id };
}

const ask = (agent: Caller, taskId: string, payload: unknown = { offer: 1200 }) =>
  t.graphql(RequestApproval, { taskId, input: { summary: 'Send this offer', payload } }, agent);

describe('requestTaskApproval', () => {
  it('moves the holder’s running task to awaiting_approval: no lease, not running, not failed, reservation released', async () => {
    const { agent, chairman, id } = await runningTask();
    const bus = await watchBus(t, 'TASK_APPROVAL_REQUESTED', agent.tenantId);

    const result = await ask(agent, id);

    expect(result.errors).toBeUndefined();
    const approval = result.data?.requestTaskApproval;
    expect(approval).toMatchObject({
      taskId: id,
      role: 'cfo',
      summary: 'Send this offer',
      payload: { offer: 1200 },
      status: 'pending',
      requestedBy: agent.sub,
      decidedBy: null,
      task: { id, status: 'awaiting_approval', leaseExpiresAt: null, attempts: 0 },
    });
    const counts = await t.graphql(Counts, { role: 'cfo' }, chairman);
    expect(counts.data?.taskCounts).toEqual({ pending: 0, running: 0, failed: 0, awaitingApproval: 1 });
    expect(await t.db.prisma.budgetReservation.count({ where: { taskId: id } })).toBe(0);
    expect((await bus.next()).payload).toMatchObject({
      approval_id: approval?.id,
      task_id: id,
      role: 'cfo',
      status: 'pending',
    });
    await bus.close();
    expect(
      await t.db.prisma.auditEntry.count({
        where: { tenantId: agent.tenantId, action: 'task_approval.request' },
      }),
    ).toBe(1);
    // Nothing to claim while it waits.
    expect((await t.graphql(ClaimWithApproval, { role: 'cfo' }, agent)).data?.claimNextTask.outcome).toBe(
      'queue_empty',
    );
  });

  it('refuses, changing nothing: another agent (FORBIDDEN), a task not running (CONFLICT), another tenant (NOT_FOUND), a member (FORBIDDEN)', async () => {
    const { member, agent, id } = await runningTask();
    const other = await t.caller(['agent'], { tenantId: agent.tenantId, sub: 'another-runtime' });
    const stranger = await t.caller(['agent']);
    await t.app.services.tenants.ensure(stranger.tenantId);
    const before = await approvalRows(t, agent.tenantId, id);

    expect((await ask(other, id)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect((await ask(stranger, id)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect((await ask(member, id)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await approvalRows(t, agent.tenantId, id)).toEqual(before);

    const pending = await queueTask(t, member, 'cto');
    const notRunning = await approvalRows(t, agent.tenantId, pending);
    expect((await ask(agent, pending)).errors?.[0]?.extensions?.code).toBe('CONFLICT');
    expect(await approvalRows(t, agent.tenantId, pending)).toEqual(notRunning);
  });

  it('refuses a summary or payload past its limit with BAD_USER_INPUT, changing nothing', async () => {
    const { agent, id } = await runningTask();
    const before = await approvalRows(t, agent.tenantId, id);

    const huge = await ask(agent, id, { text: 'x'.repeat(MAX_APPROVAL_PAYLOAD_BYTES) });
    const empty = await t.graphql(RequestApproval, { taskId: id, input: { summary: '  ' } }, agent);
    const long = await t.graphql(
      RequestApproval,
      { taskId: id, input: { summary: 'x'.repeat(2001) } },
      agent,
    );

    for (const result of [huge, empty, long])
      expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await approvalRows(t, agent.tenantId, id)).toEqual(before);
  });

  it('cannot be asked twice: the task is no longer running', async () => {
    const { agent, id } = await runningTask();
    await ask(agent, id);

    expect((await ask(agent, id)).errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });
});

describe('deciding a task’s request', () => {
  it('approval returns the task to the queue with the decision, which the next claim reads', async () => {
    const { agent, operator, id } = await runningTask();
    const approvalId = (await ask(agent, id)).data?.requestTaskApproval.id ?? '';
    const decided = await watchBus(t, 'TASK_APPROVAL_DECIDED', agent.tenantId);

    const result = await t.graphql(Approve, { id: approvalId, note: 'go ahead' }, operator);

    expect(result.data?.approveTaskApproval).toEqual({
      id: approvalId,
      status: 'approved',
      decidedBy: operator.sub,
      note: 'go ahead',
      task: { id, status: 'pending' },
    });
    expect((await decided.next()).payload).toMatchObject({ approval_id: approvalId, status: 'approved' });
    await decided.close();
    const claim = await t.graphql(ClaimWithApproval, { role: 'cfo' }, agent);
    expect(claim.data?.claimNextTask).toEqual({
      outcome: 'claimed',
      task: {
        id,
        status: 'running',
        attempts: 1,
        approval: {
          id: approvalId,
          status: 'approved',
          note: 'go ahead',
          decidedBy: operator.sub,
          payload: { offer: 1200 },
        },
      },
    });
    expect(
      await t.db.prisma.auditEntry.findFirst({
        where: { tenantId: agent.tenantId, action: 'task_approval.decide', targetId: approvalId },
      }),
    ).toMatchObject({ actor: operator.sub, outcome: 'approved' });
    // The task goes on to completion as usual.
    const done = await t.graphql(CompleteTask, { id, input: { tokensUsed: 1, costUsd: 0.01 } }, agent);
    expect(done.data?.completeTask.status).toBe('completed');
  });

  it('a rejection says why (note required) and returns the task; a request for changes too', async () => {
    const { agent, chairman, id } = await runningTask();
    const approvalId = (await ask(agent, id)).data?.requestTaskApproval.id ?? '';

    const withoutReason = await t.graphql(Reject, { id: approvalId }, chairman);
    expect(withoutReason.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id: approvalId } })).status).toBe(
      'pending',
    );

    const rejected = await t.graphql(Reject, { id: approvalId, note: 'too generous' }, chairman);
    expect(rejected.data?.rejectTaskApproval).toMatchObject({ status: 'rejected', note: 'too generous' });
    const claim = await t.graphql(ClaimWithApproval, { role: 'cfo' }, agent);
    expect(claim.data?.claimNextTask.task?.approval).toMatchObject({
      status: 'rejected',
      note: 'too generous',
    });

    const second = (await ask(agent, id)).data?.requestTaskApproval.id ?? '';
    const changes = await t.graphql(RequestChanges, { id: second, note: 'lower it to 1000' }, chairman);
    expect(changes.data?.requestTaskApprovalChanges).toMatchObject({
      status: 'changes_requested',
      note: 'lower it to 1000',
    });
    const again = await t.graphql(ClaimWithApproval, { role: 'cfo' }, agent);
    expect(again.data?.claimNextTask.task?.approval).toMatchObject({
      id: second,
      status: 'changes_requested',
    });
  });

  it('a decision wakes a claim waiting for the role', async () => {
    const { agent, chairman, id } = await runningTask();
    const approvalId = (await ask(agent, id)).data?.requestTaskApproval.id ?? '';
    const waiters = claimWaitersOf(t.app.services.bus);
    const claim = t.graphql(ClaimWaiting, { role: 'cfo' }, agent);
    await eventually(() => expect(waiters.size).toBe(1));

    await t.graphql(Approve, { id: approvalId }, chairman);

    expect((await claim).data?.claimNextTask).toEqual({
      outcome: 'claimed',
      task: { id, approval: { status: 'approved' } },
    });
  });

  it('decided twice answers the first decision and writes nothing more', async () => {
    const { agent, chairman, operator, id } = await runningTask();
    const approvalId = (await ask(agent, id)).data?.requestTaskApproval.id ?? '';
    await t.graphql(Approve, { id: approvalId, note: 'first' }, chairman);
    const before = await approvalRows(t, agent.tenantId, id);

    const second = await t.graphql(Reject, { id: approvalId, note: 'second' }, operator);

    expect(second.data?.rejectTaskApproval).toMatchObject({
      status: 'approved',
      note: 'first',
      decidedBy: chairman.sub,
    });
    expect(await approvalRows(t, agent.tenantId, id)).toEqual(before);
  });

  it('members get FORBIDDEN, agents cannot decide, another tenant gets NOT_FOUND; nothing changes', async () => {
    const { member, agent, id } = await runningTask();
    const approvalId = (await ask(agent, id)).data?.requestTaskApproval.id ?? '';
    const stranger = await t.caller(['chairman']);
    await t.app.services.tenants.ensure(stranger.tenantId);
    const before = await approvalRows(t, agent.tenantId, id);

    expect((await t.graphql(Approve, { id: approvalId }, member)).errors?.[0]?.extensions?.code).toBe(
      'FORBIDDEN',
    );
    expect((await t.graphql(Approve, { id: approvalId }, agent)).errors?.[0]?.extensions?.code).toBe(
      'FORBIDDEN',
    );
    expect((await t.graphql(Approve, { id: approvalId }, stranger)).errors?.[0]?.extensions?.code).toBe(
      'NOT_FOUND',
    );
    expect(await approvalRows(t, agent.tenantId, id)).toEqual(before);
  });
});

describe('taskApprovals inbox', () => {
  it('lists the tenant’s requests to approvers, an agent’s own to it, nothing to a member or another tenant', async () => {
    const { member, agent, chairman, id } = await runningTask();
    const approvalId = (await ask(agent, id)).data?.requestTaskApproval.id ?? '';
    const otherAgent = await t.caller(['agent'], { tenantId: agent.tenantId, sub: 'another-runtime' });
    const stranger = await t.caller(['chairman']);
    await t.app.services.tenants.ensure(stranger.tenantId);

    const forChairman = await t.graphql(Inbox, { status: 'pending' }, chairman);
    expect(forChairman.data?.taskApprovals.nodes).toEqual([
      { id: approvalId, status: 'pending', role: 'cfo', summary: 'Send this offer' },
    ]);
    expect((await t.graphql(Inbox, { status: 'approved' }, chairman)).data?.taskApprovals.nodes).toEqual([]);
    expect((await t.graphql(Inbox, {}, agent)).data?.taskApprovals.nodes).toHaveLength(1);
    expect((await t.graphql(Inbox, {}, otherAgent)).data?.taskApprovals.nodes).toEqual([]);
    expect((await t.graphql(Inbox, {}, stranger)).data?.taskApprovals.nodes).toEqual([]);
    expect((await t.graphql(Inbox, {}, member)).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it('lists a request asked without a payload, or with a null one, with a null payload', async () => {
    const { agent, chairman, id } = await runningTask();
    const omitted = await t.graphql(RequestApproval, { taskId: id, input: { summary: 'Go on?' } }, agent);
    expect(omitted.errors).toBeUndefined();
    expect(omitted.data?.requestTaskApproval.payload).toBeNull();
    const second = await queueTask(t, chairman, 'cfo', 'Another');
    expect((await t.graphql(ClaimTask, { role: 'cfo' }, agent)).data?.claimTask?.id).toBe(second);
    const explicit = await t.graphql(
      RequestApproval,
      { taskId: second, input: { summary: 'And this?', payload: null } },
      agent,
    );
    expect(explicit.errors).toBeUndefined();
    const inbox = await t.graphql(InboxWithPayload, { status: 'pending' }, chairman);
    expect(inbox.errors).toBeUndefined();
    expect(inbox.data?.taskApprovals.nodes).toEqual([
      { summary: 'And this?', payload: null },
      { summary: 'Go on?', payload: null },
    ]);
  });
});

const InboxWithPayload = graphql(`
  query AgentsTaskApprovalsWithPayload($status: TaskApprovalStatus) {
    taskApprovals(status: $status) {
      nodes {
        summary
        payload
      }
    }
  }
`);
