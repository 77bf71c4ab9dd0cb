import { randomUUID } from 'node:crypto';
import { type StreamResponse, type Task, type TaskPushNotificationConfig, TaskState } from '@a2a-js/sdk';
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { afterAll, describe, expect, it } from 'vitest';
import { refusalResponse } from '../../src/errors.js';
import type { RunningServer } from '../../src/server.js';
import { callTool, connectMcp } from '../mcp/mcp-support.js';
import { type Receiver, receiverOptions, startReceiver } from '../schema/webhooks-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { serveTestApp, shortLivedMember } from '../support/fixtures.js';
import { fetchAs, postA2a, roleUrl, textMessage } from './a2a-support.js';

const started = await startReceiver();
const receiver: Receiver = started.receiver;
// Registered before the app's, so it runs after them.
afterAll(() => receiver.close());
let t: TestApp;
let server: RunningServer;
serveTestApp((app) => ({ t, server } = app), receiverOptions(started));

const taskCount = (tenantId: string) => t.db.prisma.task.count({ where: { tenantId } });
/** What the SDK's REST client makes of an error answer: its error class and the HTTP status. */
const restError = (error: unknown) => ({
  name: (error as Error).name,
  status: (error as { statusCode?: number }).statusCode,
});

/** The SDK's client of a role over HTTP+JSON, from its discovered card; `urls` records what it fetched. */
async function restClient(caller: Caller | null, tenantId: string, role = 'cfo') {
  const urls: string[] = [];
  const authenticated = fetchAs(caller);
  const fetchImpl: typeof fetch = (input, init) => {
    urls.push(`${init?.method ?? 'GET'} ${String(input)}`);
    return authenticated(input, init);
  };
  const factory = new ClientFactory({
    transports: [new RestTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    preferredTransports: ['HTTP+JSON'],
  });
  const client = await factory.createFromUrl(roleUrl(server, tenantId, role));
  return { client, urls };
}

async function tenant() {
  const member = await t.caller(['member']);
  const agent = await t.caller(['agent'], { tenantId: member.tenantId });
  const { client, urls } = await restClient(member, member.tenantId);
  return { member, agent, client, urls };
}

const send = async (client: Client, text = 'Close the books') =>
  (await client.sendMessage(textMessage(text))) as Task;

/** The agent claims the tenant's next CFO task over MCP, and completes it when `output` is given. */
async function work(agent: Caller, taskId: string, output?: string) {
  const mcp = await connectMcp(server, agent);
  const claimed = (await callTool(mcp, 'claim_next_task', { role: 'cfo' })).structuredContent.claimNextTask;
  expect(claimed.task.id).toBe(taskId);
  if (output) {
    const completed = await callTool(mcp, 'complete_task', { taskId, output, tokensUsed: 1, costUsd: 0.001 });
    expect(completed.isError).toBeFalsy();
  }
  await mcp.close();
}

const listParams = (pageSize: number, pageToken = '', status = TaskState.TASK_STATE_UNSPECIFIED) => ({
  tenant: '',
  contextId: '',
  status,
  pageSize,
  pageToken,
  statusTimestampAfter: undefined,
  includeArtifacts: false,
});

/** A raw request to a role's HTTP+JSON binding (what no SDK client would send). */
async function rest(
  caller: Caller | null,
  tenantId: string,
  path: string,
  init: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const response = await fetchAs(caller)(`${server.url}/a2a/${tenantId}/cfo/rest${path}`, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...init.headers },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, body };
}

const sendBody = (message: Record<string, unknown>) => JSON.stringify({ message });

describe('A2A HTTP+JSON: discovery', () => {
  it('advertises the binding beside JSON-RPC, and the SDK’s REST client uses it', async () => {
    const { member, client, urls } = await tenant();
    const card = await client.getAgentCard();
    expect(card.skills.map((skill) => skill.id)).toEqual(['cfo']);
    expect(
      card.supportedInterfaces.map(({ url, protocolBinding, tenant }) => ({ url, protocolBinding, tenant })),
    ).toEqual([
      {
        url: `${server.url}/a2a/${member.tenantId}/cfo`,
        protocolBinding: 'JSONRPC',
        tenant: member.tenantId,
      },
      {
        url: `${server.url}/a2a/${member.tenantId}/cfo/rest`,
        protocolBinding: 'HTTP+JSON',
        tenant: member.tenantId,
      },
    ]);
    // The extended card came over the binding, the tenant before the path as the SDK's client writes it.
    expect(urls.at(-1)).toBe(
      `GET ${server.url}/a2a/${member.tenantId}/cfo/rest/${member.tenantId}/extendedAgentCard`,
    );
  });

  it('serves the paths without the tenant before them too', async () => {
    const member = await t.caller(['member']);
    const answer = await rest(member, member.tenantId, '/extendedAgentCard');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
    expect(answer.body.skills).toMatchObject([{ id: 'cfo' }]);
  });
});

describe('A2A HTTP+JSON: tasks', () => {
  it('sends the CFO work, an agent completes it over MCP, and GetTask answers it completed with the artifact', async () => {
    const { member, agent, client, urls } = await tenant();
    const sent = await send(client, 'Summarise last quarter’s cash flow.');
    expect(urls.at(-1)).toBe(
      `POST ${server.url}/a2a/${member.tenantId}/cfo/rest/${member.tenantId}/message:send`,
    );
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    await work(agent, sent.id, 'Cash flow was positive: 1.2 M.');
    const done = await client.getTask({ tenant: '', id: sent.id, historyLength: 1 });
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts).toMatchObject([
      { name: 'output', parts: [{ content: { $case: 'text', value: 'Cash flow was positive: 1.2 M.' } }] },
    ]);
    expect(done.history).toHaveLength(1);
  });

  it('answers ListTasks with the total of every page, on both bindings', async () => {
    const { member, agent, client } = await tenant();
    const first = await send(client, 'One');
    const second = await send(client, 'Two');
    const third = await send(client, 'Three');
    await work(agent, first.id, 'Done.');

    const page1 = await client.listTasks(listParams(2));
    expect(page1.tasks.map((task) => task.id)).toEqual([third.id, second.id]);
    expect(page1).toMatchObject({ pageSize: 2, totalSize: 3 });
    expect(page1.nextPageToken).not.toBe('');
    const page2 = await client.listTasks(listParams(2, page1.nextPageToken));
    expect(page2.tasks.map((task) => task.id)).toEqual([first.id]);
    expect(page2).toMatchObject({ totalSize: 3, nextPageToken: '' });
    const submitted = await client.listTasks(listParams(1, '', TaskState.TASK_STATE_SUBMITTED));
    expect(submitted).toMatchObject({ totalSize: 2 });
    expect(submitted.tasks).toHaveLength(1);

    const rpc = await postA2a(server, member, member.tenantId, 'cfo', {
      jsonrpc: '2.0',
      id: 1,
      method: 'ListTasks',
      params: { pageSize: 1 },
    });
    expect(rpc.body.result).toMatchObject({ pageSize: 1, totalSize: 3 });
    expect(rpc.body.result.tasks).toHaveLength(1);
  });

  it('writes every field of ListTasks, defaults included, as the SDK’s server does', async () => {
    const member = await t.caller(['member']);
    const answer = await rest(member, member.tenantId, '/tasks?pageSize=5&includeArtifacts=true');
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ tasks: [], nextPageToken: '', pageSize: 5, totalSize: 0 });
  });

  it('cancels a task, and refuses to cancel it again as not cancelable', async () => {
    const { client } = await tenant();
    const sent = await send(client, 'Never mind');
    const cancelled = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const again = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined }).catch(restError);
    expect(again).toEqual({ name: 'TaskNotCancelableError', status: 400 });
  });
});

describe('A2A HTTP+JSON: streaming', () => {
  const told = (event: StreamResponse) => {
    const payload = event.payload;
    if (payload?.$case === 'task') return `task:${TaskState[payload.value.status?.state ?? 0]}`;
    if (payload?.$case === 'statusUpdate') return `status:${TaskState[payload.value.status?.state ?? 0]}`;
    return `${payload?.$case}`;
  };

  it('streams message:stream from submitted to completed, and ends', async () => {
    const { agent, client } = await tenant();
    const stream = client.sendMessageStream(textMessage('Stream the books'))[Symbol.asyncIterator]();
    const first = await stream.next();
    const task = first.value?.payload?.$case === 'task' ? first.value.payload.value : undefined;
    expect(task?.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    await work(agent, task?.id as string, 'Streamed.');
    const events: string[] = [];
    for (let step = await stream.next(); !step.done; step = await stream.next())
      events.push(told(step.value));
    expect(events).toEqual(['status:TASK_STATE_WORKING', 'artifactUpdate', 'status:TASK_STATE_COMPLETED']);
  });

  it('subscribes to a task that has not ended, and refuses one that has', async () => {
    const { agent, client } = await tenant();
    const sent = await send(client);
    const stream = client.resubscribeTask({ tenant: '', id: sent.id })[Symbol.asyncIterator]();
    expect(told((await stream.next()).value as StreamResponse)).toBe('task:TASK_STATE_SUBMITTED');
    await work(agent, sent.id, 'Done.');
    const events: string[] = [];
    for (let step = await stream.next(); !step.done; step = await stream.next())
      events.push(told(step.value));
    expect(events.at(-1)).toBe('status:TASK_STATE_COMPLETED');

    const ended = client.resubscribeTask({ tenant: '', id: sent.id })[Symbol.asyncIterator]();
    expect(await ended.next().catch(restError)).toEqual({ name: 'UnsupportedOperationError', status: 400 });
  });
});

describe('A2A HTTP+JSON: a stream’s end at the token’s expiry', () => {
  it('ends with an error event in the binding’s error body', async () => {
    const member = await shortLivedMember('2s');
    const sent = await send((await restClient(member, member.tenantId)).client, 'Slow work');
    const response = await fetchAs(member)(
      `${server.url}/a2a/${member.tenantId}/cfo/rest/tasks/${sent.id}:subscribe`,
    );
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = (await response.text())
      .split('\n\n')
      .filter((event) => event.startsWith('data:') || event.startsWith('event:'));
    expect(JSON.parse(events[0]?.slice('data: '.length) ?? '')).toMatchObject({ task: { id: sent.id } });
    const last = events.at(-1) ?? '';
    expect(last.startsWith('event: error\n')).toBe(true);
    expect(JSON.parse(last.split('\n')[1]?.slice('data: '.length) ?? '')).toEqual({
      error: {
        code: 401,
        status: 'UNAUTHENTICATED',
        message: expect.stringContaining('Token has expired'),
        details: [expect.objectContaining({ reason: 'UNAUTHENTICATED', domain: 'boardroom' })],
      },
    });
  });
});

describe('A2A HTTP+JSON: push notification configs', () => {
  const config = (taskId: string, token = ''): TaskPushNotificationConfig => ({
    tenant: '',
    id: '',
    taskId,
    url: receiver.url('/a2a-rest-push'),
    token,
    authentication: undefined,
  });

  it('creates (201, with its secret), gets, lists and deletes (204) a config', async () => {
    const { member, client } = await tenant();
    const task = await send(client);
    const created = await client.createTaskPushNotificationConfig(config(task.id, 'mine'));
    expect(created).toMatchObject({ taskId: task.id, token: 'mine' });
    expect(created.authentication?.credentials).toMatch(/^whsec_/);
    const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
    expect(got).toMatchObject({ id: created.id, taskId: task.id, token: 'mine', authentication: undefined });
    const listed = await client.listTaskPushNotificationConfig({
      tenant: '',
      taskId: task.id,
      pageSize: 0,
      pageToken: '',
    });
    expect(listed.configs.map((each) => each.id)).toEqual([created.id]);
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
    expect(await t.db.prisma.webhook.count({ where: { taskId: task.id } })).toBe(0);

    const raw = await rest(member, member.tenantId, `/tasks/${task.id}/pushNotificationConfigs`, {
      method: 'POST',
      body: JSON.stringify({ url: receiver.url('/a2a-rest-push') }),
    });
    expect(raw.status).toBe(201);
    const deleted = await rest(
      member,
      member.tenantId,
      `/tasks/${task.id}/pushNotificationConfigs/${raw.body.id}`,
      {
        method: 'DELETE',
      },
    );
    expect(deleted).toMatchObject({ status: 204, body: '' });
    const gone = await client
      .getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: raw.body.id })
      .catch(restError);
    expect(gone).toEqual({ name: 'TaskNotFoundError', status: 404 });
  });
});

describe('A2A HTTP+JSON: tenant isolation', () => {
  it('answers another tenant’s path 404, and its tasks as not found through one’s own, changing nothing', async () => {
    const owner = await tenant();
    const sent = await send(owner.client, 'Private numbers');
    const stranger = await t.caller(['chairman']);

    for (const [method, path] of [
      ['GET', `/tasks/${sent.id}`],
      ['GET', '/tasks'],
      ['POST', `/tasks/${sent.id}:cancel`],
    ] as const) {
      const answer = await rest(stranger, owner.member.tenantId, path, { method });
      expect(answer).toMatchObject({ status: 404, body: { error: { code: 404, status: 'NOT_FOUND' } } });
      expect(JSON.stringify(answer.body)).not.toContain('Private');
    }
    const { client } = await restClient(stranger, stranger.tenantId);
    expect(await client.getTask({ tenant: '', id: sent.id }).catch(restError)).toEqual({
      name: 'TaskNotFoundError',
      status: 404,
    });
    expect(
      await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined }).catch(restError),
    ).toEqual({
      name: 'TaskNotFoundError',
      status: 404,
    });
    expect(await client.createTaskPushNotificationConfig(config(sent.id)).catch(restError)).toEqual({
      name: 'TaskNotFoundError',
      status: 404,
    });
    expect((await client.listTasks(listParams(10))).totalSize).toBe(0);
    expect((await owner.client.getTask({ tenant: '', id: sent.id })).status?.state).toBe(
      TaskState.TASK_STATE_SUBMITTED,
    );
    expect(await t.db.prisma.webhook.count({ where: { taskId: sent.id } })).toBe(0);
    expect(await taskCount(stranger.tenantId)).toBe(0);
  });

  it('refuses another tenant named before the path, and anonymous calls with 401 and a Bearer challenge', async () => {
    const member = await t.caller(['member']);
    const named = await rest(member, member.tenantId, `/${randomUUID()}/message:send`, {
      method: 'POST',
      body: sendBody({ messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] }),
    });
    expect(named).toMatchObject({ status: 400, body: { error: { status: 'INVALID_ARGUMENT' } } });
    const anonymous = await rest(null, member.tenantId, '/tasks');
    expect(anonymous).toMatchObject({
      status: 401,
      body: { error: { code: 401, status: 'UNAUTHENTICATED' } },
    });
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
    expect(await taskCount(member.tenantId)).toBe(0);
  });

  function config(taskId: string): TaskPushNotificationConfig {
    return {
      tenant: '',
      id: '',
      taskId,
      url: receiver.url('/a2a-rest-push'),
      token: '',
      authentication: undefined,
    };
  }
});

describe('A2A HTTP+JSON: bad requests change nothing', () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) => ({
    method: 'POST',
    path,
    body,
    headers,
  });
  const malformed = { status: 400, error: 'INVALID_ARGUMENT', reason: 'INVALID_PARAMS' };

  it.each([
    ['malformed JSON', post('/message:send', '{"message":'), malformed],
    ['a body that is no object', post('/message:send', '[1]'), malformed],
    [
      'a message without parts',
      post('/message:send', sendBody({ messageId: 'm1', role: 'ROLE_USER', parts: [] })),
      malformed,
    ],
    [
      'a message without its id',
      post('/message:send', sendBody({ role: 'ROLE_USER', parts: [{ text: 'hi' }] })),
      malformed,
    ],
    [
      'a data part',
      post('/message:send', sendBody({ messageId: 'm2', role: 'ROLE_USER', parts: [{ data: { a: 1 } }] })),
      { status: 400, error: 'INVALID_ARGUMENT', reason: 'CONTENT_TYPE_NOT_SUPPORTED' },
    ],
    [
      'a message to an existing task',
      post(
        '/message:send',
        sendBody({ messageId: 'm3', role: 'ROLE_USER', taskId: randomUUID(), parts: [{ text: 'hi' }] }),
      ),
      { status: 400, error: 'FAILED_PRECONDITION', reason: 'UNSUPPORTED_OPERATION' },
    ],
    [
      'a body that is not JSON',
      post('/message:send', 'hello', { 'content-type': 'text/plain' }),
      { status: 400, error: 'INVALID_ARGUMENT', reason: 'CONTENT_TYPE_NOT_SUPPORTED' },
    ],
    [
      'a body whose tenant is not the path’s',
      post(
        '/message:send',
        JSON.stringify({
          tenant: randomUUID(),
          message: { messageId: 'm4', role: 'ROLE_USER', parts: [{ text: 'hi' }] },
        }),
      ),
      malformed,
    ],
    ['a page size over 100', { method: 'GET', path: '/tasks?pageSize=101' }, malformed],
    ['a page size that is no integer', { method: 'GET', path: '/tasks?pageSize=2.5' }, malformed],
    [
      'a negative historyLength',
      { method: 'GET', path: `/tasks/${randomUUID()}?historyLength=-1` },
      malformed,
    ],
    ['an unknown state', { method: 'GET', path: '/tasks?status=TASK_STATE_DREAMING' }, malformed],
    ['a push config without a url', post(`/tasks/${randomUUID()}/pushNotificationConfigs`, '{}'), malformed],
    [
      'an unknown A2A-Version',
      { method: 'GET', path: '/tasks', headers: { 'A2A-Version': '0.3' } },
      { status: 400, error: 'FAILED_PRECONDITION', reason: 'VERSION_NOT_SUPPORTED' },
    ],
    [
      'a task of no such id',
      { method: 'GET', path: `/tasks/${randomUUID()}` },
      { status: 404, error: 'NOT_FOUND', reason: 'TASK_NOT_FOUND' },
    ],
  ])('answers %s with the SDK’s error body', async (_name, request, expected) => {
    const member = await t.caller(['member']);
    const answer = await rest(member, member.tenantId, request.path, request);
    expect(answer.status).toBe(expected.status);
    expect(answer.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
    expect(answer.body).toEqual({
      error: {
        code: expected.status,
        status: expected.error,
        message: expect.any(String),
        details: [
          expect.objectContaining({
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: expected.reason,
            domain: 'a2a-protocol.org',
          }),
        ],
      },
    });
    expect(await taskCount(member.tenantId)).toBe(0);
  });

  it.each([
    ['an unknown path', 'GET', '/tasks/a/b', 404, 'NOT_FOUND', undefined],
    ['an unknown custom verb', 'POST', `/tasks/${randomUUID()}:pause`, 404, 'NOT_FOUND', undefined],
    ['the binding’s root', 'GET', '', 404, 'NOT_FOUND', undefined],
    ['a wrong method', 'GET', '/message:send', 405, 'UNKNOWN', 'POST'],
    ['another wrong method', 'DELETE', `/tasks/${randomUUID()}`, 405, 'UNKNOWN', 'GET'],
  ])('answers %s with %i and the error body', async (_name, method, path, status, name, allow) => {
    const member = await t.caller(['member']);
    const answer = await rest(member, member.tenantId, path, { method });
    expect(answer.status).toBe(status);
    expect(answer.body).toEqual({
      error: { code: status, status: name, message: expect.any(String), details: [] },
    });
    expect(answer.headers.get('allow') ?? undefined).toBe(allow);
  });

  it('refuses a body over the limit with 413 and the error body, queuing nothing', async () => {
    const member = await t.caller(['member']);
    const text = 'x'.repeat(2 * 1024 * 1024);
    const answer = await rest(member, member.tenantId, '/message:send', {
      method: 'POST',
      body: sendBody({ messageId: 'm9', role: 'ROLE_USER', parts: [{ text }] }),
    });
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({
      error: { code: 413, status: 'UNKNOWN', message: expect.stringContaining('exceeds'), details: [] },
    });
    expect(await taskCount(member.tenantId)).toBe(0);
  });

  it('refuses a body over the limit sent without its length with 413 as well, queuing nothing', async () => {
    const member = await t.caller(['member']);
    const text = 'x'.repeat(2 * 1024 * 1024);
    const bytes = new TextEncoder().encode(
      sendBody({ messageId: 'm10', role: 'ROLE_USER', parts: [{ text }] }),
    );
    const response = await fetchAs(member)(`${server.url}/a2a/${member.tenantId}/cfo/rest/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes);
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({
      error: { code: 413, status: 'UNKNOWN', message: expect.stringContaining('exceeds'), details: [] },
    });
    expect(await taskCount(member.tenantId)).toBe(0);
  });

  it('writes a refusal made before the binding runs (rate limit, load shedding) in its error body', async () => {
    const refused = refusalResponse(
      '/a2a/t/cfo/rest/tasks',
      'RATE_LIMITED',
      'Rate limit exceeded',
      { 'Retry-After': '1' },
      globalThis,
    );
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({
      error: { code: 429, status: 'RESOURCE_EXHAUSTED', message: 'Rate limit exceeded', details: [] },
    });
    const rpc = refusalResponse('/a2a/t/cfo', 'RATE_LIMITED', 'Rate limit exceeded', {}, globalThis);
    expect((await rpc.json()).jsonrpc).toBe('2.0');
  });

  it('answers the same message sent twice with one task (its messageId keys it)', async () => {
    const { member, client } = await tenant();
    const message = textMessage('Once only', { messageId: randomUUID() });
    const first = (await client.sendMessage(message)) as Task;
    const again = (await client.sendMessage(message)) as Task;
    expect(again.id).toBe(first.id);
    expect(await taskCount(member.tenantId)).toBe(1);
  });
});
