import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPLAYED_META_KEY } from '../../mcp/execute.js';
import { compiledRoutes } from '../../rest/index.js';
import { IDEMPOTENCY_REFUSALS } from '../../src/http/idempotency-key.js';
import { sweepIdempotencyKeys } from '../../src/infra/idempotency-store.js';
import type { RunningServer } from '../../src/server.js';
import { callTool, connectMcp } from '../mcp/mcp-support.js';
import { customerCreated, startUpstream, UPSTREAM_HOST } from '../rest/connectors-support.js';
import type { Caller, TestApp } from '../support/app.js';
import { createTwoTestApps, type TwoTestApps } from '../support/fixtures.js';
import type { TestHttpsServer } from '../support/https-server.js';
import { listen, openSocket } from '../support/ws.js';
import { Complete, claimNext, readBudget, setBudget } from './agents-budgets-support.js';
import { ClaimTask, memberAndAgent, queueTask } from './agents-support.js';

let t: TestApp;
/** A second instance on the same database (PostgreSQL + Redis in the postgres project). */
let other: TestApp;
let apps: TwoTestApps;
let upstream: TestHttpsServer;
let mcpServer: RunningServer;

beforeAll(async () => {
  const started = await startUpstream();
  upstream = started.server;
  upstream.route('/v1/customers', (_request, body, response) => customerCreated(response, body));
  apps = await createTwoTestApps({ env: started.allow, egress: started.egress });
  ({ a: t, b: other } = apps);
  mcpServer = await listen(t);
});
afterAll(async () => {
  await mcpServer?.close();
  await apps?.close();
  await upstream?.close();
});

const key = () => `"${randomUUID()}"`;
const chatBody = { message: 'Forecast Q3 cash flow', persist_thread: false };

const chatWith = (app: TestApp, caller: Caller | null, idempotencyKey: string, body: unknown = chatBody) =>
  app.rest('POST', '/api/v1/agents/cfo/chat', {
    caller,
    body,
    headers: { 'Idempotency-Key': idempotencyKey },
  });

/** A GraphQL request over HTTP with an Idempotency-Key. */
async function graphqlWith(
  app: TestApp,
  query: string,
  variables: Record<string, unknown>,
  caller: Caller,
  idempotencyKey: string,
) {
  const response = await app.app.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      authorization: `Bearer ${caller.token}`,
      'Idempotency-Key': idempotencyKey,
    },
    body: JSON.stringify({ query, variables }),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as any };
}

const tasksOf = (tenantId: string) => t.db.prisma.task.count({ where: { tenantId } });
const keysOf = (tenantId: string) => t.db.prisma.idempotencyKey.count({ where: { tenantId } });

describe('Idempotency-Key on REST', () => {
  it('runs a chat once for one key and replays its answer, on either instance', async () => {
    const { member } = await memberAndAgent(t);
    const k = key();

    const first = await chatWith(t, member, k);
    const again = await chatWith(other, member, k);

    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await tasksOf(member.tenantId)).toBe(1);
  });

  it('runs 10 concurrent duplicates once: the others are refused with 409 or replayed', async () => {
    const { member } = await memberAndAgent(t);
    const k = key();

    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) => chatWith(index % 2 ? other : t, member, k)),
    );

    expect(await tasksOf(member.tenantId)).toBe(1);
    const accepted = answers.filter((answer) => answer.status === 202);
    const inFlight = answers.filter((answer) => answer.status === 409);
    expect(accepted.length + inFlight.length).toBe(10);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(new Set(accepted.map((answer) => answer.body.data.task_id)).size).toBe(1);
    for (const answer of inFlight) {
      expect(answer.body.detail).toContain('idempotency_key_in_flight');
      expect(answer.headers.get('retry-after')).toBe('1');
    }
    // Once the first is done, a retry gets its answer.
    const later = await chatWith(other, member, k);
    expect(later.status).toBe(202);
    expect(later.body.data.task_id).toBe(accepted[0]?.body.data.task_id);
  });

  it('refuses a used key with another body (422) and changes nothing', async () => {
    const { member } = await memberAndAgent(t);
    const k = key();
    await chatWith(t, member, k);

    const changed = await chatWith(other, member, k, { ...chatBody, message: 'Something else' });

    expect(changed.status).toBe(422);
    expect(changed.body.detail).toContain('idempotency_key_reused');
    expect(await tasksOf(member.tenantId)).toBe(1);
  });

  it('scopes keys to the tenant and the caller', async () => {
    const { member } = await memberAndAgent(t);
    const colleague = await t.caller(['member'], { tenantId: member.tenantId });
    const { member: stranger } = await memberAndAgent(t);
    const k = key();

    const mine = await chatWith(t, member, k);
    const colleagues = await chatWith(other, colleague, k);
    const strangers = await chatWith(t, stranger, k);

    expect([mine.status, colleagues.status, strangers.status]).toEqual([202, 202, 202]);
    expect(colleagues.headers.get('idempotent-replayed')).toBeNull();
    expect(strangers.headers.get('idempotent-replayed')).toBeNull();
    expect(new Set([mine, colleagues, strangers].map((answer) => answer.body.data.task_id)).size).toBe(3);
    expect(await tasksOf(member.tenantId)).toBe(2);
    expect(await tasksOf(stranger.tenantId)).toBe(1);
  });

  it('runs again once the key expired, and the sweeper deletes expired keys', async () => {
    const { member } = await memberAndAgent(t);
    const k = key();
    const first = await chatWith(t, member, k);
    await t.db.prisma.idempotencyKey.updateMany({
      where: { tenantId: member.tenantId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });

    const again = await chatWith(other, member, k, { ...chatBody, message: 'A new request' });

    expect(again.status).toBe(202);
    expect(again.body.data.task_id).not.toBe(first.body.data.task_id);
    expect(await tasksOf(member.tenantId)).toBe(2);
    await t.db.prisma.idempotencyKey.updateMany({
      where: { tenantId: member.tenantId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect(await sweepIdempotencyKeys(t.db.prisma)).toBeGreaterThanOrEqual(1);
    expect(await keysOf(member.tenantId)).toBe(0);
  });

  it('takes over a key whose first request crashed once its lease ended', async () => {
    const { member } = await memberAndAgent(t);
    const k = key();
    await chatWith(t, member, k);
    await t.db.prisma.idempotencyKey.updateMany({
      where: { tenantId: member.tenantId },
      data: { status: 'in_progress', lockedUntil: new Date(Date.now() - 1000), answer: undefined },
    });

    const again = await chatWith(other, member, k);

    expect(again.status).toBe(202);
    expect(await tasksOf(member.tenantId)).toBe(2);
  });

  it('answers 401 to an anonymous request and stores nothing', async () => {
    const before = await t.db.prisma.idempotencyKey.count();
    const anonymous = await chatWith(t, null, key());
    const forged = await t.rest('POST', '/api/v1/agents/cfo/chat', {
      body: chatBody,
      headers: { authorization: 'Bearer not-a-token', 'Idempotency-Key': key() },
    });

    expect(anonymous.status).toBe(401);
    expect(forged.status).toBe(401);
    expect(await t.db.prisma.idempotencyKey.count()).toBe(before);
  });

  it('refuses an invalid key with 400 and runs nothing', async () => {
    const { member } = await memberAndAgent(t);
    let reached = 0;
    for (const invalid of [
      '""',
      `"${'k'.repeat(256)}"`,
      '"a", "b"',
      'two words',
      '"tab\there"',
      'caf\u00e9',
    ]) {
      // A value fetch itself refuses to send never reaches the service.
      const refused = await chatWith(t, member, invalid).catch(() => null);
      if (!refused) continue;
      reached += 1;
      expect(refused.status, invalid).toBe(400);
      expect(refused.body, invalid).toEqual({ detail: IDEMPOTENCY_REFUSALS.invalid.message });
    }
    expect(reached).toBeGreaterThanOrEqual(4);
    const bare = await chatWith(t, member, `bare-${randomUUID()}`);
    expect(bare.status).toBe(202);
    expect(await tasksOf(member.tenantId)).toBe(1);
  });

  it('ignores the key on a read', async () => {
    const chairman = await t.caller(['chairman']);
    const read = await t.rest('GET', '/api/v1/task-approvals', {
      caller: chairman,
      headers: { 'Idempotency-Key': key() },
    });
    expect(read.status).toBe(200);
    expect(await keysOf(chairman.tenantId)).toBe(0);
  });

  it('decides a task approval once: a retried decision is replayed, not refused', async () => {
    const { member, agent } = await memberAndAgent(t);
    const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
    const taskId = await queueTask(t, member, 'cfo');
    await t.graphql(ClaimTask, { role: 'cfo' }, agent);
    const asked = await t.graphql<{ requestTaskApproval: { id: string } }, { taskId: string }>(
      `mutation ($taskId: ID!) {
        requestTaskApproval(taskId: $taskId, input: { summary: "Send this offer", payload: { amount: 1 } }) { id }
      }`,
      { taskId },
      agent,
    );
    const id = asked.data?.requestTaskApproval.id ?? '';
    const k = key();
    const approve = (app: TestApp) =>
      app.rest('POST', `/api/v1/task-approvals/${id}/approve`, {
        caller: chairman,
        body: { note: 'Go ahead' },
        headers: { 'Idempotency-Key': k },
      });

    const written = async () => ({
      audit: await t.db.prisma.auditEntry.count({ where: { tenantId: member.tenantId } }),
      outbox: await t.db.prisma.outboxEvent.count({ where: { tenantId: member.tenantId } }),
    });

    const first = await approve(t);
    const afterFirst = await written();
    const again = await approve(other);
    const rejected = await t.rest('POST', `/api/v1/task-approvals/${id}/reject`, {
      caller: chairman,
      body: { note: 'No' },
      headers: { 'Idempotency-Key': k },
    });

    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(rejected.status).toBe(422);
    expect(await written()).toEqual(afterFirst);
    expect((await t.db.prisma.taskApproval.findUniqueOrThrow({ where: { id } })).status).toBe('approved');
  });

  it('calls a connector upstream once for one key', async () => {
    const chairman = await t.caller(['chairman']);
    const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
    const created = await t.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: {
        template: {
          name: 'Payments',
          base_url: `https://${UPSTREAM_HOST}:${upstream.port}/v1`,
          auth_type: 'none',
          endpoints: [{ method: 'POST', path: '/customers' }],
        },
      },
    });
    expect(created.status).toBe(201);
    const email = `${randomUUID()}@example.com`;
    const k = key();
    const sentBefore = upstream.received.filter((request) => request.url.startsWith('/v1/customers')).length;
    const invoke = (app: TestApp) =>
      app.rest('POST', `/api/v1/forge/connectors/${created.body.id}/invoke`, {
        caller: operator,
        body: { endpoint: { method: 'POST', path: '/customers' }, input: { body: { email } } },
        headers: { 'Idempotency-Key': k },
      });

    const answers = await Promise.all([invoke(t), invoke(other), invoke(t), invoke(other)]);
    const retried = await invoke(other);

    const sent = upstream.received.filter((request) => request.url.startsWith('/v1/customers')).length;
    expect(sent - sentBefore).toBe(1);
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 201, body: { id: 'cus_2', email } });
  });
});

describe('Idempotency-Key on GraphQL', () => {
  it('counts a retried completion once in the budget', async () => {
    const { member, agent } = await memberAndAgent(t);
    const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
    await setBudget(t, chairman, { role: 'cfo', period: 'day', limitUsd: '100', estimateUsd: '1' });
    await queueTask(t, member, 'cfo');
    const claim = await claimNext(t, agent, 'cfo');
    const id = claim.task?.id ?? '';
    const k = key();
    const variables = { id, input: { tokensUsed: 100, costUsd: 2.5 } };

    const first = await graphqlWith(t, Complete, variables, agent, k);
    const again = await graphqlWith(other, Complete, variables, agent, k);
    const changed = await graphqlWith(
      other,
      Complete,
      { id, input: { tokensUsed: 1, costUsd: 9 } },
      agent,
      k,
    );

    expect(first.status).toBe(200);
    expect(first.body.data.completeTask).toMatchObject({ id, status: 'completed' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(changed.status).toBe(422);
    expect(changed.body.errors[0].extensions).toMatchObject({ reason: 'idempotency_key_reused' });
    expect((await readBudget(t, chairman, 'cfo'))?.spentUsd).toBe('2.5');
  });

  it('shares the rule with the REST route that runs the same operation', async () => {
    const { member } = await memberAndAgent(t);
    const chatRoute = compiledRoutes.find((route) => route.route.path === '/api/v1/agents/{role}/chat');
    const k = key();
    const overRest = await chatWith(t, member, k);

    const twin = await graphqlWith(
      other,
      chatRoute?.query ?? '',
      { role: 'cfo', input: { persistThread: false, message: chatBody.message } },
      member,
      k,
    );

    expect(twin.status).toBe(200);
    expect(twin.headers.get('idempotent-replayed')).toBe('true');
    // The same document (its REST field names as aliases), so the same data.
    expect(JSON.stringify(twin.body.data)).toContain(overRest.body.data.task_id);
    expect(await tasksOf(member.tenantId)).toBe(1);
  });

  it('ignores the key on a query', async () => {
    const { member } = await memberAndAgent(t);
    const read = await graphqlWith(t, '{ tasks(first: 1) { nodes { id } } }', {}, member, key());
    expect(read.status).toBe(200);
    expect(await keysOf(member.tenantId)).toBe(0);
  });

  it('refuses an invalid key with 400 and its reason', async () => {
    const { agent } = await memberAndAgent(t);
    const refused = await graphqlWith(
      t,
      Complete,
      { id: randomUUID(), input: { tokensUsed: 1, costUsd: 1 } },
      agent,
      '""',
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].extensions).toMatchObject({ reason: 'idempotency_key_invalid' });
  });
});

describe('Idempotency-Key over graphql-ws', () => {
  it('keys no operation of a socket, even when its upgrade request carried the header', async () => {
    const { member } = await memberAndAgent(t);
    const socket = await openSocket(mcpServer.url, member, { headers: { 'Idempotency-Key': key() } });
    try {
      const send =
        'mutation ($message: String!) { sendChatMessage(role: "cfo", input: { message: $message }) { taskId } }';
      socket.subscribe('one', send, { message: 'First' });
      socket.subscribe('two', send, { message: 'Second' });
      const [one] = await socket.settled('one');
      const [two] = await socket.settled('two');

      expect(one).toMatchObject({
        type: 'next',
        payload: { data: { sendChatMessage: { taskId: expect.any(String) } } },
      });
      expect(two).toMatchObject({
        type: 'next',
        payload: { data: { sendChatMessage: { taskId: expect.any(String) } } },
      });
      expect(await tasksOf(member.tenantId)).toBe(2);
      expect(await keysOf(member.tenantId)).toBe(0);
    } finally {
      await socket.close();
    }
  });
});

describe('Idempotency-Key on MCP', () => {
  it('completes a task once for one key: a retried tool call is replayed', async () => {
    const { member, agent } = await memberAndAgent(t);
    const chairman = await t.caller(['chairman'], { tenantId: member.tenantId });
    await setBudget(t, chairman, { role: 'cfo', period: 'day', limitUsd: '100', estimateUsd: '1' });
    await queueTask(t, member, 'cfo');
    const claim = await claimNext(t, agent, 'cfo');
    const client = await connectMcp(mcpServer, agent, { 'Idempotency-Key': key() });
    try {
      const args = { taskId: claim.task?.id ?? '', tokensUsed: 100, costUsd: 1.75 };
      const first = await callTool(client, 'complete_task', args);
      const again = await callTool(client, 'complete_task', args);
      const changed = await callTool(client, 'complete_task', { ...args, costUsd: 3 }).catch(
        (error: { code?: number; message: string }) => error,
      );

      expect(first.isError).toBeFalsy();
      // The replay is the first result, marked as one (what Idempotent-Replayed: true says on HTTP).
      expect(first._meta).toBeUndefined();
      const { _meta, ...replayed } = again;
      expect(_meta).toEqual({ [REPLAYED_META_KEY]: true });
      expect(replayed).toEqual(first);
      // Another request with a used key is invalid params (-32602), its reason in the message.
      expect(changed).toMatchObject({
        code: -32602,
        message: expect.stringContaining('idempotency_key_reused'),
      });
      expect((await readBudget(t, chairman, 'cfo'))?.spentUsd).toBe('1.75');
    } finally {
      await client.close();
    }
  });
});
