import { randomUUID } from 'node:crypto';
import {
  StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
  TaskState,
  taskStateToJSON,
} from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import { callTool, connectMcp } from '../mcp/mcp-support.js';
import {
  createWebhook,
  nth,
  PRIVATE_HOST,
  RECEIVER_HOST,
  RECORDED,
  type Receiver,
  receiverOptions,
  signedWith,
  startReceiver,
} from '../schema/webhooks-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { serveTestApp } from '../support/fixtures.js';
import { a2aClient, postA2a, textMessage } from './a2a-support.js';

const started = await startReceiver();
const receiver: Receiver = started.receiver;
// Registered before the app's, so it runs after them.
afterAll(() => receiver.close());
let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app), receiverOptions(started));

const rpcError = (error: unknown) => ({ code: (error as { envelopeCode?: number }).envelopeCode });

let paths = 0;
/** A fresh receiver path that records each request's X-A2A-Notification-Token. */
function hook(): { path: string; url: string; tokens: string[] } {
  paths += 1;
  const path = `/a2a-push/${paths}`;
  const tokens: string[] = [];
  receiver.answer(path, (_delivery, response, request) => {
    tokens.push(String(request.headers['x-a2a-notification-token'] ?? ''));
    response.writeHead(200).end('ok');
  });
  return { path, url: receiver.url(path), tokens };
}

interface Tenant {
  member: Caller;
  agent: Caller;
  client: Client;
}

async function tenant(): Promise<Tenant> {
  const member = await t.caller(['member']);
  const agent = await t.caller(['agent'], { tenantId: member.tenantId });
  return { member, agent, client: await a2aClient(server, member, member.tenantId, 'cfo') };
}

async function send(client: Client, text = 'Close the books'): Promise<Task> {
  // The client answers the payload itself: the task SendMessage queued.
  const task = (await client.sendMessage(textMessage(text))) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
  return task;
}

const config = (taskId: string, url: string, token = ''): TaskPushNotificationConfig => ({
  tenant: '',
  id: '',
  taskId,
  url,
  token,
  authentication: undefined,
});

const webhooksOf = (taskId: string) => t.db.prisma.webhook.count({ where: { taskId } });

/** The agent claims the tenant's next CFO task over MCP, and completes it when `complete`. */
async function work(agent: Caller, taskId: string, complete: boolean): Promise<void> {
  const mcp = await connectMcp(server, agent);
  const claimed = (await callTool(mcp, 'claim_next_task', { role: 'cfo' })).structuredContent.claimNextTask;
  expect(claimed.task.id).toBe(taskId);
  if (complete) {
    await callTool(mcp, 'complete_task', { taskId, output: 'Books closed.', tokensUsed: 1, costUsd: 0.001 });
  }
  await mcp.close();
}

/**
 * A task sent after a tenant-wide webhook was registered, once the relay has published its queuing (the
 * tenant webhook got its task.queued): updates from then on reach the configs made next.
 */
async function queuedTask(member: Caller, client: Client) {
  const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
  const tenantHook = hook();
  await createWebhook(t, chairman, { url: tenantHook.url });
  const task = await send(client);
  const received = await receiver.waitFor(tenantHook.path, 1);
  expect(nth(received).payload).toMatchObject({ type: 'task.queued', data: { task_id: task.id } });
  return { task, tenantHook };
}

describe('A2A push notifications', () => {
  it('says so on the card', async () => {
    const { client } = await tenant();
    expect((await client.getAgentCard()).capabilities?.pushNotifications).toBe(true);
  });

  it('delivers the task’s status updates signed, with the client’s token, and nothing else', async () => {
    const { member, agent, client } = await tenant();
    const { task, tenantHook } = await queuedTask(member, client);

    const target = hook();
    const created = await client.createTaskPushNotificationConfig(
      config(task.id, target.url, 'client-token-1'),
    );
    expect(created).toMatchObject({ taskId: task.id, url: target.url, token: 'client-token-1' });
    expect(created.id).not.toBe('');
    expect(created.authentication?.scheme).toBe('standard-webhooks');
    const secret = created.authentication?.credentials ?? '';
    expect(secret).toMatch(/^whsec_/);

    // Another task of the role: its updates never reach this task's config.
    const other = await send(client, 'Another task');
    await work(agent, task.id, true);

    const received = await receiver.waitFor(target.path, 2);
    expect(received).toHaveLength(2);
    for (const delivery of received) expect(signedWith(delivery, secret)).toBe(true);
    expect(target.tokens).toEqual(['client-token-1', 'client-token-1']);
    const updates = received.map((delivery) => StreamResponse.fromJSON(JSON.parse(delivery.body)));
    expect(updates.map((update) => update.payload?.$case)).toEqual(['statusUpdate', 'statusUpdate']);
    const states = updates.map((update) =>
      update.payload?.$case === 'statusUpdate'
        ? taskStateToJSON(update.payload.value.status?.state ?? 0)
        : '',
    );
    expect(states).toEqual([
      taskStateToJSON(TaskState.TASK_STATE_WORKING),
      taskStateToJSON(TaskState.TASK_STATE_COMPLETED),
    ]);
    for (const update of updates) {
      expect(update.payload?.value).toMatchObject({ taskId: task.id, contextId: task.contextId });
    }
    // No text in a body: the state and times only.
    for (const delivery of received) expect(delivery.body).not.toContain('Books closed');

    // Only status updates of this task were queued for it.
    const rows = await t.db.prisma.webhookDelivery.findMany({ where: { webhookId: created.id } });
    expect(rows.map((row) => row.eventType)).toEqual(['task.status_update', 'task.status_update']);
    expect(await t.db.prisma.webhook.count({ where: { taskId: other.id } })).toBe(0);
    // The tenant's webhook is as it was: the other task's queuing, no status update.
    const told = await receiver.waitFor(tenantHook.path, 2);
    expect(told.map((delivery) => [delivery.payload.type, delivery.payload.data.task_id])).toEqual([
      ['task.queued', task.id],
      ['task.queued', other.id],
    ]);
  });

  it('gets, lists and deletes configs; a deleted one gets no more deliveries', async () => {
    const { member, agent, client } = await tenant();
    const { task } = await queuedTask(member, client);
    const first = hook();
    const second = hook();
    const a = await client.createTaskPushNotificationConfig(config(task.id, first.url, 'tok-a'));
    const b = await client.createTaskPushNotificationConfig(config(task.id, second.url));

    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: a.id });
    // The secret is answered once, on creation.
    expect(got).toEqual({ ...a, authentication: undefined });
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs.map((each) => each.id)).toEqual([a.id, b.id]);
    expect(listed.configs.every((each) => each.authentication === undefined)).toBe(true);

    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: a.id });
    expect(
      await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: a.id }).catch(rpcError),
    ).toEqual({ code: -32001 });
    expect(
      await client
        .deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: a.id })
        .catch(rpcError),
    ).toEqual({ code: -32001 });
    const after = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(after.configs.map((each) => each.id)).toEqual([b.id]);

    await work(agent, task.id, false);
    const [working] = await receiver.waitFor(second.path, 1);
    // The update was queued for the remaining config alone: the deleted one has no delivery of it.
    const payload = JSON.parse(working?.body ?? '{}');
    expect(payload.statusUpdate.taskId).toBe(task.id);
    await vi.waitFor(async () => {
      const rows = await t.db.prisma.webhookDelivery.findMany({ where: { tenantId: member.tenantId } });
      const ofTask = rows.filter((row) => row.eventType === 'task.status_update');
      expect(ofTask.map((row) => row.webhookId)).toEqual([b.id]);
      expect(ofTask[0]?.status).toBe('delivered');
    }, RECORDED);
    expect(first.tokens).toEqual([]);
  });

  it.each([
    ['a URL that is not http(s)', 'ftp://hooks.example.com/a2a'],
    ['a plain http URL', `http://${RECEIVER_HOST}/a2a`],
    ['a host the egress rules refuse', `https://${PRIVATE_HOST}/a2a`],
    ['a loopback address', 'https://127.0.0.1:1/a2a'],
  ])('refuses %s with a JSON-RPC error, storing nothing', async (_name, url) => {
    const { client } = await tenant();
    const task = await send(client);
    expect(await client.createTaskPushNotificationConfig(config(task.id, url)).catch(rpcError)).toEqual({
      code: -32602,
    });
    expect(await webhooksOf(task.id)).toBe(0);
  });

  it('refuses a client’s own authentication, storing nothing', async () => {
    const { client } = await tenant();
    const task = await send(client);
    const answer = await client
      .createTaskPushNotificationConfig({
        ...config(task.id, hook().url),
        authentication: { scheme: 'Bearer', credentials: 'theirs' },
      })
      .catch(rpcError);
    expect(answer).toEqual({ code: -32602 });
    expect(await webhooksOf(task.id)).toBe(0);
  });

  it('answers TaskNotFound for another tenant’s task, another role’s and none, storing nothing', async () => {
    const owner = await tenant();
    const task = await send(owner.client);
    const stranger = await tenant();
    const ceo = await a2aClient(server, owner.member, owner.member.tenantId, 'ceo');
    for (const client of [stranger.client, ceo]) {
      expect(
        await client.createTaskPushNotificationConfig(config(task.id, hook().url)).catch(rpcError),
      ).toEqual({ code: -32001 });
    }
    expect(
      await owner.client.createTaskPushNotificationConfig(config(randomUUID(), hook().url)).catch(rpcError),
    ).toEqual({ code: -32001 });
    expect(await webhooksOf(task.id)).toBe(0);

    // The owner's config is invisible to the others.
    const created = await owner.client.createTaskPushNotificationConfig(config(task.id, hook().url));
    for (const client of [stranger.client, ceo]) {
      expect(
        await client
          .getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id })
          .catch(rpcError),
      ).toEqual({ code: -32001 });
      expect(
        await client
          .listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })
          .catch(rpcError),
      ).toEqual({ code: -32001 });
      expect(
        await client
          .deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id })
          .catch(rpcError),
      ).toEqual({ code: -32001 });
    }
    expect(await webhooksOf(task.id)).toBe(1);
  });

  it('refuses anonymous callers with 401, storing nothing', async () => {
    const { member, client } = await tenant();
    const task = await send(client);
    const answer = await postA2a(server, null, member.tenantId, 'cfo', {
      jsonrpc: '2.0',
      id: 1,
      method: 'CreateTaskPushNotificationConfig',
      params: { taskId: task.id, url: hook().url },
    });
    expect(answer.status).toBe(401);
    expect(await webhooksOf(task.id)).toBe(0);
  });

  it('deletes a task’s configs with the task', async () => {
    const { client } = await tenant();
    const task = await send(client);
    await client.createTaskPushNotificationConfig(config(task.id, hook().url));
    expect(await webhooksOf(task.id)).toBe(1);
    await t.db.prisma.task.delete({ where: { id: task.id } });
    expect(await webhooksOf(task.id)).toBe(0);
  });
});
