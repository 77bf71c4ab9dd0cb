import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expireCallApprovals } from '../../src/domain/connectors/call-approvals-store.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, type TestApp, type TestAppOptions } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import type { TestHttpsServer } from '../support/https-server.js';
import { listen, subscribe } from '../support/ws.js';
import {
  customerCreated,
  UPSTREAM_HOST as HOST,
  OTHER_UPSTREAM_HOST as OTHER_HOST,
  POST_CUSTOMER,
  sealingKey,
  startUpstream,
} from './connectors-support.js';

const MemberEvents = graphql(`
  subscription MemberEventsForTest {
    events(types: [CONNECTOR_CALL_APPROVAL_REQUESTED, CONNECTOR_CALL_APPROVAL_DECIDED, CONNECTOR_INVOKED]) {
      __typename
    }
  }
`);

const ApprovalChanged = graphql(`
  subscription ApprovalChangedForTest($connectorId: ID) {
    connectorCallApprovalChanged(connectorId: $connectorId) {
      approvalId
      connectorId
      method
      path
      status
      requestedBy
      decidedBy
    }
  }
`);

let server: TestHttpsServer;
let egress: TestAppOptions['egress'];
let env: Record<string, string>;
let database: TestDatabase;
let t: TestApp;
/** A second instance on the same database, with the same sealing key. */
let other: TestApp;

beforeAll(async () => {
  let allow: Record<string, string>;
  ({ server, egress, allow } = await startUpstream());
  env = { ...allow, ...sealingKey() };
  database = await createTestDatabase();
  [t, other] = await Promise.all([
    createTestApp({ database, env, egress }),
    createTestApp({ database, env, egress }),
  ]);
  server.route('/v1/customers', (request, body, response) => {
    if (request.method === 'POST') {
      // Slow enough that two approvals overlap while the first call is in flight.
      setTimeout(() => {
        customerCreated(response, body);
      }, 100);
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('[{"id":"cus_1"}]');
  });
});

afterAll(async () => {
  await Promise.all([t?.close(), other?.close()]);
  await database?.drop();
  await server?.close();
});

function template(name: string, host = HOST) {
  return {
    name,
    base_url: `https://${host}:${server.port}/v1`,
    auth_type: 'none',
    endpoints: [{ method: 'GET', path: '/customers' }, POST_CUSTOMER],
  };
}

interface Tenant {
  chairman: Caller;
  operator: Caller;
  agent: Caller;
  member: Caller;
  connectorId: string;
}

const gateWrites = {
  rules: [{ methods: ['POST', 'PUT', 'PATCH', 'DELETE'] }],
  approver_roles: ['chairman', 'operator'],
  expires_in_seconds: 3600,
};

async function tenant(policy: Record<string, unknown> | null = gateWrites, app = t): Promise<Tenant> {
  const chairman = await app.caller(['chairman'], { sub: `chair-${randomBytes(3).toString('hex')}` });
  const same = { tenantId: chairman.tenantId };
  const [operator, agent, member] = await Promise.all([
    app.caller(['operator'], same),
    app.caller(['agent'], same),
    app.caller(['member'], same),
  ]);
  const created = await app.rest('POST', '/api/v1/forge/connectors', {
    caller: chairman,
    body: { template: template('Payments') },
  });
  expect(created.status).toBe(201);
  const connectorId = created.body.id as string;
  if (policy) {
    const set = await app.rest('PUT', `/api/v1/forge/connectors/${connectorId}/approval-policy`, {
      caller: chairman,
      body: policy,
    });
    expect(set.status).toBe(200);
  }
  return { chairman, operator, agent, member, connectorId };
}

const createCustomer = {
  endpoint: { method: 'POST', path: '/customers' },
  input: { body: { email: 'ada@example.com' } },
};

const invoke = (caller: Caller, id: string, body: unknown = createCustomer, app = t) =>
  app.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, { caller, body });

const decide = (caller: Caller, id: string, verb: string, body: unknown = {}, app = t) =>
  app.rest('POST', `/api/v1/forge/approvals/${id}/${verb}`, { caller, body });

/** Requests the upstream received for POST /v1/customers since `from`. */
const postsSince = (from: number) =>
  server.received
    .slice(from)
    .filter((request) => request.method === 'POST' && request.url === '/v1/customers');

/** What a tenant has of approvals: rows, audit rows and outbox events. */
async function traces(tenantId: string) {
  const prisma = t.db.prisma;
  const [rows, audits, events] = await Promise.all([
    prisma.connectorCallApproval.findMany({ where: { tenantId }, orderBy: { createdAt: 'asc' } }),
    prisma.auditEntry.findMany({ where: { tenantId, action: { startsWith: 'connector.call.' } } }),
    prisma.outboxEvent.findMany({ where: { tenantId, type: { startsWith: 'CONNECTOR_CALL_APPROVAL' } } }),
  ]);
  return {
    rows,
    audits: audits.map((audit) => `${audit.action} ${audit.outcome}`),
    events: events.map((event) => event.type),
  };
}

let sent: number;
beforeEach(() => {
  sent = server.received.length;
});

describe('an approval policy', () => {
  it('is set by the chairman as the next version, beside an unchanged template, audited', async () => {
    const { chairman, connectorId } = await tenant(null);
    const before = await t.rest('GET', `/api/v1/forge/connectors/${connectorId}`, { caller: chairman });
    const set = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}/approval-policy`, {
      caller: chairman,
      body: { rules: [{ methods: ['DELETE'], path: '/customers/*' }, { methods: ['POST'] }] },
    });
    expect(set.status).toBe(200);
    expect(set.headers.get('etag')).toBe('"2"');
    expect(set.body).toEqual({
      connector_id: connectorId,
      version: 2,
      approval_policy: {
        rules: [
          { methods: ['DELETE'], path: '/customers/*' },
          { methods: ['POST'], path: '/**' },
        ],
        approver_roles: ['chairman'],
        expires_in_seconds: 86400,
      },
    });
    const after = await t.rest('GET', `/api/v1/forge/connectors/${connectorId}`, { caller: chairman });
    expect(after.body.template).toEqual(before.body.template);
    const versions = await t.db.prisma.connectorVersion.findMany({
      where: { connectorId },
      orderBy: { version: 'asc' },
    });
    expect(versions.map((version) => [version.version, version.approvalPolicy !== null])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(versions[1]?.template).toEqual(versions[0]?.template);
    const audit = await t.db.prisma.auditEntry.findMany({
      where: { targetId: connectorId, action: 'connector.approval_policy.set' },
    });
    expect(audit.map((row) => row.outcome)).toEqual(['set']);

    const cleared = await t.rest('DELETE', `/api/v1/forge/connectors/${connectorId}/approval-policy`, {
      caller: chairman,
    });
    expect(cleared.body).toMatchObject({ version: 3, approval_policy: null });
  });

  it('is the chairman’s alone; bad policies are refused with 422 and change nothing', async () => {
    const { chairman, operator, connectorId } = await tenant(null);
    const path = `/api/v1/forge/connectors/${connectorId}/approval-policy`;
    expect((await t.rest('PUT', path, { caller: operator, body: gateWrites })).status).toBe(403);
    for (const body of [
      { rules: [] },
      { rules: [{ methods: [] }] },
      { rules: [{ methods: ['HEAD'] }] },
      { rules: [{ methods: ['POST'], path: '/cust*' }] },
      { rules: [{ methods: ['POST'], path: 'customers' }] },
      { rules: [{ methods: ['POST'] }], approver_roles: ['member'] },
      { rules: [{ methods: ['POST'] }], expires_in_seconds: 5 },
    ]) {
      const answer = await t.rest('PUT', path, { caller: chairman, body });
      expect(answer.status, JSON.stringify(body)).toBe(422);
    }
    const connector = await t.db.prisma.connector.findUniqueOrThrow({ where: { id: connectorId } });
    expect(connector).toMatchObject({ version: 1, approvalPolicy: null });
    const audit = await t.db.prisma.auditEntry.count({
      where: { targetId: connectorId, action: 'connector.approval_policy.set' },
    });
    expect(audit).toBe(0);
  });
});

describe('a gated call', () => {
  it('answers 202 pending, sends nothing, and keeps its input sealed', async () => {
    const { agent, connectorId } = await tenant();
    const answer = await invoke(agent, connectorId);
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({
      id: expect.any(String),
      connector_id: connectorId,
      connector_version: 2,
      method: 'POST',
      path: '/customers',
      status: 'pending',
      approver_roles: ['chairman', 'operator'],
      requested_by: agent.sub,
    });
    expect(postsSince(sent)).toHaveLength(0);
    const { rows, audits, events } = await traces(agent.tenantId);
    expect(rows).toHaveLength(1);
    expect(Buffer.from(rows[0]?.sealedInput ?? []).toString('latin1')).not.toContain('ada@example.com');
    expect(audits).toEqual(['connector.call.request pending']);
    expect(events).toEqual(['CONNECTOR_CALL_APPROVAL_REQUESTED']);
  });

  it('leaves an ungated endpoint of the same connector answered at once', async () => {
    const { agent, connectorId } = await tenant();
    const answer = await invoke(agent, connectorId, { endpoint: { method: 'GET', path: '/customers' } });
    expect(answer.status).toBe(200);
    expect(server.received.length - sent).toBe(1);
  });

  it('with bad input is refused with 422 and leaves no row, no event and no call', async () => {
    const { agent, connectorId } = await tenant();
    for (const body of [
      { endpoint: { method: 'POST', path: '/customers' }, input: { body: { email: 7 } } },
      { endpoint: { method: 'POST', path: '/customers' }, input: { body: { email: 'a@b.c', admin: true } } },
      { endpoint: { method: 'POST', path: '/customers' } },
      { endpoint: { method: 'POST', path: '/nowhere' }, input: { body: {} } },
    ]) {
      expect((await invoke(agent, connectorId, body)).status, JSON.stringify(body)).toBe(422);
    }
    expect(await traces(agent.tenantId)).toEqual({ rows: [], audits: [], events: [] });
    expect(server.received.length).toBe(sent);
  });

  it('is not kept without CONNECTOR_SECRETS_KEY (503): its input could not be sealed', async () => {
    // An instance without the key, on the suite's database (a fresh one would migrate for this test alone).
    const unsealed = await createTestApp({
      database,
      env: { CONNECTOR_EGRESS_ALLOW: `127.0.0.1:${server.port}` },
    });
    try {
      const chairman = await unsealed.caller(['chairman', 'operator']);
      const created = await unsealed.rest('POST', '/api/v1/forge/connectors', {
        caller: chairman,
        body: { template: template('Payments') },
      });
      await unsealed.rest('PUT', `/api/v1/forge/connectors/${created.body.id}/approval-policy`, {
        caller: chairman,
        body: gateWrites,
      });
      const answer = await unsealed.rest('POST', `/api/v1/forge/connectors/${created.body.id}/invoke`, {
        caller: chairman,
        body: createCustomer,
      });
      expect(answer.status).toBe(503);
      expect(
        await unsealed.db.prisma.connectorCallApproval.count({ where: { connectorId: created.body.id } }),
      ).toBe(0);
    } finally {
      await unsealed.close();
    }
  });
});

describe('deciding a gated call', () => {
  it('approved: the call is made once, its result kept for the requester; a second decision answers the first', async () => {
    const { agent, chairman, operator, connectorId } = await tenant();
    const { id } = (await invoke(agent, connectorId)).body;
    const approved = await decide(chairman, id, 'approve', { note: 'ok for Ada' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      status: 'approved',
      decided_by: chairman.sub,
      note: 'ok for Ada',
      call: { outcome: 'success', status: 201, body: { id: 'cus_2', email: 'ada@example.com' } },
    });
    expect(postsSince(sent)).toHaveLength(1);
    expect(postsSince(sent)[0]?.body).toBe('{"email":"ada@example.com"}');

    const read = await t.rest('GET', `/api/v1/forge/approvals/${id}`, { caller: agent });
    expect(read.body).toMatchObject({ status: 'approved', call: { status: 201, bytes: expect.any(Number) } });
    const again = await decide(operator, id, 'reject', { note: 'too late' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: 'approved', decided_by: chairman.sub, note: 'ok for Ada' });
    expect(postsSince(sent)).toHaveLength(1);
    const { audits, events } = await traces(agent.tenantId);
    expect(audits.sort()).toEqual(['connector.call.approve approved', 'connector.call.request pending']);
    expect(events.sort()).toEqual(['CONNECTOR_CALL_APPROVAL_DECIDED', 'CONNECTOR_CALL_APPROVAL_REQUESTED']);
  });

  it('approved ten times at once by approvers on two instances: exactly one call', async () => {
    const { agent, chairman, operator, connectorId } = await tenant();
    const { id } = (await invoke(agent, connectorId)).body;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        decide(i % 2 ? chairman : operator, id, 'approve', { note: `approval ${i}` }, i % 4 < 2 ? t : other),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((answer) => answer.body.status))).toEqual(new Set(['approved']));
    expect(new Set(answers.map((answer) => answer.body.decided_by)).size).toBe(1);
    expect(postsSince(sent)).toHaveLength(1);
    const { audits } = await traces(agent.tenantId);
    expect(audits.filter((audit) => audit.startsWith('connector.call.approve'))).toHaveLength(1);
    const invoked = await t.db.prisma.auditEntry.count({
      where: { tenantId: agent.tenantId, action: 'connector.invoke' },
    });
    expect(invoked).toBe(1);
  });

  it('rejected or sent back for changes: nothing is sent', async () => {
    const { agent, chairman, operator, connectorId } = await tenant();
    const first = (await invoke(agent, connectorId)).body.id;
    const second = (await invoke(agent, connectorId)).body.id;
    const rejected = await decide(chairman, first, 'reject', { note: 'no' });
    expect(rejected.body).toMatchObject({
      status: 'rejected',
      decided_by: chairman.sub,
      note: 'no',
      call: null,
    });
    const changes = await decide(operator, second, 'request-changes', { note: 'use the billing address' });
    expect(changes.body).toMatchObject({ status: 'changes_requested', decided_by: operator.sub, call: null });
    expect(postsSince(sent)).toHaveLength(0);
    expect((await decide(chairman, first, 'approve')).body.status).toBe('rejected');
    expect(postsSince(sent)).toHaveLength(0);
  });

  it('expired: 409 with its state, no call; the sweep announces it once even with no approver around', async () => {
    const { agent, chairman, connectorId } = await tenant();
    const first = (await invoke(agent, connectorId)).body.id;
    const second = (await invoke(agent, connectorId)).body.id;
    await t.db.prisma.connectorCallApproval.updateMany({
      where: { id: { in: [first, second] } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const listed = await t.rest('GET', `/api/v1/forge/approvals?status=expired&connector_id=${connectorId}`, {
      caller: chairman,
    });
    expect(listed.body.data.map((row: { id: string }) => row.id).sort()).toEqual([first, second].sort());
    const answer = await decide(chairman, first, 'approve');
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toMatch(/^Approval .* expired at .*; its status is expired$/);
    // The app's own sweeper may have swept the second one already: whoever sweeps first expires it, once.
    await expireCallApprovals(t.db.prisma);
    expect(await expireCallApprovals(t.db.prisma)).toBe(0);
    expect(postsSince(sent)).toHaveLength(0);
    const { rows, audits } = await traces(agent.tenantId);
    expect(rows.map((row) => row.status)).toEqual(['expired', 'expired']);
    expect(audits.filter((audit) => audit.startsWith('connector.call.expire'))).toHaveLength(2);
  });

  it('after the connector moved to another origin: cancelled, 409, no call', async () => {
    const { agent, chairman, connectorId } = await tenant();
    const { id } = (await invoke(agent, connectorId)).body;
    const moved = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}`, {
      caller: chairman,
      body: { template: template('Payments', OTHER_HOST) },
    });
    expect(moved.status).toBe(200);
    const answer = await decide(chairman, id, 'approve');
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toBe(`Approval ${id} was cancelled (origin_changed); its status is cancelled`);
    expect(server.received.length).toBe(sent);
    expect((await traces(agent.tenantId)).audits).toContain('connector.call.cancel cancelled');
  });
});

describe('a gated call runs only on the connector version it was requested against', () => {
  /** The template of the test connector with its base URL's path moved (same origin: an operator's edit). */
  const movedPath = () => ({
    ...template('Payments'),
    base_url: `https://${HOST}:${server.port}/live/admin`,
  });

  it('an operator’s edit or a policy change in between cancels it (connector_changed): 409, nothing sent', async () => {
    const { agent, chairman, operator, connectorId } = await tenant();
    const edited = (await invoke(agent, connectorId)).body;
    expect(edited.connector_version).toBe(2);
    const edit = await other.rest('PUT', `/api/v1/forge/connectors/${connectorId}`, {
      caller: operator,
      body: { template: movedPath() },
    });
    expect(edit.body.version).toBe(3);
    const repoliced = (await invoke(agent, connectorId, createCustomer, other)).body;
    expect(repoliced.connector_version).toBe(3);
    const policy = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}/approval-policy`, {
      caller: chairman,
      body: { ...gateWrites, approver_roles: ['chairman'] },
    });
    expect(policy.body.version).toBe(4);

    for (const id of [edited.id, repoliced.id]) {
      const answer = await decide(chairman, id, 'approve', {}, other);
      expect(answer.status).toBe(409);
      expect(answer.body.detail).toBe(
        `Approval ${id} was cancelled (connector_changed); its status is cancelled`,
      );
    }
    expect(server.received.length).toBe(sent);
    const { rows, audits, events } = await traces(agent.tenantId);
    expect(rows.map((row) => [row.status, row.reason, row.decidedBy])).toEqual([
      ['cancelled', 'connector_changed', null],
      ['cancelled', 'connector_changed', null],
    ]);
    expect(audits.filter((audit) => audit.startsWith('connector.call.cancel'))).toEqual([
      'connector.call.cancel cancelled',
      'connector.call.cancel cancelled',
    ]);
    expect(events.filter((event) => event === 'CONNECTOR_CALL_APPROVAL_DECIDED')).toHaveLength(2);
  });

  it('an edit committed after the decision claimed it: cancelled instead of sent to the new version', async () => {
    const { agent, chairman, connectorId } = await tenant();
    const { id } = (await invoke(agent, connectorId)).body;
    // What an edit committing between the claim and the call leaves: the connector at its next version,
    // the request no longer pending for the edit to cancel (it is the approver's to end).
    await t.db.prisma.connector.update({
      where: { id: connectorId },
      data: { version: 3, template: movedPath() },
    });
    const answer = await decide(chairman, id, 'approve', {}, other);
    expect(answer.status).toBe(409);
    expect(answer.body.detail).toBe(
      `Approval ${id} was cancelled (connector_changed); its status is cancelled`,
    );
    expect(server.received.length).toBe(sent);
    const { rows, audits } = await traces(agent.tenantId);
    expect(rows.map((row) => [row.status, row.reason, row.outcome])).toEqual([
      ['cancelled', 'connector_changed', 'not_sent'],
    ]);
    expect(audits).toContain('connector.call.cancel cancelled');
    const invoked = await t.db.prisma.auditEntry.count({
      where: { tenantId: agent.tenantId, action: 'connector.invoke' },
    });
    expect(invoked).toBe(0);
  });
});

describe('who sees and decides', () => {
  it('a member neither reads nor decides (403); an agent reads only its own and decides nothing', async () => {
    const { agent, member, chairman, connectorId } = await tenant();
    const otherAgent = await t.caller(['agent'], { tenantId: agent.tenantId });
    const { id } = (await invoke(agent, connectorId)).body;
    const theirs = (await invoke(otherAgent, connectorId)).body.id;
    expect((await t.rest('GET', '/api/v1/forge/approvals', { caller: member })).status).toBe(403);
    expect((await t.rest('GET', `/api/v1/forge/approvals/${id}`, { caller: member })).status).toBe(403);
    expect((await decide(member, id, 'approve')).status).toBe(403);
    expect((await decide(agent, id, 'approve')).status).toBe(403);
    const own = await t.rest('GET', '/api/v1/forge/approvals', { caller: agent });
    expect(own.body.data.map((row: { id: string }) => row.id)).toEqual([id]);
    expect((await t.rest('GET', `/api/v1/forge/approvals/${theirs}`, { caller: agent })).status).toBe(404);
    const all = await t.rest('GET', '/api/v1/forge/approvals?status=pending', { caller: chairman });
    expect(all.body.data).toHaveLength(2);
    const recent = await t.graphql('{ recentEvents { event { __typename } } }', {}, member);
    expect(JSON.stringify(recent.data)).not.toContain('ConnectorCallApprovalEvent');
    expect((await t.db.prisma.connectorCallApproval.findUniqueOrThrow({ where: { id } })).status).toBe(
      'pending',
    );
  });

  it('an operator decides only where the policy names operators', async () => {
    const { agent, operator, connectorId } = await tenant({ rules: [{ methods: ['POST'] }] });
    const { id } = (await invoke(agent, connectorId)).body;
    const answer = await decide(operator, id, 'approve');
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toBe(`Only the chairman may decide approval ${id}`);
    expect((await traces(agent.tenantId)).rows[0]?.status).toBe('pending');
    expect(server.received.length).toBe(sent);
  });

  it('never by whoever asked, whatever roles the token carries: 403 on every face; someone else decides, on another instance', async () => {
    const { operator, chairman, connectorId } = await tenant();
    const both = await t.caller(['agent', 'operator'], { tenantId: operator.tenantId });
    const ownCall = (await invoke(operator, connectorId)).body.id;
    const mixedCall = (await invoke(both, connectorId)).body.id;
    for (const [caller, id] of [
      [operator, ownCall],
      [both, mixedCall],
    ] as const) {
      for (const verb of ['approve', 'reject', 'request-changes']) {
        const answer = await decide(caller, id, verb, {}, other);
        expect(answer.status, `${caller.roles} ${verb}`).toBe(403);
        expect(answer.body.detail).toBe(
          `Approval ${id} was requested by you (${caller.sub}): someone else decides it`,
        );
      }
      const overGraphQL = await other.graphql(
        'mutation ($id: ID!) { approveConnectorCall(id: $id) { id } }',
        { id },
        caller,
      );
      expect(overGraphQL.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', reason: 'own_request' });
    }
    const { rows, audits, events } = await traces(operator.tenantId);
    expect(rows.map((row) => row.status)).toEqual(['pending', 'pending']);
    expect(audits).toEqual(['connector.call.request pending', 'connector.call.request pending']);
    expect(events).toEqual(['CONNECTOR_CALL_APPROVAL_REQUESTED', 'CONNECTOR_CALL_APPROVAL_REQUESTED']);
    expect(postsSince(sent)).toHaveLength(0);

    // The other operator may decide the mixed token's call, and the chairman the operator's: once each.
    expect((await decide(operator, mixedCall, 'approve', {}, other)).body).toMatchObject({
      status: 'approved',
      decided_by: operator.sub,
      call: { outcome: 'success', status: 201 },
    });
    expect((await decide(chairman, ownCall, 'approve', {}, other)).body).toMatchObject({
      status: 'approved',
      decided_by: chairman.sub,
    });
    expect(postsSince(sent)).toHaveLength(2);
  });

  it('another tenant’s request is not found, and its inbox does not list it', async () => {
    const { agent, connectorId } = await tenant();
    const { id } = (await invoke(agent, connectorId)).body;
    const stranger = await t.caller(['chairman', 'operator']);
    expect((await decide(stranger, id, 'approve')).status).toBe(404);
    expect((await t.rest('GET', `/api/v1/forge/approvals/${id}`, { caller: stranger })).status).toBe(404);
    expect((await t.rest('GET', '/api/v1/forge/approvals', { caller: stranger })).body.data).toEqual([]);
    expect(server.received.length).toBe(sent);
  });

  it('a bad note or id is refused with 422 and decides nothing', async () => {
    const { agent, chairman, connectorId } = await tenant();
    const { id } = (await invoke(agent, connectorId)).body;
    expect((await decide(chairman, id, 'approve', { note: 'x'.repeat(2001) })).status).toBe(422);
    expect((await decide(chairman, 'not-a-uuid', 'approve')).status).toBe(422);
    expect((await t.rest('GET', '/api/v1/forge/approvals?status=maybe', { caller: chairman })).status).toBe(
      422,
    );
    expect((await traces(agent.tenantId)).rows[0]?.status).toBe('pending');
    expect(server.received.length).toBe(sent);
  });

  it('pages the inbox with a cursor, newest first', async () => {
    const { agent, chairman, connectorId } = await tenant();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await invoke(agent, connectorId)).body.id);
    const first = await t.rest('GET', '/api/v1/forge/approvals?limit=2', { caller: chairman });
    const second = await t.rest('GET', `/api/v1/forge/approvals?limit=2&cursor=${first.body.next_cursor}`, {
      caller: chairman,
    });
    expect([...first.body.data, ...second.body.data].map((row: { id: string }) => row.id)).toEqual(
      ids.reverse(),
    );
    expect(second.body.next_cursor).toBeNull();
  });
});

describe('the connectorCallApprovalChanged subscription', () => {
  // One instance of its own: the two above share a database, and either relay may publish an event.
  let solo: TestApp;
  let running: RunningServer;
  beforeAll(async () => {
    solo = await createTestApp({ env, egress });
    running = await listen(solo);
  });
  afterAll(async () => {
    await running?.close();
    await solo?.close();
  });

  it('delivers new and decided requests to an approver, and an agent only its own', async () => {
    const { agent, chairman, connectorId } = await tenant(gateWrites, solo);
    const otherAgent = await solo.caller(['agent'], { tenantId: agent.tenantId });
    const agentSubscription = await subscribe(running.url, agent, ApprovalChanged, { connectorId });
    const subscription = await subscribe(running.url, chairman, ApprovalChanged, { connectorId });
    try {
      await invoke(otherAgent, connectorId, createCustomer, solo);
      const { id } = (await invoke(agent, connectorId, createCustomer, solo)).body;
      expect((await subscription.next()).data?.connectorCallApprovalChanged).toMatchObject({
        requestedBy: otherAgent.sub,
      });
      expect((await agentSubscription.next()).data?.connectorCallApprovalChanged).toMatchObject({
        approvalId: id,
        requestedBy: agent.sub,
      });
      expect((await subscription.next()).data?.connectorCallApprovalChanged).toEqual({
        approvalId: id,
        connectorId,
        method: 'POST',
        path: '/customers',
        status: 'pending',
        requestedBy: agent.sub,
        decidedBy: null,
      });
      await decide(chairman, id, 'reject', {}, solo);
      expect((await subscription.next()).data?.connectorCallApprovalChanged).toMatchObject({
        approvalId: id,
        status: 'rejected',
        decidedBy: chairman.sub,
      });
      expect((await agentSubscription.next()).data?.connectorCallApprovalChanged).toMatchObject({
        approvalId: id,
        status: 'rejected',
      });
    } finally {
      await Promise.all([subscription.close(), agentSubscription.close()]);
    }
  });

  it('leaves approval events out of a member’s tenant stream', async () => {
    const { agent, member, connectorId } = await tenant(gateWrites, solo);
    const stream = await subscribe(running.url, member, MemberEvents, {});
    try {
      expect((await stream.next()).data?.events.__typename).toBe('EventStreamStarted');
      expect((await invoke(agent, connectorId, createCustomer, solo)).status).toBe(202);
      const ungated = { endpoint: { method: 'GET', path: '/customers' } };
      expect((await invoke(agent, connectorId, ungated, solo)).status).toBe(200);
      expect((await stream.next()).data?.events.__typename).toBe('ConnectorInvokedEvent');
    } finally {
      await stream.close();
    }
  });
});
