import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import {
  type ConnectorUpstream,
  UPSTREAM_HOST as HOST,
  startConnectorUpstream,
} from '../rest/connectors-support.js';
import type { Caller, TestApp } from '../support/app.js';
import type { TestHttpsServer } from '../support/https-server.js';
import { callTool, connectMcp } from './mcp-support.js';

let app: ConnectorUpstream;
let upstream: TestHttpsServer;
let t: TestApp;
let server: RunningServer;

beforeAll(async () => {
  app = await startConnectorUpstream();
  ({ upstream, t, server } = app);
  upstream.route('/v1/customers', (request, body, response) => {
    if (request.method === 'POST') {
      response
        .writeHead(201, { 'content-type': 'application/json' })
        .end(JSON.stringify({ id: 'cus_2', ...JSON.parse(body) }));
      return;
    }
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify([{ id: 'cus_1', email: 'ada@example.com', query: request.url }]));
  });
});
afterAll(() => app?.close());

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
      {
        method: 'POST',
        path: '/customers',
        body_schema: {
          type: 'object',
          required: ['email'],
          properties: { email: { type: 'string' } },
          additionalProperties: false,
        },
      },
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
  return { chairman, agent, connectorId: created.body.id as string };
}

const invokeAudits = (tenantId: string) =>
  t.db.prisma.auditEntry.count({ where: { tenantId, action: 'connector.invoke' } });

const toolNames = async (caller: Caller) => {
  const client = await connectMcp(server, caller);
  const { tools } = await client.listTools();
  await client.close();
  return tools.map((tool) => tool.name);
};

describe('MCP connector tools', () => {
  it('lists each endpoint of the tenant’s connectors as a tool, with its schema and description', async () => {
    const { agent } = await tenantWithConnector('Billing API');
    const client = await connectMcp(server, agent);
    const { tools } = await client.listTools();
    const get = tools.find((tool) => tool.name === 'billing_api__get_customers');
    const post = tools.find((tool) => tool.name === 'billing_api__post_customers');
    expect(get?.description).toContain('Customer records of the billing system.');
    expect(get?.inputSchema.properties?.query).toMatchObject({
      type: 'object',
      properties: { limit: { type: 'integer', minimum: 1 }, status: { enum: ['open', 'closed'] } },
    });
    expect(get?.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    expect(post?.inputSchema.required).toEqual(['body']);
    expect(post?.inputSchema.properties?.body).toMatchObject({ required: ['email'] });
    await client.close();
  });

  it('calls the endpoint end to end through invokeConnector: upstream reached, audited', async () => {
    const { agent } = await tenantWithConnector();
    const client = await connectMcp(server, agent);
    const listed = await callTool(client, 'billing_api__get_customers', {
      query: { limit: 5, status: 'open' },
    });
    expect(listed.isError).toBeUndefined();
    expect(listed.structuredContent.response).toMatchObject({
      status: 200,
      body: [{ id: 'cus_1', email: 'ada@example.com', query: '/v1/customers?limit=5&status=open' }],
    });
    const created = await callTool(client, 'billing_api__post_customers', {
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
    const { agent } = await tenantWithConnector();
    const client = await connectMcp(server, agent);
    const sent = upstream.received.length;
    await expect(
      callTool(client, 'billing_api__get_customers', { query: { limit: 'many' } }),
    ).rejects.toMatchObject({ code: -32602, data: { detail: [{ loc: ['query', 'limit'] }] } });
    await expect(
      callTool(client, 'billing_api__post_customers', { body: { name: 'x' } }),
    ).rejects.toMatchObject({
      code: -32602,
    });
    await expect(callTool(client, 'billing_api__post_customers', {})).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Missing required argument: body'),
    });
    await expect(
      callTool(client, 'billing_api__get_customers', { body: { too: 'much' } }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining('Unknown argument: body') });
    expect(upstream.received.length).toBe(sent);
    expect(await invokeAudits(agent.tenantId)).toBe(0);
    await client.close();
  });

  it('keeps a gated endpoint’s call for approval instead of sending it', async () => {
    const { chairman, agent, connectorId } = await tenantWithConnector();
    const policy = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}/approval-policy`, {
      caller: chairman,
      body: { rules: [{ methods: ['POST'] }] },
    });
    expect(policy.status).toBe(200);
    const client = await connectMcp(server, agent);
    const sent = upstream.received.length;
    const kept = await callTool(client, 'billing_api__post_customers', { body: { email: 'cy@example.com' } });
    expect(kept.structuredContent.approval).toMatchObject({
      approvalStatus: 'pending',
      approverRoles: ['chairman'],
    });
    expect(upstream.received.length).toBe(sent);
    await client.close();
  });

  it('follows connector changes: an edited template’s endpoints are listed at once, a disabled connector’s tools leave', async () => {
    const { chairman, agent, connectorId } = await tenantWithConnector('Ledger');
    expect(await toolNames(agent)).toContain('ledger__get_customers');
    const edited = template('Ledger');
    edited.endpoints.push({ method: 'GET', path: '/invoices/{number}' } as never);
    const updated = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}`, {
      caller: chairman,
      body: { template: edited },
    });
    expect(updated.status).toBe(200);
    expect(await toolNames(agent)).toContain('ledger__get_invoices_number');

    await t.db.prisma.connector.update({ where: { id: connectorId }, data: { status: 'disabled' } });
    expect((await toolNames(agent)).filter((name) => name.startsWith('ledger'))).toEqual([]);
    const client = await connectMcp(server, agent);
    await expect(callTool(client, 'ledger__get_customers', {})).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it('never lists nor calls another tenant’s connector tools', async () => {
    await tenantWithConnector('Secret Vault');
    const stranger = await t.caller(['agent']);
    expect((await toolNames(stranger)).filter((name) => name.startsWith('secret_vault'))).toEqual([]);
    const client = await connectMcp(server, stranger);
    const sent = upstream.received.length;
    await expect(callTool(client, 'secret_vault__get_customers', {})).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool'),
    });
    expect(upstream.received.length).toBe(sent);
    await client.close();
  });

  it('gives an operator the connector tools and not the task tools', async () => {
    const { chairman } = await tenantWithConnector('Ops API');
    const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
    const names = await toolNames(operator);
    expect(names).toContain('ops_api__get_customers');
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
