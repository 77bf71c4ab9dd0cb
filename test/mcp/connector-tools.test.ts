import { beforeAll, describe, expect, it } from 'vitest';
import { connectorToolName } from '../../mcp/connector-tools.js';
import type { RunningServer } from '../../src/server.js';
import {
  customerCreated,
  UPSTREAM_HOST as HOST,
  POST_CUSTOMER,
  withConnectorUpstream,
} from '../rest/connectors-support.js';
import { queueTasks } from '../schema/agents-budgets-support.js';
import type { Caller, TestApp } from '../support/app.js';
import type { TestHttpsServer } from '../support/https-server.js';
import { BATCH_REFUSED, callTool, connectMcp, postMcp } from './mcp-support.js';

let upstream: TestHttpsServer;
let t: TestApp;
let server: RunningServer;

withConnectorUpstream((started) => {
  ({ upstream, t, server } = started);
  upstream.route('/v1/customers', (request, body, response) => {
    if (request.method === 'POST') {
      customerCreated(response, body);
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify([{ id: 'cus_1', email: 'ada@example.com', query: request.url }]));
  });
});

function template(name: string) {
  return {
    name,
    base_url: `https://${HOST}:${upstream.port}/v1`,
    auth_type: 'none',
    description: 'Customer records of the billing system.',
    endpoints: [
      {
        method: 'GET',
        path: '/customers',
        query_params: { limit: { type: 'integer', minimum: 1 }, status: { enum: ['open', 'closed'] } },
      },
      POST_CUSTOMER,
    ],
    rate_limits: { per_minute: 60 },
  };
}

async function tenantWithConnector(name = 'Billing API') {
  const chairman = await t.caller(['chairman']);
  const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
  const created = await t.rest('POST', '/api/v1/forge/connectors', {
    caller: chairman,
    body: { template: template(name) },
  });
  expect(created.status).toBe(201);
  const connectorId = created.body.id as string;
  /** The name of this connector's tool for `METHOD path`. */
  const tool = (method: string, path: string, connectorName = name) =>
    connectorToolName({ id: connectorId, name: connectorName }, method, path);
  return { chairman, agent, connectorId, tool };
}

const invokeAudits = (tenantId: string) =>
  t.db.prisma.auditEntry.count({ where: { tenantId, action: 'connector.invoke' } });

interface FoundEndpoint {
  name: string;
  method: string;
  path: string;
  connector: string;
}

/** Every endpoint search_connector_endpoints finds for the caller, page after page. */
async function everyEndpoint(caller: Caller): Promise<FoundEndpoint[]> {
  const client = await connectMcp(server, caller);
  const found: FoundEndpoint[] = [];
  let cursor: string | undefined;
  do {
    const page = await callTool(client, 'search_connector_endpoints', {
      limit: 25,
      ...(cursor ? { cursor } : {}),
    });
    found.push(...page.structuredContent.endpoints);
    cursor = page.structuredContent.nextCursor;
  } while (cursor);
  await client.close();
  return found;
}

/** The names of the endpoints the caller finds. */
const toolNames = async (caller: Caller) => (await everyEndpoint(caller)).map((endpoint) => endpoint.name);

describe('MCP connector tools', () => {
  it('lists no tool per endpoint; an endpoint’s name from search is described, with its schema', async () => {
    const { agent, tool } = await tenantWithConnector('Billing API');
    const client = await connectMcp(server, agent);
    const { tools } = await client.listTools();
    expect(tools.filter((listed) => listed.name.includes('__'))).toEqual([]);
    expect(tool('GET', '/customers')).toMatch(/^billing_api_[a-z2-7]{26}__get_customers$/);
    const described = await callTool(client, 'describe_connector_endpoints', {
      names: [tool('GET', '/customers'), tool('POST', '/customers')],
    });
    const [get, post] = described.structuredContent.endpoints;
    expect(get.about).toBe('Customer records of the billing system.');
    expect(get.inputSchema.properties.query).toMatchObject({
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1 }, status: { enum: ['open', 'closed'] } },
    });
    expect(post.inputSchema.required).toEqual(['body']);
    expect(post.inputSchema.properties.body).toMatchObject({ required: ['email'] });
    await client.close();
  });

  it('still calls an endpoint by its own name (unlisted) through invokeConnector: upstream reached, audited', async () => {
    const { agent, tool } = await tenantWithConnector();
    const client = await connectMcp(server, agent);
    const listed = await callTool(client, tool('GET', '/customers'), {
      query: { limit: 5, status: 'open' },
    });
    expect(listed.isError).toBeUndefined();
    expect(listed.structuredContent.response).toMatchObject({
      status: 200,
      body: [{ id: 'cus_1', email: 'ada@example.com', query: '/v1/customers?limit=5&status=open' }],
    });
    const created = await callTool(client, tool('POST', '/customers'), {
      body: { email: 'bo@example.com' },
    });
    expect(created.structuredContent.response).toMatchObject({
      status: 201,
      body: { id: 'cus_2', email: 'bo@example.com' },
    });
    expect(await invokeAudits(agent.tenantId)).toBe(2);
    await client.close();
  });

  it('refuses arguments the endpoint’s schemas refuse with a JSON-RPC error, sending and auditing nothing', async () => {
    const { agent, tool } = await tenantWithConnector();
    const client = await connectMcp(server, agent);
    const sent = upstream.received.length;
    await expect(
      callTool(client, tool('GET', '/customers'), { query: { limit: 'many' } }),
    ).rejects.toMatchObject({ code: -32602, data: { detail: [{ loc: ['query', 'limit'] }] } });
    await expect(callTool(client, tool('POST', '/customers'), { body: { name: 'x' } })).rejects.toMatchObject(
      {
        code: -32602,
      },
    );
    await expect(callTool(client, tool('POST', '/customers'), {})).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Missing required argument: body'),
    });
    await expect(
      callTool(client, tool('GET', '/customers'), { body: { too: 'much' } }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown argument: body') });
    expect(upstream.received.length).toBe(sent);
    expect(await invokeAudits(agent.tenantId)).toBe(0);
    await client.close();
  });

  it('keeps a gated endpoint’s call for approval instead of sending it', async () => {
    const { chairman, agent, connectorId, tool } = await tenantWithConnector();
    const policy = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}/approval-policy`, {
      caller: chairman,
      body: { rules: [{ methods: ['POST'] }] },
    });
    expect(policy.status).toBe(200);
    const client = await connectMcp(server, agent);
    const sent = upstream.received.length;
    const kept = await callTool(client, tool('POST', '/customers'), { body: { email: 'cy@example.com' } });
    expect(kept.structuredContent.approval).toMatchObject({
      approvalStatus: 'pending',
      approverRoles: ['chairman'],
    });
    expect(upstream.received.length).toBe(sent);
    await client.close();
  });

  it('follows connector changes: an edited template’s endpoints are listed at once, a disabled connector’s tools leave', async () => {
    const { chairman, agent, connectorId, tool } = await tenantWithConnector('Ledger');
    expect(await toolNames(agent)).toContain(tool('GET', '/customers'));
    const edited = template('Ledger');
    edited.endpoints.push({ method: 'GET', path: '/invoices/{number}' } as never);
    const updated = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}`, {
      caller: chairman,
      body: { template: edited },
    });
    expect(updated.status).toBe(200);
    expect(await toolNames(agent)).toContain(tool('GET', '/invoices/{number}'));

    await t.db.prisma.connector.update({ where: { id: connectorId }, data: { status: 'disabled' } });
    expect((await toolNames(agent)).filter((name) => name.startsWith('ledger'))).toEqual([]);
    const client = await connectMcp(server, agent);
    await expect(callTool(client, tool('GET', '/customers'), {})).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it('never lists nor calls another tenant’s connector tools', async () => {
    const { tool } = await tenantWithConnector('Secret Vault');
    const stranger = await t.caller(['agent']);
    expect((await toolNames(stranger)).filter((name) => name.startsWith('secret_vault'))).toEqual([]);
    const client = await connectMcp(server, stranger);
    const sent = upstream.received.length;
    await expect(callTool(client, tool('GET', '/customers'), {})).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool'),
    });
    expect(upstream.received.length).toBe(sent);
    await client.close();
  });

  it('gives an operator the connector tools and not the task tools', async () => {
    const { chairman, tool } = await tenantWithConnector('Ops API');
    const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
    expect(await toolNames(operator)).toContain(tool('GET', '/customers'));
    const client0 = await connectMcp(server, operator);
    const names = (await client0.listTools()).tools.map((listed) => listed.name);
    await client0.close();
    expect(names).toContain('call_connector_endpoint');
    expect(names).not.toContain('claim_next_task');
    expect(names).toContain('read_budget');
    const client = await connectMcp(server, operator);
    const refused = await callTool(client, 'claim_next_task', { role: 'cfo' });
    expect(refused).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'Not allowed for your role' }],
    });
    await client.close();
  });
});

describe('MCP connector tool names', () => {
  const statusTemplate = (name: string, base: string, paths = ['/status']) => ({
    name,
    base_url: `https://${HOST}:${upstream.port}${base}`,
    auth_type: 'none',
    endpoints: paths.map((path) => ({ method: 'GET', path })),
  });

  async function create(chairman: Caller, body: Record<string, unknown>) {
    const created = await t.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: { template: body },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  }

  /** `connector: METHOD path` → endpoint name, for every endpoint the caller finds. */
  async function namesByTitle(caller: Caller): Promise<Record<string, string>> {
    return Object.fromEntries(
      (await everyEndpoint(caller)).map((found) => [
        `${found.connector}: ${found.method} ${found.path}`,
        found.name,
      ]),
    );
  }

  const reached = (prefix: string) => upstream.received.filter((request) => request.url.startsWith(prefix));

  beforeAll(() => {
    for (const base of ['/a', '/b', '/c']) {
      for (const path of ['/status', '/x-y', '/x_y']) {
        upstream.route(`${base}${path}`, (_request, _body, response) => {
          response
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ at: base + path }));
        });
      }
    }
  });

  it('never hands a held name to another connector when one is renamed: the old name answers an error', async () => {
    const { chairman, agent } = await tenantWithConnector('Unrelated');
    const a = await create(chairman, statusTemplate('Billing API', '/a'));
    await create(chairman, statusTemplate('billing-api', '/b'));
    const before = await namesByTitle(agent);
    const heldA = before['Billing API: GET /status'] as string;
    const heldB = before['billing-api: GET /status'] as string;
    expect(heldA).not.toBe(heldB);

    const renamed = await t.rest('PUT', `/api/v1/forge/connectors/${a}`, {
      caller: chairman,
      body: { template: statusTemplate('Old Billing', '/a') },
    });
    expect(renamed.status).toBe(200);

    const after = await namesByTitle(agent);
    // The other connector's name did not move either.
    expect(after['billing-api: GET /status']).toBe(heldB);
    expect(Object.values(after)).not.toContain(heldA);
    const client = await connectMcp(server, agent);
    const reachedB = reached('/b/').length;
    await expect(callTool(client, heldA, {})).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining(`Unknown tool: ${heldA}`),
    });
    expect(reached('/b/').length).toBe(reachedB);
    // The renamed connector's tool reaches its own URL under its new name.
    const viaNewName = await callTool(client, after['Old Billing: GET /status'] as string, {});
    expect(viaNewName.structuredContent.response).toMatchObject({ status: 200, body: { at: '/a/status' } });
    const viaB = await callTool(client, heldB, {});
    expect(viaB.structuredContent.response).toMatchObject({ status: 200, body: { at: '/b/status' } });
    await client.close();
  });

  it('keeps every name when a connector of the same name is created, and when a sibling endpoint is removed', async () => {
    const chairman = await t.caller(['chairman']);
    const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
    const c = await create(chairman, statusTemplate('Ledger', '/c', ['/x-y', '/x_y']));
    const before = await namesByTitle(agent);
    const dash = before['Ledger: GET /x-y'] as string;
    const underscore = before['Ledger: GET /x_y'] as string;
    expect(dash).not.toBe(underscore);

    await create(chairman, statusTemplate('LEDGER!', '/b'));
    const edited = await t.rest('PUT', `/api/v1/forge/connectors/${c}`, {
      caller: chairman,
      body: { template: statusTemplate('Ledger', '/c', ['/x_y']) },
    });
    expect(edited.status).toBe(200);
    const after = await namesByTitle(agent);
    expect(after['Ledger: GET /x_y']).toBe(underscore);
    expect(Object.values(after)).not.toContain(dash);

    const client = await connectMcp(server, agent);
    const sent = upstream.received.length;
    await expect(callTool(client, dash, {})).rejects.toMatchObject({ code: -32602 });
    expect(upstream.received.length).toBe(sent);
    await client.close();
  });

  it('answers a name of another tenant’s connector as unknown, sending nothing', async () => {
    const owner = await t.caller(['chairman']);
    const ownerAgent = await t.caller(['agent'], { tenantId: owner.tenantId });
    await create(owner, statusTemplate('Payroll', '/a'));
    const name = (await namesByTitle(ownerAgent))['Payroll: GET /status'] as string;
    const stranger = await t.caller(['agent']);
    const client = await connectMcp(server, stranger);
    const sent = upstream.received.length;
    await expect(callTool(client, name, {})).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(new RegExp(`Unknown tool: ${name}$`)),
    });
    expect(upstream.received.length).toBe(sent);
    await client.close();
  });

  it('never lets a connector named complete_task shadow the task tool', async () => {
    const { chairman, agent } = await tenantWithConnector('Unrelated');
    await create(chairman, statusTemplate('complete_task', '/a'));
    const client = await connectMcp(server, agent);
    const { tools } = await client.listTools();
    expect(tools.filter((tool) => tool.name === 'complete_task')).toEqual([
      expect.objectContaining({ annotations: expect.objectContaining({ openWorldHint: false }) }),
    ]);
    const sent = upstream.received.length;
    const refused = await callTool(client, 'complete_task', {
      taskId: '00000000-0000-4000-8000-000000000000',
      tokensUsed: 1,
      costUsd: 0,
    });
    expect(refused.structuredContent.error).toMatchObject({ code: 'NOT_FOUND' });
    expect(upstream.received.length).toBe(sent);
    await client.close();
  });
});

describe('the size of the MCP tool list', () => {
  it('lists one page of the same tools for 12 connectors of 30 endpoints; search finds every endpoint once', async () => {
    const chairman = await t.caller(['chairman']);
    const agent = await t.caller(['agent'], { tenantId: chairman.tenantId });
    const connectors: { id: string; name: string }[] = [];
    for (let index = 0; index < 12; index += 1) {
      const name = `Catalog ${index}`;
      const created = await t.rest('POST', '/api/v1/forge/connectors', {
        caller: chairman,
        body: {
          template: {
            name,
            base_url: `https://${HOST}:${upstream.port}/v1`,
            auth_type: 'none',
            endpoints: Array.from({ length: 30 }, (_, item) => ({ method: 'GET', path: `/items/i${item}` })),
          },
        },
      });
      expect(created.status).toBe(201);
      connectors.push({ id: created.body.id, name });
    }
    const client = await connectMcp(server, agent);
    const page = await client.listTools();
    expect(page.nextCursor).toBeUndefined();
    expect(page.tools.length).toBe(10 + 3);
    await expect(client.listTools({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: -32602 });
    await client.close();

    const listed = await toolNames(agent);
    const expected = connectors.flatMap((connector) =>
      Array.from({ length: 30 }, (_, item) => connectorToolName(connector, 'GET', `/items/i${item}`)),
    );
    expect(listed.length).toBe(new Set(listed).size);
    expect([...listed].sort()).toEqual(expected.sort());
  });

  it('refuses a JSON-RPC batch before running any of its messages', async () => {
    const agent = await t.caller(['agent']);
    await queueTasks(t, agent.tenantId, 'cfo', 3);
    const claim = (id: number) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'claim_next_task', arguments: { role: 'cfo' } },
    });
    const refused = await postMcp(server, JSON.stringify([claim(1), claim(2), claim(3)]), {
      authorization: `Bearer ${agent.token}`,
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual(BATCH_REFUSED);
    expect(await t.db.prisma.task.count({ where: { tenantId: agent.tenantId, status: 'pending' } })).toBe(3);
  });
});
