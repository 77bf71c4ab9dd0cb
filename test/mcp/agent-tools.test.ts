import { describe, expect, it } from 'vitest';
import { claimWaitersOf } from '../../src/domain/agents/claim-wait.js';
import type { RunningServer } from '../../src/server.js';
import { budgetRows, queueTasks, setBudget } from '../schema/agents-budgets-support.js';
import { queueTask } from '../schema/agents-support.js';
import type { TestApp } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { serveTestApp } from '../support/fixtures.js';
import { callTool, connectMcp } from './mcp-support.js';

let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app));

describe('MCP agent tools', () => {
  it('initializes and lists the agent tools with input schemas from the fields’ rules', async () => {
    const agent = await t.caller(['agent']);
    const client = await connectMcp(server, agent);
    expect(client.getServerVersion()?.name).toBe('boardroom');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual([
      'claim_next_task',
      'renew_task_lease',
      'request_task_approval',
      'complete_task',
      'fail_task',
      'delegate_task',
      'report_steps',
      'release_task',
      'read_budget',
      'read_vital_signs',
      // The connector tools, listed whether or not the tenant has connectors.
      'search_connector_endpoints',
      'describe_connector_endpoints',
      'call_connector_endpoint',
    ]);
    const complete = tools.find((tool) => tool.name === 'complete_task');
    expect(complete?.inputSchema.required).toEqual(['taskId', 'tokensUsed', 'costUsd']);
    expect(complete?.inputSchema.properties?.tokensUsed).toMatchObject({ type: 'integer', minimum: 0 });
    const claim = tools.find((tool) => tool.name === 'claim_next_task');
    expect(claim?.inputSchema.required).toEqual(['role']);
    expect(claim?.inputSchema.properties?.waitSeconds).toMatchObject({
      anyOf: expect.arrayContaining([expect.objectContaining({ type: 'integer', minimum: 0, maximum: 30 })]),
    });
    await client.close();
  });

  it('waits for a chat, renews the lease, asks for a decision and gets the task back with it', async () => {
    const agent = await t.caller(['agent']);
    const member = await t.caller(['member'], { tenantId: agent.tenantId });
    const chairman = await t.caller(['chairman'], { tenantId: agent.tenantId });
    const waiters = () => claimWaitersOf(t.app.services.bus).size;
    const client = await connectMcp(server, agent);

    const before = waiters();
    const waiting = callTool(client, 'claim_next_task', { role: 'chro', waitSeconds: 30 });
    await eventually(() => expect(waiters()).toBe(before + 1));
    const id = await queueTask(t, member, 'chro', 'draft the offer');
    const claimed = (await waiting).structuredContent.claimNextTask;
    expect(claimed).toMatchObject({
      outcome: 'claimed',
      task: { id, message: 'draft the offer', approval: null },
    });

    const renewed = await callTool(client, 'renew_task_lease', { taskId: id });
    expect(renewed.structuredContent.renewTaskLease).toMatchObject({ id, status: 'running' });
    expect(Date.parse(renewed.structuredContent.renewTaskLease.leaseExpiresAt)).toBeGreaterThanOrEqual(
      Date.parse(claimed.task.leaseExpiresAt),
    );

    const asked = await callTool(client, 'request_task_approval', {
      taskId: id,
      summary: 'Send the offer',
      payload: { amount: 1200 },
    });
    expect(asked.structuredContent.requestTaskApproval).toMatchObject({ taskId: id, status: 'pending' });
    const approvalId = asked.structuredContent.requestTaskApproval.id;
    // The task left this agent: its lease cannot be renewed, and the claim finds nothing until a decision.
    const stale = await callTool(client, 'renew_task_lease', { taskId: id });
    expect(stale.isError).toBe(true);
    expect(stale.structuredContent.error.code).toBe('CONFLICT');
    expect(
      (await callTool(client, 'claim_next_task', { role: 'chro' })).structuredContent.claimNextTask,
    ).toMatchObject({ outcome: 'queue_empty' });

    const decided = await t.graphql(
      'mutation ($id: ID!) { approveTaskApproval(id: $id, note: "go") { status } }',
      { id: approvalId },
      chairman,
    );
    expect(decided.errors).toBeUndefined();
    const back = (await callTool(client, 'claim_next_task', { role: 'chro' })).structuredContent
      .claimNextTask;
    expect(back).toMatchObject({
      outcome: 'claimed',
      task: { id, approval: { id: approvalId, status: 'approved', note: 'go', payload: { amount: 1200 } } },
    });
    await client.close();
  });

  it('asks with a wait of its own (expiresInSeconds), and a wait out of bounds is refused, changing nothing', async () => {
    const agent = await t.caller(['agent']);
    const member = await t.caller(['member'], { tenantId: agent.tenantId });
    const client = await connectMcp(server, agent);
    const { tools } = await client.listTools();
    const ask = tools.find((tool) => tool.name === 'request_task_approval');
    expect(ask?.inputSchema.required).toEqual(['taskId', 'summary']);
    expect(ask?.inputSchema.properties?.expiresInSeconds).toMatchObject({
      anyOf: expect.arrayContaining([
        expect.objectContaining({ type: 'integer', minimum: 60, maximum: 2_592_000 }),
      ]),
    });

    const id = await queueTask(t, member, 'cto', 'x');
    await callTool(client, 'claim_next_task', { role: 'cto' });
    for (const expiresInSeconds of [0, 59, 2_592_001]) {
      await expect(
        callTool(client, 'request_task_approval', { taskId: id, summary: 'Ship it?', expiresInSeconds }),
      ).rejects.toMatchObject({ code: -32602 });
    }
    const still = await t.graphql(
      'query ($id: ID!) { task(id: $id) { status approval { id } } }',
      { id },
      agent,
    );
    expect(still.data).toEqual({ task: { status: 'running', approval: null } });

    const asked = await callTool(client, 'request_task_approval', {
      taskId: id,
      summary: 'Ship it?',
      expiresInSeconds: 3600,
    });
    const approval = asked.structuredContent.requestTaskApproval;
    expect(approval).toMatchObject({ taskId: id, status: 'pending' });
    expect(Date.parse(approval.expiresAt) - Date.parse(approval.createdAt)).toBe(3600 * 1000);
    await client.close();
  });

  it('refuses a wait beyond 30 seconds and an empty summary with JSON-RPC errors, changing nothing', async () => {
    const agent = await t.caller(['agent']);
    const member = await t.caller(['member'], { tenantId: agent.tenantId });
    const id = await queueTask(t, member, 'cpo', 'x');
    const client = await connectMcp(server, agent);
    await expect(callTool(client, 'claim_next_task', { role: 'cpo', waitSeconds: 31 })).rejects.toMatchObject(
      { code: -32602 },
    );
    const task = await t.graphql('query ($id: ID!) { task(id: $id) { status } }', { id }, agent);
    expect(task.data).toEqual({ task: { status: 'pending' } });
    const claimed = (await callTool(client, 'claim_next_task', { role: 'cpo' })).structuredContent
      .claimNextTask;
    await expect(
      callTool(client, 'request_task_approval', { taskId: claimed.task.id, summary: '' }),
    ).rejects.toMatchObject({ code: -32602 });
    const still = await t.graphql('query ($id: ID!) { task(id: $id) { status } }', { id }, agent);
    expect(still.data).toEqual({ task: { status: 'running' } });
    await client.close();
  });

  it('claims, completes with usage and recommendations, and reads the budget and vital signs', async () => {
    const agent = await t.caller(['agent']);
    const chairman = await t.caller(['chairman'], { tenantId: agent.tenantId });
    await queueTasks(t, agent.tenantId, 'cfo', 1);
    await setBudget(t, chairman, { role: 'cfo', period: 'month', limitUsd: '10', estimateUsd: '1' });
    const client = await connectMcp(server, agent);

    const claimed = await callTool(client, 'claim_next_task', { role: 'cfo' });
    expect(claimed.isError).toBeUndefined();
    const claim = claimed.structuredContent.claimNextTask;
    expect(claim).toMatchObject({
      outcome: 'claimed',
      task: { role: 'cfo', status: 'running', message: 'task 0' },
    });

    const completed = await callTool(client, 'complete_task', {
      taskId: claim.task.id,
      output: 'Q3 forecast done',
      tokensUsed: 1200,
      costUsd: 0.25,
      recommendations: [{ summary: 'Cut cloud spend', predictedOutcome: 'Saves 10%' }],
    });
    expect(completed.structuredContent.completeTask).toMatchObject({
      id: claim.task.id,
      status: 'completed',
      tokensUsed: 1200,
      costUsd: 0.25,
      recommendations: [{ summary: 'Cut cloud spend', predictedOutcome: 'Saves 10%' }],
    });
    expect(JSON.parse((completed.content[0] as { text: string }).text)).toEqual(completed.structuredContent);

    const budget = await callTool(client, 'read_budget', { role: 'cfo' });
    expect(budget.structuredContent.budget).toMatchObject({
      role: 'cfo',
      spentUsd: '0.25',
      reservedUsd: '0',
    });
    const vitals = await callTool(client, 'read_vital_signs', { role: 'cfo' });
    expect(vitals.structuredContent.agentVitals).toMatchObject({
      agentRole: 'cfo',
      tasksCompleted: 1,
      tokensUsed: 1200,
      costUsd: 0.25,
    });
    await client.close();
  });

  it('completes with the token breakdown, refusing one that does not add up as invalid params, changing nothing', async () => {
    const agent = await t.caller(['agent']);
    await queueTasks(t, agent.tenantId, 'cmo', 1);
    const client = await connectMcp(server, agent);
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'complete_task')?.inputSchema.properties?.usage).toBeDefined();
    const claimed = (await callTool(client, 'claim_next_task', { role: 'cmo' })).structuredContent
      .claimNextTask;
    const report = { taskId: claimed.task.id, tokensUsed: 300, costUsd: 0.01 };

    await expect(
      callTool(client, 'complete_task', { ...report, usage: { inputTokens: 200, outputTokens: 50 } }),
    ).rejects.toMatchObject({
      code: -32602,
      data: { detail: [expect.objectContaining({ loc: ['usage', 'inputTokens'] })] },
    });
    expect(await t.db.prisma.task.findUniqueOrThrow({ where: { id: claimed.task.id } })).toMatchObject({
      status: 'running',
      inputTokens: null,
    });

    const usage = { inputTokens: 250, cachedInputTokens: 200, outputTokens: 50, reasoningTokens: 10 };
    const completed = await callTool(client, 'complete_task', { ...report, usage });
    expect(completed.structuredContent.completeTask).toMatchObject({
      status: 'completed',
      tokensUsed: 300,
      usage,
    });
    await client.close();
  });

  it('answers a budget without room as the claim’s outcome, with the budget and when to retry, and claims nothing', async () => {
    const agent = await t.caller(['agent']);
    const chairman = await t.caller(['chairman'], { tenantId: agent.tenantId });
    await queueTasks(t, agent.tenantId, 'clo', 1);
    await setBudget(t, chairman, { role: 'clo', period: 'month', limitUsd: '1', estimateUsd: '2' });
    const client = await connectMcp(server, agent);
    const refused = await callTool(client, 'claim_next_task', { role: 'clo' });
    expect(refused.isError).toBeUndefined();
    expect(refused.structuredContent.claimNextTask).toMatchObject({
      outcome: 'role_budget_exhausted',
      task: null,
      budget: { role: 'clo', limitUsd: '1' },
      retryAt: expect.any(String),
    });
    expect(await t.db.prisma.task.count({ where: { tenantId: agent.tenantId, status: 'pending' } })).toBe(1);
    await client.close();
  });

  it('fails a claimed task with its reason', async () => {
    const agent = await t.caller(['agent']);
    await queueTasks(t, agent.tenantId, 'cto', 1);
    const client = await connectMcp(server, agent);
    const claim = (await callTool(client, 'claim_next_task', { role: 'cto' })).structuredContent
      .claimNextTask;
    const failed = await callTool(client, 'fail_task', { taskId: claim.task.id, error: 'upstream down' });
    expect(failed.structuredContent.failTask).toMatchObject({ status: 'failed', error: 'upstream down' });
    await client.close();
  });

  it('gives a claimed task back to the queue, its reservation released and its claim uncounted', async () => {
    const agent = await t.caller(['agent']);
    const other = await t.caller(['agent'], { tenantId: agent.tenantId, sub: 'agent-2' });
    const chairman = await t.caller(['chairman'], { tenantId: agent.tenantId });
    await queueTasks(t, agent.tenantId, 'coo', 1);
    await setBudget(t, chairman, { role: 'coo', period: 'month', limitUsd: '10', estimateUsd: '2' });
    const client = await connectMcp(server, agent);
    const claim = (await callTool(client, 'claim_next_task', { role: 'coo' })).structuredContent
      .claimNextTask;
    expect((await callTool(client, 'read_budget', { role: 'coo' })).structuredContent.budget).toMatchObject({
      reservedUsd: '2',
    });

    // Another agent may not give it back; nothing changes.
    const otherClient = await connectMcp(server, other);
    const refused = await callTool(otherClient, 'release_task', { taskId: claim.task.id });
    expect(refused.structuredContent.error.code).toBe('FORBIDDEN');
    await otherClient.close();

    const released = await callTool(client, 'release_task', { taskId: claim.task.id });
    expect(released.structuredContent.releaseTask).toEqual({
      id: claim.task.id,
      role: 'coo',
      status: 'pending',
      attempts: 0,
    });
    expect((await callTool(client, 'read_budget', { role: 'coo' })).structuredContent.budget).toMatchObject({
      reservedUsd: '0',
      spentUsd: '0',
    });
    const again = await callTool(client, 'release_task', { taskId: claim.task.id });
    expect(again.structuredContent.error.code).toBe('CONFLICT');
    const reclaimed = (await callTool(client, 'claim_next_task', { role: 'coo' })).structuredContent
      .claimNextTask;
    expect(reclaimed.task).toMatchObject({ id: claim.task.id, attempts: 1 });
    await client.close();
  });

  it('answers why nothing was claimed, and changes nothing', async () => {
    const agent = await t.caller(['agent']);
    const client = await connectMcp(server, agent);
    const empty = await callTool(client, 'claim_next_task', { role: 'coo' });
    expect(empty.structuredContent.claimNextTask).toEqual({
      outcome: 'queue_empty',
      retryAt: null,
      task: null,
      budget: null,
      routing: null,
    });
    await client.close();
  });

  it('answers a domain refusal as a tool error with the GraphQL error’s message and code', async () => {
    const agent = await t.caller(['agent']);
    const client = await connectMcp(server, agent);
    const unknownRole = await callTool(client, 'claim_next_task', { role: 'nobody' });
    expect(unknownRole.isError).toBe(true);
    const graphql = await t.graphql(
      'mutation { claimNextTask(role: "nobody") { outcome } }',
      undefined,
      agent,
    );
    expect(unknownRole.content).toEqual([{ type: 'text', text: graphql.errors?.[0]?.message }]);
    expect(unknownRole.structuredContent.error).toMatchObject({ code: 'NOT_FOUND', status: 404 });

    const notMine = await callTool(client, 'complete_task', {
      taskId: '00000000-0000-4000-8000-000000000000',
      tokensUsed: 1,
      costUsd: 0,
    });
    expect(notMine.isError).toBe(true);
    expect(notMine.structuredContent.error.code).toBe('NOT_FOUND');

    for (const [name, args] of [
      ['fail_task', { taskId: '00000000-0000-4000-8000-000000000000', error: 'x' }],
      ['read_budget', { role: 'nobody' }],
      ['read_vital_signs', { role: 'nobody' }],
    ] as const) {
      const refused = await callTool(client, name, args);
      expect(refused.isError, name).toBe(true);
      expect(refused.structuredContent.error.code, name).toBe('NOT_FOUND');
    }
    await client.close();
  });

  it('delegates parts of a claimed task, refusing a cycle and a negative cap with the reason, changing nothing', async () => {
    const chairman = await t.caller(['chairman']);
    await t.app.services.tenants.ensure(chairman.tenantId);
    const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
    const client = await connectMcp(server, agent);
    const rootId = await queueTask(t, chairman, 'ceo', 'Brief the board.');
    const claimed = (await callTool(client, 'claim_next_task', { role: 'ceo' })).structuredContent
      .claimNextTask;
    expect(claimed.task).toMatchObject({ id: rootId, depth: 0, costCapUsd: null, children: [] });
    expect(claimed.task.delegationTargets).toEqual(['cfo', 'chro', 'clo', 'cmo', 'coo', 'cpo', 'cto']);
    const footprint = async () => ({
      tasks: await t.db.prisma.task.count({ where: { tenantId: chairman.tenantId } }),
      outbox: await t.db.prisma.outboxEvent.count({ where: { tenantId: chairman.tenantId } }),
    });
    const before = await footprint();

    // Refusals of the input, the domain's rules included, are invalid params, as every tool's.
    await expect(
      callTool(client, 'delegate_task', {
        taskId: rootId,
        delegations: [{ role: 'ceo', message: 'Ask yourself' }],
        tokensUsed: 0,
        costUsd: 0,
      }),
    ).rejects.toThrow(/-32602.*'ceo' is already in this task's chain \(ceo → ceo\)/);
    await expect(
      callTool(client, 'delegate_task', {
        taskId: rootId,
        delegations: [{ role: 'cfo', message: 'Revenue?', costCapUsd: -1 }],
        tokensUsed: 0,
        costUsd: 0,
      }),
    ).rejects.toThrow(/costCapUsd/);
    // No task is written; the cycle trips the CEO's breaker (docs/breakers.md): its pause is one event.
    expect(await footprint()).toEqual({ ...before, outbox: before.outbox + 1 });

    const delegated = await callTool(client, 'delegate_task', {
      taskId: rootId,
      delegations: [{ role: 'cfo', message: 'Revenue?', costCapUsd: 1 }],
      resumeOn: 'FIRST_FAILURE',
      tokensUsed: 40,
      costUsd: 0.002,
    });
    expect(delegated.isError).toBeFalsy();
    expect(delegated.structuredContent.delegateTask.parent).toMatchObject({
      id: rootId,
      status: 'waiting',
      tokensUsed: 40,
    });
    expect(delegated.structuredContent.delegateTask.children).toEqual([
      { id: expect.any(String), role: 'cfo', status: 'pending', costCapUsd: 1 },
    ]);
    await client.close();
  });

  it('refuses wrong argument types, unknown and missing arguments and unknown tools with JSON-RPC errors, changing nothing', async () => {
    const agent = await t.caller(['agent']);
    await queueTasks(t, agent.tenantId, 'cmo', 1);
    const before = await budgetRows(t, agent.tenantId);
    const client = await connectMcp(server, agent);
    await expect(callTool(client, 'claim_next_task', { role: 42 })).rejects.toMatchObject({ code: -32602 });
    await expect(callTool(client, 'claim_next_task', { role: 'cmo', rol: 'x' })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown argument: rol'),
    });
    await expect(callTool(client, 'claim_next_task', {})).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Missing required argument: role'),
    });
    await expect(callTool(client, 'no_such_tool', {})).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: no_such_tool'),
    });
    await expect(
      callTool(client, 'complete_task', { taskId: 'not-a-uuid', tokensUsed: -1, costUsd: 0 }),
    ).rejects.toMatchObject({ code: -32602, data: { detail: expect.any(Array) } });
    expect(await budgetRows(t, agent.tenantId)).toEqual(before);
    await client.close();
  });
});
