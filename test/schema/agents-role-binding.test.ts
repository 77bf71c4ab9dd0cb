import { describe, expect, it } from 'vitest';
import { claimWaitersOf } from '../../src/domain/agents/claim-wait.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { callTool, connectMcp } from '../mcp/mcp-support.js';
import type { TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { subscribe } from '../support/ws.js';
import { ChatMutation, ClaimTask, queueTask, TaskQuery, TasksQuery, ThreadQuery } from './agents-support.js';

const ClaimNext = graphql(`
  mutation BindingClaimNext($role: String!, $waitSeconds: Int) {
    claimNextTask(role: $role, waitSeconds: $waitSeconds) {
      outcome
      task {
        id
      }
    }
  }
`);

const Complete = graphql(`
  mutation BindingComplete($id: ID!) {
    completeTask(id: $id, input: { output: "Done, nothing to see.", tokensUsed: 0, costUsd: 0 }) {
      id
    }
  }
`);

const Fail = graphql(`
  mutation BindingFail($id: ID!) {
    failTask(id: $id, error: "given up") {
      id
    }
  }
`);

const Release = graphql(`
  mutation BindingRelease($id: ID!) {
    releaseTask(id: $id) {
      id
    }
  }
`);

const Renew = graphql(`
  mutation BindingRenew($id: ID!) {
    renewTaskLease(id: $id) {
      id
    }
  }
`);

const AskDecision = graphql(`
  mutation BindingAskDecision($id: ID!) {
    requestTaskApproval(taskId: $id, input: { summary: "Send it?" }) {
      id
    }
  }
`);

const Approvals = graphql(`
  query BindingApprovals {
    taskApprovals {
      nodes {
        id
        role
      }
    }
  }
`);

const Approval = graphql(`
  query BindingApproval($id: ID!) {
    taskApproval(id: $id) {
      id
    }
  }
`);

const Counts = graphql(`
  query BindingCounts {
    taskCounts {
      pending
      running
    }
  }
`);

const RecentTaskEvents = graphql(`
  query BindingRecentTaskEvents {
    recentEvents(types: [TASK_UPDATED, TASK_APPROVAL_REQUESTED]) {
      event {
        __typename
        ... on TaskUpdatedEvent {
          role
          taskId
        }
        ... on TaskApprovalEvent {
          taskApprovalRole: role
        }
      }
    }
  }
`);

const TaskEvents = graphql(`
  subscription BindingTaskEvents($role: String) {
    taskUpdated(role: $role) {
      role
      taskId
      status
      task {
        id
        message
      }
    }
  }
`);

const TenantEvents = graphql(`
  subscription BindingTenantEvents {
    events {
      __typename
      ... on TaskUpdatedEvent {
        role
        taskId
        status
      }
    }
  }
`);

const Me = graphql(`
  query BindingMe {
    me {
      sub
      roles
      agentRoles
    }
  }
`);

let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app));

/**
 * A tenant whose runtime subject works the CEO and the CFO with a token for each, bound to its role, and
 * an agent token without a binding.
 */
async function company() {
  const chairman = await t.caller(['chairman']);
  const { tenantId } = chairman;
  const member = await t.caller(['member'], { tenantId });
  const sub = `runtime-${chairman.sub}`;
  const ceo = await t.caller(['agent'], { tenantId, sub, agentRoles: ['ceo'] });
  const cfo = await t.caller(['agent'], { tenantId, sub, agentRoles: ['cfo'] });
  const unbound = await t.caller(['agent'], { tenantId });
  await t.app.services.tenants.ensure(tenantId);
  return { chairman, member, ceo, cfo, unbound };
}

const codeOf = (result: { errors?: readonly { extensions?: Record<string, unknown> }[] }) =>
  result.errors?.[0]?.extensions?.code;

const taskRow = (id: string) => t.db.prisma.task.findUniqueOrThrow({ where: { id } });
const outboxCount = (tenantId: string) => t.db.prisma.outboxEvent.count({ where: { tenantId } });

describe('an agent token bound to its roles (agent_roles)', () => {
  it('says whom it works for in me; a token without the claim says null', async () => {
    const { cfo, unbound } = await company();
    expect((await t.graphql(Me, {}, cfo)).data?.me).toEqual({
      sub: cfo.sub,
      roles: ['agent'],
      agentRoles: ['cfo'],
    });
    expect((await t.graphql(Me, {}, unbound)).data?.me.agentRoles).toBeNull();
  });

  it('without the claim, works every role of its tenant as before', async () => {
    const { member, unbound } = await company();
    const ceoTask = await queueTask(t, member, 'ceo');
    const cfoTask = await queueTask(t, member, 'cfo');

    expect((await t.graphql(ClaimTask, { role: 'ceo' }, unbound)).data?.claimTask?.id).toBe(ceoTask);
    expect((await t.graphql(ClaimTask, { role: 'cfo' }, unbound)).data?.claimTask?.id).toBe(cfoTask);
    expect((await t.graphql(Complete, { id: ceoTask }, unbound)).errors).toBeUndefined();
  });

  it('claims its role, and another role’s claim is FORBIDDEN on GraphQL and MCP, changing nothing', async () => {
    const { member, cfo } = await company();
    const boardOnly = await queueTask(t, member, 'ceo', 'Board only: the acquisition closes on Friday.');
    const mine = await queueTask(t, member, 'cfo');
    const outbox = await outboxCount(cfo.tenantId);
    const waiters = claimWaitersOf(t.app.services.bus).size;

    const refusals = [
      await t.graphql(ClaimTask, { role: 'ceo' }, cfo),
      await t.graphql(ClaimNext, { role: 'CEO' }, cfo),
      await t.graphql(ClaimNext, { role: 'ceo', waitSeconds: 20 }, cfo),
    ];
    for (const refused of refusals) {
      expect(codeOf(refused)).toBe('FORBIDDEN');
      expect(refused.errors?.[0]?.message).toBe('This agent token works only for the roles cfo, not ceo');
    }
    const client = await connectMcp(server, cfo);
    const overMcp = await callTool(client, 'claim_next_task', { role: 'ceo' });
    expect(overMcp.isError).toBe(true);
    expect(overMcp.structuredContent.error).toMatchObject({ code: 'FORBIDDEN', status: 403 });

    expect(claimWaitersOf(t.app.services.bus).size).toBe(waiters);
    expect(await taskRow(boardOnly)).toMatchObject({ status: 'pending', attempts: 0, claimedBy: null });
    expect(await outboxCount(cfo.tenantId)).toBe(outbox);
    const claimed = await callTool(client, 'claim_next_task', { role: 'cfo' });
    expect(claimed.structuredContent.claimNextTask).toMatchObject({ outcome: 'claimed', task: { id: mine } });
    await client.close();
  });

  it('cannot complete, fail, release, renew or ask a decision on another role’s task, even one its subject holds', async () => {
    const { member, ceo, cfo } = await company();
    const boardOnly = await queueTask(t, member, 'ceo', 'Board only: the acquisition closes on Friday.');
    expect((await t.graphql(ClaimTask, { role: 'ceo' }, ceo)).data?.claimTask?.id).toBe(boardOnly);
    const held = await taskRow(boardOnly);
    const outbox = await outboxCount(cfo.tenantId);

    for (const document of [Complete, Fail, Release, Renew, AskDecision]) {
      const refused = await t.graphql(document as typeof Complete, { id: boardOnly }, cfo);
      expect(codeOf(refused)).toBe('NOT_FOUND');
      expect(refused.errors?.[0]?.message).toBe(`Task ${boardOnly} not found`);
    }
    const client = await connectMcp(server, cfo);
    for (const [tool, args] of [
      ['complete_task', { taskId: boardOnly, output: 'Done.', tokensUsed: 0, costUsd: 0 }],
      ['fail_task', { taskId: boardOnly, error: 'given up' }],
      ['release_task', { taskId: boardOnly }],
      ['renew_task_lease', { taskId: boardOnly }],
    ] as const) {
      const refused = await callTool(client, tool, args);
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent.error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    }
    await client.close();

    expect(await taskRow(boardOnly)).toEqual(held);
    expect(await outboxCount(cfo.tenantId)).toBe(outbox);
    // The token bound to the CEO, with the same subject, still finishes it.
    expect((await t.graphql(Complete, { id: boardOnly }, ceo)).errors).toBeUndefined();
  });

  it('reads only its roles’ tasks, threads, counts, decision requests and recent events', async () => {
    const { chairman, member, ceo, cfo } = await company();
    const ceoChat = await t.graphql(
      ChatMutation,
      { role: 'ceo', input: { message: 'Board only: the acquisition closes on Friday.' } },
      member,
    );
    const cfoChat = await t.graphql(ChatMutation, { role: 'cfo', input: { message: 'Budget?' } }, member);
    const ceoTask = ceoChat.data?.sendChatMessage.taskId as string;
    const cfoTask = cfoChat.data?.sendChatMessage.taskId as string;
    const ceoThread = ceoChat.data?.sendChatMessage.threadId as string;
    const cfoThread = cfoChat.data?.sendChatMessage.threadId as string;
    await t.graphql(ClaimTask, { role: 'ceo' }, ceo);
    const asked = await t.graphql(AskDecision, { id: ceoTask }, ceo);
    const approvalId = asked.data?.requestTaskApproval.id as string;
    expect(approvalId).toBeDefined();

    expect((await t.graphql(TaskQuery, { id: ceoTask }, cfo)).data?.task).toBeNull();
    expect((await t.graphql(TaskQuery, { id: cfoTask }, cfo)).data?.task?.message).toBe('Budget?');
    const listed = await t.graphql(TasksQuery, {}, cfo);
    expect(listed.data?.tasks.nodes.map((task) => task.id)).toEqual([cfoTask]);
    expect((await t.graphql(TasksQuery, { role: 'ceo' }, cfo)).data?.tasks.nodes).toEqual([]);
    expect((await t.graphql(Counts, {}, cfo)).data?.taskCounts).toEqual({ pending: 1, running: 0 });
    expect((await t.graphql(ThreadQuery, { id: ceoThread }, cfo)).data?.thread).toBeNull();
    expect((await t.graphql(ThreadQuery, { id: cfoThread }, cfo)).data?.thread?.messages).toHaveLength(1);
    expect((await t.graphql(Approvals, {}, cfo)).data?.taskApprovals.nodes).toEqual([]);
    expect(codeOf(await t.graphql(Approval, { id: approvalId }, cfo))).toBe('NOT_FOUND');
    expect((await t.graphql(Approvals, {}, ceo)).data?.taskApprovals.nodes).toEqual([
      { id: approvalId, role: 'ceo' },
    ]);
    await t.app.services.relay.kick();
    const recent = (await t.graphql(RecentTaskEvents, {}, cfo)).data?.recentEvents ?? [];
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.map((recorded) => JSON.stringify(recorded.event))).not.toContainEqual(
      expect.stringContaining('"ceo"'),
    );

    // The chairman, unbound, reads both.
    expect((await t.graphql(TaskQuery, { id: ceoTask }, chairman)).data?.task?.id).toBe(ceoTask);
    expect((await t.graphql(ThreadQuery, { id: ceoThread }, chairman)).data?.thread?.id).toBe(ceoThread);
  });

  it('receives only its roles’ task events on taskUpdated and events', async () => {
    const { member, cfo } = await company();
    const updates = await subscribe(server.url, cfo, TaskEvents, {});
    const ceoUpdates = await subscribe(server.url, cfo, TaskEvents, { role: 'ceo' });
    const stream = await subscribe(server.url, cfo, TenantEvents, {});
    expect((await stream.next()).data?.events.__typename).toBe('EventStreamStarted');

    await queueTask(t, member, 'ceo', 'Board only: the acquisition closes on Friday.');
    const mine = await queueTask(t, member, 'cfo', 'Budget?');

    // Events come in commit order: the CEO's task, queued first, would come first.
    expect((await updates.next()).data?.taskUpdated).toEqual({
      role: 'cfo',
      taskId: mine,
      status: 'pending',
      task: { id: mine, message: 'Budget?' },
    });
    expect((await stream.next()).data?.events).toEqual({
      __typename: 'TaskUpdatedEvent',
      role: 'cfo',
      taskId: mine,
      status: 'pending',
    });
    await expect(ceoUpdates.next(500)).rejects.toThrow(/no event/);
    await Promise.all([updates.close(), ceoUpdates.close(), stream.close()]);
  });
});

describe('the agent_roles claim', () => {
  it('naming a role the tenant does not have matches no task: NOT_FOUND like any unknown role', async () => {
    const { member } = await company();
    const ghost = await t.caller(['agent'], { tenantId: member.tenantId, agentRoles: ['ghost'] });
    await queueTask(t, member, 'cfo');
    expect(codeOf(await t.graphql(ClaimNext, { role: 'ghost' }, ghost))).toBe('NOT_FOUND');
    expect(codeOf(await t.graphql(ClaimNext, { role: 'cfo' }, ghost))).toBe('FORBIDDEN');
    expect((await t.graphql(TasksQuery, {}, ghost)).data?.tasks.nodes).toEqual([]);
  });
});
