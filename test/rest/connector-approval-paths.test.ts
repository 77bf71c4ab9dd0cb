import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import type { TestHttpsServer } from '../support/https-server.js';
import { UPSTREAM_HOST as HOST, sealingKey, startUpstream } from './connectors-support.js';

// A chairman's policy gates what goes out: the path of the request as sent (base_url's path and the
// endpoint's, normalised), whatever an operator's edit of the template spells.

let server: TestHttpsServer;
let database: TestDatabase;
let t: TestApp;
/** A second instance on the same database: requests are decided on the other instance. */
let other: TestApp;

beforeAll(async () => {
  const upstream = await startUpstream();
  ({ server } = upstream);
  const { egress } = upstream;
  const env = { ...upstream.allow, ...sealingKey() };
  database = await createTestDatabase();
  [t, other] = await Promise.all([
    createTestApp({ database, env, egress }),
    createTestApp({ database, env, egress }),
  ]);
  server.route('/payments/refund', (_request, body, response) => {
    response.writeHead(201, { 'content-type': 'application/json' }).end(body);
  });
});

afterAll(async () => {
  await Promise.all([t?.close(), other?.close()]);
  await database?.drop();
  await server?.close();
});

const origin = () => `https://${HOST}:${server.port}`;

function template(baseUrl: string, path: string) {
  return {
    name: 'Payments',
    base_url: baseUrl,
    auth_type: 'none',
    endpoints: [{ method: 'POST', path, body_schema: { type: 'object' } }],
  };
}

interface Tenant {
  chairman: Caller;
  operator: Caller;
  agent: Caller;
  connectorId: string;
}

/** A connector calling POST /payments/refund, every POST under /payments gated by the chairman. */
async function gatedTenant(): Promise<Tenant> {
  const chairman = await t.caller(['chairman']);
  const same = { tenantId: chairman.tenantId };
  const [operator, agent] = await Promise.all([t.caller(['operator'], same), t.caller(['agent'], same)]);
  const created = await t.rest('POST', '/api/v1/forge/connectors', {
    caller: chairman,
    body: { template: template(origin(), '/payments/refund') },
  });
  expect(created.status).toBe(201);
  const connectorId = created.body.id as string;
  const policy = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}/approval-policy`, {
    caller: chairman,
    body: { rules: [{ methods: ['POST'], path: '/payments/**' }], approver_roles: ['chairman'] },
  });
  expect(policy.status).toBe(200);
  return { chairman, operator, agent, connectorId };
}

const refund = (path: string) => ({
  endpoint: { method: 'POST', path },
  input: { body: { charge: 'ch_1', amount: 1200 } },
});

describe('an approval policy after an operator respelled the gated path', () => {
  it.each([
    ['a dot segment', '', '/./payments/refund', '/payments/refund'],
    ['an encoded letter', '', '/%70ayments/refund', '/payments/refund'],
    ['the gated segment moved into base_url', '/payments', '/refund', '/payments/refund'],
    ['the gated segment in base_url, with a trailing slash', '/payments/', '/refund', '/payments/refund'],
    ['another case', '', '/Payments/refund', '/Payments/refund'],
    ['a repeated slash and a trailing one', '', '/payments//refund/', '/payments//refund/'],
    ['an encoded slash', '', '/payments%2frefund', '/payments%2Frefund'],
  ])(
    'still gates the call written with %s; the approved call goes out once, as matched',
    async (_case, basePath, path, sentPath) => {
      const { chairman, operator, agent, connectorId } = await gatedTenant();
      const edit = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}`, {
        caller: operator,
        body: { template: template(`${origin()}${basePath}`, path) },
      });
      expect(edit.status).toBe(200);
      const before = server.received.length;

      const kept = await t.rest('POST', `/api/v1/forge/connectors/${connectorId}/invoke`, {
        caller: agent,
        body: refund(path),
      });
      expect(kept.status).toBe(202);
      expect(kept.body).toMatchObject({ status: 'pending', path, connector_version: 3 });
      expect(server.received.length).toBe(before);

      const approved = await other.rest('POST', `/api/v1/forge/approvals/${kept.body.id}/approve`, {
        caller: chairman,
        body: {},
      });
      expect(approved.status).toBe(200);
      expect(approved.body).toMatchObject({ status: 'approved', call: { outcome: expect.any(String) } });
      // Exactly one call, to the URL that was matched.
      expect(server.received.slice(before).map((request) => `${request.method} ${request.url}`)).toEqual([
        `POST ${sentPath}`,
      ]);
    },
  );
});

describe('an approval policy and a method override', () => {
  it('gates a call whose header or _method parameter asks the server for a gated method', async () => {
    const { operator, agent, connectorId } = await gatedTenant();
    const edit = await t.rest('PUT', `/api/v1/forge/connectors/${connectorId}`, {
      caller: operator,
      body: {
        template: {
          ...template(origin(), '/payments/refund'),
          endpoints: [
            { method: 'GET', path: '/payments/refund', query_params: { _method: { type: 'string' } } },
            { method: 'PUT', path: '/payments/refund?_method=POST' },
          ],
        },
      },
    });
    expect(edit.status).toBe(200);
    const before = server.received.length;
    for (const body of [
      {
        endpoint: { method: 'GET', path: '/payments/refund' },
        input: { headers: { 'X-HTTP-Method-Override': 'POST' } },
      },
      { endpoint: { method: 'GET', path: '/payments/refund' }, input: { query: { _method: 'post' } } },
      { endpoint: { method: 'PUT', path: '/payments/refund?_method=POST' } },
    ]) {
      const kept = await t.rest('POST', `/api/v1/forge/connectors/${connectorId}/invoke`, {
        caller: agent,
        body,
      });
      expect(kept.status, JSON.stringify(body)).toBe(202);
    }
    const ungated = await t.rest('POST', `/api/v1/forge/connectors/${connectorId}/invoke`, {
      caller: agent,
      body: { endpoint: { method: 'GET', path: '/payments/refund' } },
    });
    expect(ungated.status).toBe(200);
    expect(server.received.slice(before).map((request) => `${request.method} ${request.url}`)).toEqual([
      'GET /payments/refund',
    ]);
  });
});
