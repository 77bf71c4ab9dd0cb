import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  PRIVATE_HOST,
  queueTask,
  RECORDED,
  type Receiver,
  receiverOptions,
  signedWith,
  startReceiver,
} from './webhooks-support.js';

let receiver: Receiver;
let t: TestApp;

beforeAll(async () => {
  const started = await startReceiver();
  receiver = started.receiver;
  t = await createTestApp(receiverOptions(started));
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
});

const FIELDS = 'id taskId role url notificationToken status';
const CREATE = `mutation Create($input: CreateTaskWebhookInput!) {
  createTaskWebhook(input: $input) { secret webhook { ${FIELDS} } }
}`;
const LIST = `query List($taskId: ID!, $role: String) { taskWebhooks(taskId: $taskId, role: $role) { ${FIELDS} } }`;
const ONE = `query One($taskId: ID!, $id: ID!) { taskWebhook(taskId: $taskId, id: $id) { ${FIELDS} } }`;
const DELETE = `mutation Delete($taskId: ID!, $id: ID!) { deleteTaskWebhook(taskId: $taskId, id: $id) { id } }`;
const CLAIM = `mutation Claim($role: String!) { claimNextTask(role: $role) { task { id } } }`;

const codeOf = (result: { errors?: readonly { extensions?: Record<string, unknown> }[] }) =>
  result.errors?.[0]?.extensions?.code;
const rowsOf = (taskId: string) => t.db.prisma.webhook.count({ where: { taskId } });

let paths = 0;
function hook() {
  paths += 1;
  const path = `/task-hooks/${paths}`;
  const tokens: string[] = [];
  receiver.answer(path, (_delivery, response, request) => {
    tokens.push(String(request.headers['x-a2a-notification-token'] ?? ''));
    response.writeHead(200).end();
  });
  return { path, url: receiver.url(path), tokens };
}

describe('task webhooks over GraphQL', () => {
  it('delivers the task’s status changes, signed, with the token; lists, reads and deletes', async () => {
    const member = await t.caller(['member']);
    const agent = await t.caller(['agent'], { tenantId: member.tenantId });
    const taskId = await queueTask(t, member, 'cfo');
    const target = hook();
    const created = await t.graphql<any, unknown>(
      CREATE,
      { input: { taskId, role: 'CFO', url: target.url, token: 'tok' } },
      member,
    );
    expect(created.errors).toBeUndefined();
    const { secret, webhook } = created.data.createTaskWebhook;
    expect(webhook).toMatchObject({ taskId, role: null, url: target.url, notificationToken: 'tok' });

    const claimed = await t.graphql<any, unknown>(CLAIM, { role: 'cfo' }, agent);
    expect(claimed.data.claimNextTask.task.id).toBe(taskId);
    // The queuing may reach it too, when the relay published it after the webhook was made.
    const stateOf = (body: string) => JSON.parse(body).statusUpdate.status.state;
    await vi.waitFor(() => {
      const states = receiver.received(target.path).map((each) => stateOf(each.body));
      expect(states.at(-1)).toBe('TASK_STATE_WORKING');
    }, RECORDED);
    const received = receiver.received(target.path);
    expect(
      received.map((each) => stateOf(each.body)).filter((state) => state !== 'TASK_STATE_SUBMITTED'),
    ).toEqual(['TASK_STATE_WORKING']);
    for (const delivery of received) {
      expect(signedWith(delivery, secret)).toBe(true);
      expect(JSON.parse(delivery.body).statusUpdate.taskId).toBe(taskId);
    }
    expect(new Set(target.tokens)).toEqual(new Set(['tok']));

    const listed = await t.graphql<any, unknown>(LIST, { taskId }, member);
    expect(listed.data.taskWebhooks.map((each: { id: string }) => each.id)).toEqual([webhook.id]);
    const ofOtherRole = await t.graphql<any, unknown>(LIST, { taskId, role: 'ceo' }, member);
    expect(ofOtherRole.data.taskWebhooks).toEqual([]);
    const one = await t.graphql<any, unknown>(ONE, { taskId, id: webhook.id }, member);
    expect(one.data.taskWebhook.id).toBe(webhook.id);
    const deleted = await t.graphql<any, unknown>(DELETE, { taskId, id: webhook.id }, member);
    expect(deleted.data.deleteTaskWebhook.id).toBe(webhook.id);
    expect(await rowsOf(taskId)).toBe(0);
    const audit = await t.db.prisma.auditEntry.findMany({
      where: { tenantId: member.tenantId, targetId: webhook.id },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit.map((row) => row.action)).toEqual(['webhook.created', 'webhook.deleted']);
  });

  it('keeps an agent token bound to other roles, other tenants and anonymous callers out', async () => {
    const member = await t.caller(['member']);
    const taskId = await queueTask(t, member, 'cfo');
    const bound = await t.caller(['agent'], { tenantId: member.tenantId, agentRoles: ['ceo'] });
    const stranger = await t.caller(['member']);
    for (const caller of [bound, stranger]) {
      const result = await t.graphql<any, unknown>(CREATE, { input: { taskId, url: hook().url } }, caller);
      expect(codeOf(result)).toBe('NOT_FOUND');
    }
    expect(codeOf(await t.graphql<any, unknown>(CREATE, { input: { taskId, url: hook().url } }, null))).toBe(
      'UNAUTHENTICATED',
    );
    expect(await rowsOf(taskId)).toBe(0);

    const created = await t.graphql<any, unknown>(CREATE, { input: { taskId, url: hook().url } }, member);
    const id = created.data.createTaskWebhook.webhook.id;
    for (const caller of [bound, stranger]) {
      expect((await t.graphql<any, unknown>(LIST, { taskId }, caller)).data.taskWebhooks).toEqual([]);
      expect(codeOf(await t.graphql<any, unknown>(ONE, { taskId, id }, caller))).toBe('NOT_FOUND');
      expect(codeOf(await t.graphql<any, unknown>(DELETE, { taskId, id }, caller))).toBe('NOT_FOUND');
    }
    // Its own task's id with another task's webhook: not found either.
    const otherTask = await queueTask(t, member, 'cfo');
    expect(codeOf(await t.graphql<any, unknown>(DELETE, { taskId: otherTask, id }, member))).toBe(
      'NOT_FOUND',
    );
    expect(await rowsOf(taskId)).toBe(1);
  });

  it.each([
    ['plain http', 'http://hooks.acme-payments.com/x'],
    ['a private host', `https://${PRIVATE_HOST}/x`],
    ['no URL', 'not a url'],
  ])('refuses %s, storing nothing', async (_name, url) => {
    const member = await t.caller(['member']);
    const taskId = await queueTask(t, member, 'cfo');
    const result = await t.graphql<any, unknown>(CREATE, { input: { taskId, url } }, member);
    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(await rowsOf(taskId)).toBe(0);
  });

  it('refuses an eleventh webhook of a task and a task that does not exist', async () => {
    const member = await t.caller(['member']);
    const taskId = await queueTask(t, member, 'cfo');
    for (let i = 0; i < 10; i += 1) {
      const result = await t.graphql<any, unknown>(CREATE, { input: { taskId, url: hook().url } }, member);
      expect(result.errors).toBeUndefined();
    }
    const eleventh = await t.graphql<any, unknown>(CREATE, { input: { taskId, url: hook().url } }, member);
    expect(codeOf(eleventh)).toBe('CONFLICT');
    expect(await rowsOf(taskId)).toBe(10);
    const none = await t.graphql<any, unknown>(
      CREATE,
      { input: { taskId: randomUUID(), url: hook().url } },
      member,
    );
    expect(codeOf(none)).toBe('NOT_FOUND');
  });
});
