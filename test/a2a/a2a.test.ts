import { createHash, randomUUID } from 'node:crypto';
import { type Task, TaskState } from '@a2a-js/sdk';
import { describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { PNG } from '../domain/agents/attachment-samples.js';
import { callTool, connectMcp } from '../mcp/mcp-support.js';
import type { TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { a2aClient, fetchAs, postA2a, roleUrl, textMessage } from './a2a-support.js';

let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app));

const taskOf = (result: unknown) => result as Task;
const taskCount = (tenantId: string) => t.db.prisma.task.count({ where: { tenantId } });
const rpcError = (error: unknown) => ({ code: (error as { envelopeCode?: number }).envelopeCode });

async function claimAs(agentToken: { token: string }, role: string) {
  const mcp = await connectMcp(server, agentToken);
  const claimed = (await callTool(mcp, 'claim_next_task', { role })).structuredContent.claimNextTask;
  return { mcp, taskId: claimed.task?.id as string | undefined };
}

describe('A2A: discovery', () => {
  it('gives anonymous callers a card without skills that is the same for any tenant and role', async () => {
    const response = await fetch(`${roleUrl(server, randomUUID(), 'cfo')}.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const card = await response.json();
    expect(card).toMatchObject({
      name: 'Boardroom agent role',
      capabilities: { extendedAgentCard: true },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
    });
    expect(card.skills ?? []).toEqual([]);
  });

  it('gives the tenant’s callers the CFO’s card with its skill, and its interface', async () => {
    const member = await t.caller(['member']);
    const response = await fetchAs(member)(
      `${roleUrl(server, member.tenantId, 'cfo')}.well-known/agent-card.json`,
    );
    const card = await response.json();
    expect(card.skills).toMatchObject([{ id: 'cfo', tags: ['cfo'] }]);
    expect(card.supportedInterfaces).toEqual([
      {
        url: `${server.url}/a2a/${member.tenantId}/cfo`,
        protocolBinding: 'JSONRPC',
        tenant: member.tenantId,
        protocolVersion: '1.0',
      },
      {
        url: `${server.url}/a2a/${member.tenantId}/cfo/rest`,
        protocolBinding: 'HTTP+JSON',
        tenant: member.tenantId,
        protocolVersion: '1.0',
      },
    ]);
  });

  it('answers GetExtendedAgentCard (the SDK’s getAgentCard) with the role’s card', async () => {
    const member = await t.caller(['member']);
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const card = await client.getAgentCard();
    expect(card.skills.map((skill) => skill.id)).toEqual(['cfo']);
  });

  it('gives another tenant’s caller the public card only', async () => {
    const owner = await t.caller(['member']);
    const stranger = await t.caller(['chairman']);
    const response = await fetchAs(stranger)(
      `${roleUrl(server, owner.tenantId, 'cfo')}.well-known/agent-card.json`,
    );
    expect((await response.json()).name).toBe('Boardroom agent role');
  });
});

describe('A2A: tasks', () => {
  it('sends the CFO work, an agent completes it over MCP, and the task completes with the artifact', async () => {
    const member = await t.caller(['member']);
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });
    const client = await a2aClient(server, member, member.tenantId, 'cfo');

    const sent = taskOf(await client.sendMessage(textMessage('Summarise last quarter’s cash flow.')));
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(sent.contextId).not.toBe('');
    expect(sent.history[0]?.parts[0]?.content).toEqual({
      $case: 'text',
      value: 'Summarise last quarter’s cash flow.',
    });

    const { mcp, taskId } = await claimAs(agent, 'cfo');
    expect(taskId).toBe(sent.id);
    expect((await client.getTask({ tenant: '', id: sent.id })).status?.state).toBe(
      TaskState.TASK_STATE_WORKING,
    );
    const completed = await callTool(mcp, 'complete_task', {
      taskId,
      output: 'Cash flow was positive: 1.2 M.',
      tokensUsed: 100,
      costUsd: 0.01,
    });
    expect(completed.isError).toBeFalsy();
    await mcp.close();

    const done = await client.getTask({ tenant: '', id: sent.id });
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts).toMatchObject([
      { name: 'output', parts: [{ content: { $case: 'text', value: 'Cash flow was positive: 1.2 M.' } }] },
    ]);
    const listed = await client.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_COMPLETED,
      pageSize: 10,
      pageToken: '',
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(listed.tasks.map((task) => task.id)).toEqual([sent.id]);
    expect(listed.tasks[0]?.artifacts).toHaveLength(1);
  });

  it('continues a context: a message with the contextId is a turn of the same thread', async () => {
    const member = await t.caller(['member']);
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const first = taskOf(await client.sendMessage(textMessage('First question')));
    const second = taskOf(await client.sendMessage(textMessage('Follow-up', { contextId: first.contextId })));
    expect(second.contextId).toBe(first.contextId);
    const thread = await t.db.prisma.task.findUnique({ where: { id: second.id } });
    expect(thread?.threadId).toBe(first.contextId);
  });

  it('lists the tasks of one context (a thread) only, and none of another tenant’s', async () => {
    const member = await t.caller(['member']);
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const first = taskOf(await client.sendMessage(textMessage('First question')));
    const second = taskOf(await client.sendMessage(textMessage('Follow-up', { contextId: first.contextId })));
    await client.sendMessage(textMessage('Another thread'));
    const list = (contextId: string, as = client) =>
      as.listTasks({
        tenant: '',
        contextId,
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 10,
        pageToken: '',
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      });
    expect((await list(first.contextId)).tasks.map((task) => task.id)).toEqual([second.id, first.id]);
    const stranger = await t.caller(['chairman']);
    const strangerClient = await a2aClient(server, stranger, stranger.tenantId, 'cfo');
    expect((await list(first.contextId, strangerClient)).tasks).toEqual([]);
    expect(await list('not-a-thread').catch(rpcError)).toEqual({ code: -32602 });
  });

  it('carries the completion’s deliverables as artifacts after the output: text, link and file', async () => {
    const member = await t.caller(['member']);
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const sent = taskOf(await client.sendMessage(textMessage('Forecast Q3')));
    const { mcp, taskId } = await claimAs(agent, 'cfo');
    const completed = await callTool(mcp, 'complete_task', {
      taskId,
      output: 'Forecast attached.',
      tokensUsed: 10,
      costUsd: 0.001,
      deliverables: [
        { kind: 'TEXT', title: 'Summary', text: 'Revenue +4%.' },
        { kind: 'LINK', url: 'https://drive.example.com/q3' },
        { kind: 'FILE', data: PNG.toString('base64'), mimeType: 'image/png', filename: 'chart.png' },
      ],
    });
    expect(completed.isError).toBeFalsy();
    await mcp.close();
    const done = await client.getTask({ tenant: '', id: sent.id });
    expect(done.artifacts.map((artifact) => artifact.name)).toEqual([
      'output',
      'Summary',
      'deliverable 2',
      'deliverable 3',
    ]);
    const parts = done.artifacts.slice(1).map((artifact) => artifact.parts[0]);
    expect(parts[0]).toMatchObject({ content: { $case: 'text', value: 'Revenue +4%.' } });
    expect(parts[1]).toMatchObject({ content: { $case: 'url', value: 'https://drive.example.com/q3' } });
    expect(parts[2]).toMatchObject({ mediaType: 'image/png', filename: 'chart.png' });
    expect(Buffer.from(parts[2]?.content?.value as Uint8Array).equals(PNG)).toBe(true);
    expect(parts[2]?.metadata).toEqual({
      sha256: createHash('sha256').update(PNG).digest('hex'),
      size: PNG.length,
    });
  });

  it('shows an agent’s question waiting for approval as input-required, with its summary', async () => {
    const member = await t.caller(['member']);
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const sent = taskOf(await client.sendMessage(textMessage('Pay the invoice')));
    const { mcp, taskId } = await claimAs(agent, 'cfo');
    await callTool(mcp, 'request_task_approval', { taskId, summary: 'Pay 1,200 to ACME?' });
    await mcp.close();
    const task = await client.getTask({ tenant: '', id: sent.id });
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(task.status?.message?.parts[0]?.content).toEqual({ $case: 'text', value: 'Pay 1,200 to ACME?' });
  });

  it('keeps a task in review working, without its artifact, until a reviewer accepts it', async () => {
    const member = await t.caller(['member']);
    const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });
    await t.graphql(
      'mutation { setCompletionPolicy(role: "cfo", input: { reviewerRole: "ceo" }) { role } }',
      undefined,
      chairman,
    );
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const sent = taskOf(await client.sendMessage(textMessage('Forecast Q3')));
    const { mcp, taskId } = await claimAs(agent, 'cfo');
    await callTool(mcp, 'complete_task', { taskId, output: 'Q3: +4%', tokensUsed: 1, costUsd: 0 });
    await mcp.close();

    const inReview = await client.getTask({ tenant: '', id: sent.id });
    expect(inReview.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(inReview.artifacts).toEqual([]);
    const working = await client.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_WORKING,
      pageSize: 10,
      pageToken: '',
      statusTimestampAfter: undefined,
      includeArtifacts: false,
    });
    expect(working.tasks).toEqual([]);
    await t.graphql(`mutation { acceptTask(id: "${sent.id}") { status } }`, undefined, chairman);
    expect((await client.getTask({ tenant: '', id: sent.id })).status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
  });

  it('keeps a paused role’s task submitted', async () => {
    const chairman = await t.caller(['chairman']);
    await t.graphql('mutation { pauseAgent(role: "cmo", reason: "audit") { paused } }', undefined, chairman);
    const client = await a2aClient(server, chairman, chairman.tenantId, 'cmo');
    const sent = taskOf(await client.sendMessage(textMessage('Plan the launch')));
    expect((await client.getTask({ tenant: '', id: sent.id })).status?.state).toBe(
      TaskState.TASK_STATE_SUBMITTED,
    );
  });

  it('cancels a task, and refuses to cancel it again as not cancelable', async () => {
    const member = await t.caller(['member']);
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const sent = taskOf(await client.sendMessage(textMessage('Never mind')));
    const cancelled = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const again = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined }).catch(rpcError);
    expect(again).toEqual({ code: -32002 });
  });
});

describe('A2A: idempotency by messageId', () => {
  it('answers a repeated message (same messageId, same content) with the first task, queuing one', async () => {
    const member = await t.caller(['member']);
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const messageId = randomUUID();
    const first = taskOf(await client.sendMessage(textMessage('Once only', { messageId })));
    const again = taskOf(await client.sendMessage(textMessage('Once only', { messageId })));
    expect(again.id).toBe(first.id);
    expect(await taskCount(member.tenantId)).toBe(1);
  });

  it('refuses the same messageId with other content, queuing nothing more', async () => {
    const member = await t.caller(['member']);
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const messageId = randomUUID();
    await client.sendMessage(textMessage('The first', { messageId }));
    const refused = await client.sendMessage(textMessage('Another', { messageId })).catch(rpcError);
    expect(refused).toEqual({ code: -32602 });
    expect(await taskCount(member.tenantId)).toBe(1);
  });
});

describe('A2A: tenant isolation', () => {
  it('refuses another tenant’s path with 404, and reads none of its tasks through one’s own', async () => {
    const owner = await t.caller(['member']);
    const stranger = await t.caller(['chairman']);
    const ownerClient = await a2aClient(server, owner, owner.tenantId, 'cfo');
    const sent = taskOf(await ownerClient.sendMessage(textMessage('Private numbers')));

    const onOwnersPath = await postA2a(server, stranger, owner.tenantId, 'cfo', {
      jsonrpc: '2.0',
      id: 1,
      method: 'GetTask',
      params: { id: sent.id },
    });
    expect(onOwnersPath.status).toBe(404);
    const strangerClient = await a2aClient(server, stranger, stranger.tenantId, 'cfo');
    expect(await strangerClient.getTask({ tenant: '', id: sent.id }).catch(rpcError)).toEqual({
      code: -32001,
    });
    expect(
      await strangerClient.cancelTask({ tenant: '', id: sent.id, metadata: undefined }).catch(rpcError),
    ).toEqual({ code: -32001 });
    expect((await ownerClient.getTask({ tenant: '', id: sent.id })).status?.state).toBe(
      TaskState.TASK_STATE_SUBMITTED,
    );
  });

  it('reads no task of another role through a role’s endpoint', async () => {
    const member = await t.caller(['member']);
    const cfo = await a2aClient(server, member, member.tenantId, 'cfo');
    const ceo = await a2aClient(server, member, member.tenantId, 'ceo');
    const sent = taskOf(await cfo.sendMessage(textMessage('For the CFO')));
    expect(await ceo.getTask({ tenant: '', id: sent.id }).catch(rpcError)).toEqual({ code: -32001 });
  });

  it('refuses anonymous calls with 401 and a Bearer challenge', async () => {
    const response = await fetch(`${server.url}/a2a/${randomUUID()}/cfo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
  });
});

describe('A2A: bad requests change nothing', () => {
  const send = (message: Record<string, unknown>) => ({
    jsonrpc: '2.0',
    id: 'r1',
    method: 'SendMessage',
    params: { message },
  });

  it.each([
    ['no parts', send({ messageId: 'm1', role: 'ROLE_USER', parts: [] }), -32602],
    ['no messageId', send({ role: 'ROLE_USER', parts: [{ text: 'hi' }] }), -32602],
    ['an agent’s message', send({ messageId: 'm2', role: 'ROLE_AGENT', parts: [{ text: 'hi' }] }), -32602],
    ['a data part', send({ messageId: 'm3', role: 'ROLE_USER', parts: [{ data: { a: 1 } }] }), -32005],
    [
      'text over the limit',
      send({ messageId: 'm4', role: 'ROLE_USER', parts: [{ text: 'x'.repeat(5000) }] }),
      -32602,
    ],
    [
      'a message to an existing task',
      send({ messageId: 'm5', role: 'ROLE_USER', taskId: randomUUID(), parts: [{ text: 'hi' }] }),
      -32004,
    ],
    ['an unknown method', { jsonrpc: '2.0', id: 'r1', method: 'message/send', params: {} }, -32601],
    ['GetTask without an id', { jsonrpc: '2.0', id: 'r1', method: 'GetTask', params: {} }, -32602],
    [
      'a push notification config without a task',
      { jsonrpc: '2.0', id: 'r1', method: 'CreateTaskPushNotificationConfig', params: {} },
      -32602,
    ],
    [
      'a push notification config in SendMessage',
      {
        jsonrpc: '2.0',
        id: 'r1',
        method: 'SendMessage',
        params: {
          message: { messageId: 'm6', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
          configuration: { taskPushNotificationConfig: { url: 'https://hooks.example.com/a2a' } },
        },
      },
      -32004,
    ],
  ])('answers %s with a JSON-RPC error', async (_name, body, code) => {
    const member = await t.caller(['member']);
    const answer = await postA2a(server, member, member.tenantId, 'cfo', body);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: 'r1', error: { code } });
    expect(await taskCount(member.tenantId)).toBe(0);
  });

  it.each([
    ['malformed JSON', '{"jsonrpc":', -32700],
    ['a batch', [{ jsonrpc: '2.0', id: 1, method: 'ListTasks' }], -32600],
    ['no jsonrpc version', { id: 1, method: 'ListTasks' }, -32600],
  ])('answers %s with 400 and a JSON-RPC error', async (_name, body, code) => {
    const member = await t.caller(['member']);
    const answer = await postA2a(server, member, member.tenantId, 'cfo', body);
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe(code);
  });

  it('refuses a body over the limit with 413 and a JSON-RPC error, queuing nothing', async () => {
    const member = await t.caller(['member']);
    const text = 'x'.repeat(2 * 1024 * 1024);
    const answer = await postA2a(
      server,
      member,
      member.tenantId,
      'cfo',
      send({ messageId: 'm7', role: 'ROLE_USER', parts: [{ text }] }),
    );
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    expect(await taskCount(member.tenantId)).toBe(0);
  });

  it('refuses a request whose tenant is not the path’s', async () => {
    const member = await t.caller(['member']);
    const answer = await postA2a(server, member, member.tenantId, 'cfo', {
      jsonrpc: '2.0',
      id: 'r1',
      method: 'SendMessage',
      params: {
        tenant: randomUUID(),
        message: { messageId: 'm8', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
      },
    });
    expect(answer.body.error.code).toBe(-32602);
    expect(await taskCount(member.tenantId)).toBe(0);
  });

  it('answers a message to a role the tenant does not have as invalid params, queuing nothing', async () => {
    const member = await t.caller(['member']);
    const answer = await postA2a(
      server,
      member,
      member.tenantId,
      'nobody',
      send({ messageId: 'm6', role: 'ROLE_USER', parts: [{ text: 'hi' }] }),
    );
    expect(answer.body.error.code).toBe(-32602);
    expect(await taskCount(member.tenantId)).toBe(0);
  });
});
