import type { StreamResponse, Task } from '@a2a-js/sdk';
import { TaskState } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { describe, expect, it } from 'vitest';
import { callerKey } from '../../src/rate-limit.js';
import type { RunningServer } from '../../src/server.js';
import { callTool, connectMcp } from '../mcp/mcp-support.js';
import type { TestApp } from '../support/app.js';
import { serveTestApp, shortLivedMember } from '../support/fixtures.js';
import { a2aClient, postA2a, textMessage } from './a2a-support.js';

let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app), { env: { MAX_STREAMS_PER_CALLER: '2' } });

const rpcError = (error: unknown) => ({ code: (error as { envelopeCode?: number }).envelopeCode });
const subscribe = (client: Client, id: string, signal?: AbortSignal) =>
  client.resubscribeTask({ tenant: '', id }, signal ? { signal } : undefined)[Symbol.asyncIterator]();
const held = (caller: { tenantId: string; sub: string }) => t.app.services.streams.held(callerKey(caller));

/** What an event says, for comparing a stream's order: its kind and state, or its artifact's name. */
function told(event: StreamResponse): string {
  const payload = event.payload;
  if (payload?.$case === 'task') return `task:${TaskState[payload.value.status?.state ?? 0]}`;
  if (payload?.$case === 'statusUpdate') return `status:${TaskState[payload.value.status?.state ?? 0]}`;
  if (payload?.$case === 'artifactUpdate') return `artifact:${payload.value.artifact?.name}`;
  return 'other';
}

/** The task a stream's first event carries. */
function taskIn(event: StreamResponse): Task {
  if (event.payload?.$case !== 'task') throw new Error(`not a task: ${told(event)}`);
  return event.payload.value;
}

async function next(stream: AsyncIterator<StreamResponse>): Promise<StreamResponse> {
  const step = await stream.next();
  if (step.done) throw new Error('the stream ended');
  return step.value;
}

/** Waits until the server has counted the caller's streams down to `count` (it sees a close a moment later). */
async function untilHeld(caller: { tenantId: string; sub: string }, count: number) {
  while (held(caller) > count) await new Promise((resolve) => setImmediate(resolve));
}

async function tenantWithAgent() {
  const member = await t.caller(['member']);
  const agent = await t.caller(['agent'], { tenantId: member.tenantId });
  return { member, agent, client: await a2aClient(server, member, member.tenantId, 'cfo') };
}

describe('A2A streaming: SendStreamingMessage', () => {
  it('advertises streaming on the card', async () => {
    const { client } = await tenantWithAgent();
    expect((await client.getAgentCard()).capabilities?.streaming).toBe(true);
  });

  it('streams submitted → working → the artifact → completed, and ends', async () => {
    const { member, agent, client } = await tenantWithAgent();
    const stream = client.sendMessageStream(textMessage('Close the books'))[Symbol.asyncIterator]();
    const first = await next(stream);
    expect(told(first)).toBe('task:TASK_STATE_SUBMITTED');
    const taskId = taskIn(first).id;

    const mcp = await connectMcp(server, agent);
    const claimed = (await callTool(mcp, 'claim_next_task', { role: 'cfo' })).structuredContent.claimNextTask;
    expect(claimed.task.id).toBe(taskId);
    expect(told(await next(stream))).toBe('status:TASK_STATE_WORKING');

    await callTool(mcp, 'complete_task', { taskId, output: 'Books closed.', tokensUsed: 10, costUsd: 0.001 });
    await mcp.close();
    const artifact = await next(stream);
    expect(told(artifact)).toBe('artifact:output');
    expect(artifact.payload?.value).toMatchObject({
      taskId,
      artifact: { parts: [{ content: { $case: 'text', value: 'Books closed.' } }] },
      lastChunk: true,
    });
    const completed = await next(stream);
    expect(told(completed)).toBe('status:TASK_STATE_COMPLETED');
    expect(completed.payload?.value).toMatchObject({
      taskId,
      contextId: taskIn(first).contextId,
    });
    expect((await stream.next()).done).toBe(true);
    await untilHeld(member, 0);
  });

  it('queues nothing and opens nothing for a message refused', async () => {
    const { member, client } = await tenantWithAgent();
    const message = textMessage('x'.repeat(5000));
    const refused = await next(client.sendMessageStream(message)[Symbol.asyncIterator]()).catch(rpcError);
    expect(refused).toEqual({ code: -32602 });
    expect(await t.db.prisma.task.count({ where: { tenantId: member.tenantId } })).toBe(0);
    expect(held(member)).toBe(0);
  });
});

describe('A2A streaming: SubscribeToTask', () => {
  it('answers the task, then its cancellation, and ends', async () => {
    const { client } = await tenantWithAgent();
    const sent = (await client.sendMessage(textMessage('Never mind'))) as Task;
    const stream = subscribe(client, sent.id);
    expect(told(await next(stream))).toBe('task:TASK_STATE_SUBMITTED');
    await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    expect(told(await next(stream))).toBe('status:TASK_STATE_CANCELED');
    expect((await stream.next()).done).toBe(true);
  });

  it('refuses a task that has ended as an unsupported operation, with its final state', async () => {
    const { member, client } = await tenantWithAgent();
    const sent = (await client.sendMessage(textMessage('Never mind'))) as Task;
    await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    const answer = await postA2a(server, member, member.tenantId, 'cfo', {
      jsonrpc: '2.0',
      id: 7,
      method: 'SubscribeToTask',
      params: { id: sent.id },
    });
    expect(answer.body).toMatchObject({
      id: 7,
      error: { code: -32004, data: { taskId: sent.id, state: 'TASK_STATE_CANCELED' } },
    });
    expect(held(member)).toBe(0);
  });

  it('answers another tenant’s task (and another role’s) as not found, holding no slot', async () => {
    const { client } = await tenantWithAgent();
    const sent = (await client.sendMessage(textMessage('Private'))) as Task;
    const stranger = await t.caller(['chairman']);
    const strangerClient = await a2aClient(server, stranger, stranger.tenantId, 'cfo');
    expect(await next(subscribe(strangerClient, sent.id)).catch(rpcError)).toEqual({ code: -32001 });
    expect(held(stranger)).toBe(0);
    const member = await t.caller(['member']);
    const ceo = await a2aClient(server, member, member.tenantId, 'ceo');
    expect(await next(subscribe(ceo, sent.id)).catch(rpcError)).toEqual({ code: -32001 });
  });

  it('answers a task outside a role-bound token’s roles as not found, holding no slot', async () => {
    const { member, client } = await tenantWithAgent();
    const sent = (await client.sendMessage(textMessage('For the CFO only'))) as Task;
    const ceoAgent = await t.caller(['agent'], { tenantId: member.tenantId, agentRoles: ['ceo'] });
    const asCeoAgent = await a2aClient(server, ceoAgent, member.tenantId, 'cfo');
    expect(await next(subscribe(asCeoAgent, sent.id)).catch(rpcError)).toEqual({ code: -32001 });
    expect(held(ceoAgent)).toBe(0);
  });

  it('holds one stream slot per stream: beyond the caller’s limit 429, and a closed one frees its slot', async () => {
    const { member, client } = await tenantWithAgent();
    const sent = (await client.sendMessage(textMessage('Watch me'))) as Task;
    const aborts = [new AbortController(), new AbortController()];
    const streams = aborts.map((abort) => subscribe(client, sent.id, abort.signal));
    for (const stream of streams) expect(told(await next(stream))).toBe('task:TASK_STATE_SUBMITTED');
    expect(held(member)).toBe(2);

    const refused = await fetch(`${server.url}/a2a/${member.tenantId}/cfo`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${member.token}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'SubscribeToTask', params: { id: sent.id } }),
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expect((await refused.json()).error).toMatchObject({ code: -32000, data: { code: 'RATE_LIMITED' } });

    aborts[0]?.abort();
    await streams[0]?.next().catch(() => undefined);
    await untilHeld(member, 1);
    const again = subscribe(client, sent.id);
    expect(told(await next(again))).toBe('task:TASK_STATE_SUBMITTED');
    await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    expect(told(await next(again))).toBe('status:TASK_STATE_CANCELED');
    expect((await again.next()).done).toBe(true);
    aborts[1]?.abort();
    await untilHeld(member, 0);
  });

  it('ends with an error event when the caller’s token expires, giving its slot back', async () => {
    const member = await shortLivedMember('2s');
    const client = await a2aClient(server, member, member.tenantId, 'cfo');
    const sent = (await client.sendMessage(textMessage('Slow work'))) as Task;
    const stream = subscribe(client, sent.id);
    expect(told(await next(stream))).toBe('task:TASK_STATE_SUBMITTED');
    const ended = await stream.next().catch((error: Error) => error);
    expect(ended).toBeInstanceOf(Error);
    expect((ended as Error).message).toContain('Token has expired');
    await untilHeld(member, 0);
  });
});
