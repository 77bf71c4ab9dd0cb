import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { RunningServer } from '../../src/server.js';
import { REBINDING_NAMES } from '../fixtures/hostile-base-urls.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { AuditLog } from '../support/audit.js';
import type { TestHttpsServer } from '../support/https-server.js';
import { listen, subscribe } from '../support/ws.js';
import {
  customerCreated,
  UPSTREAM_HOST as HOST,
  OTHER_UPSTREAM_HOST as OTHER_HOST,
  sealingKey,
  startUpstream,
} from './connectors-support.js';

const InvokeConnector = graphql(`
  mutation InvokeConnectorForTest($id: ID!, $endpoint: ConnectorEndpointRefInput!, $input: ConnectorCallInput) {
    invokeConnector(id: $id, endpoint: $endpoint, input: $input) {
      ... on ConnectorInvocation {
        connectorId
        method
        path
        status
        headers
        body
        bytes
        durationMs
        redirects
        responseValidation {
          valid
          errors {
            path
            message
          }
        }
      }
    }
  }
`);

const TestConnector = graphql(`
  mutation TestConnectorForTest($id: ID!) {
    testConnector(id: $id) {
      connectorId
      method
      url
      status
      durationMs
    }
  }
`);

const ConnectorInvoked = graphql(`
  subscription ConnectorInvokedForTest($connectorId: ID) {
    connectorInvoked(connectorId: $connectorId) {
      eventId
      tenantId
      connectorId
      kind
      method
      path
      outcome
      status
      responseBytes
      actor
    }
  }
`);

let server: TestHttpsServer;
let t: TestApp;
/** The service with CONNECTOR_SECRETS_KEY as well, for connectors that need a credential. */
let sealed: TestApp;
/** The same service without CONNECTOR_EGRESS_ALLOW. */
let closed: TestApp;

beforeAll(async () => {
  const upstream = await startUpstream(Object.fromEntries(REBINDING_NAMES));
  ({ server } = upstream);
  const { egress, allow } = upstream;
  [t, closed, sealed] = await Promise.all([
    createTestApp({ env: allow, egress }),
    createTestApp({ egress }),
    createTestApp({ env: { ...allow, ...sealingKey() }, egress }),
  ]);

  server.route('/v1', (_request, _body, response) => void response.writeHead(204).end());
  server.route('/v1/customers', (request, body, response) => {
    if (request.method === 'POST') {
      customerCreated(response, body);
      return;
    }
    response
      .writeHead(200, {
        'content-type': 'application/json',
        'set-cookie': 'session=secret',
        'www-authenticate': 'Bearer',
        'x-ratelimit-remaining': '99',
      })
      .end(JSON.stringify([{ id: 'cus_1', email: 'ada@example.com' }]));
  });
  server.route('/v1/invoices', (_request, _body, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ number: 7 }]));
  });
  server.route('/v1/report', (_request, _body, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('not json');
  });
  server.route('/v1/fail', (_request, _body, response) => {
    response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"boom"}');
  });
  server.route('/v1/moved', (_request, _body, response) => {
    response.writeHead(302, { location: `https://${OTHER_HOST}:${server.port}/v1/customers` }).end();
  });
  server.route('/v1/export', (_request, _body, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' }).end('z'.repeat(2 * 1024 * 1024));
  });
});
afterAll(async () => {
  await Promise.all([t?.close(), closed?.close(), sealed?.close()]);
  await server?.close();
});

function template(name: string, host = HOST) {
  return {
    name,
    base_url: `https://${host}:${server.port}/v1`,
    auth_type: 'none',
    endpoints: [
      {
        method: 'GET',
        path: '/customers',
        query_params: { limit: { type: 'integer', minimum: 1 }, status: { enum: ['open', 'closed'] } },
        response_schema: { type: 'array', items: { type: 'object', required: ['id'] } },
      },
      {
        method: 'POST',
        path: '/customers',
        body_schema: {
          type: 'object',
          required: ['email'],
          properties: {
            email: { type: 'string', format: 'email' },
            tags: { type: 'array', items: { type: 'string' } },
          },
          additionalProperties: false,
        },
      },
      { method: 'GET', path: '/invoices', response_schema: { type: 'array', items: { required: ['id'] } } },
      { method: 'GET', path: '/report', response_schema: { type: 'object' } },
      { method: 'DELETE', path: '/fail' },
      { method: 'GET', path: '/moved' },
      { method: 'GET', path: '/export' },
    ],
  };
}

interface Tenant {
  chairman: Caller;
  operator: Caller;
  agent: Caller;
  member: Caller;
  connectorId: string;
}

async function tenant(app: TestApp = t, name = 'Payments'): Promise<Tenant> {
  const chairman = await app.caller(['chairman']);
  const same = { tenantId: chairman.tenantId };
  const [operator, agent, member] = await Promise.all([
    app.caller(['operator'], same),
    app.caller(['agent'], same),
    app.caller(['member'], same),
  ]);
  const created = await app.rest('POST', '/api/v1/forge/connectors', {
    caller: chairman,
    body: { template: template(name) },
  });
  expect(created.status).toBe(201);
  return { chairman, operator, agent, member, connectorId: created.body.id };
}

const invoke = (app: TestApp, caller: Caller, id: string, body: unknown) =>
  app.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, { caller, body });

const getCustomers = {
  endpoint: { method: 'GET', path: '/customers' },
  input: { query: { limit: 2, status: 'open' }, headers: { 'X-Trace': 'trace-1' } },
};

async function auditRows(app: TestApp, tenantId: string) {
  return app.db.prisma.auditEntry.findMany({
    where: { tenantId, action: { in: ['connector.invoke', 'connector.test'] } },
    orderBy: { createdAt: 'asc' },
  });
}

function requestsTo(path: string) {
  return server.received.filter((request) => request.url.startsWith(path));
}

describe('invoking a connector through the allowlisted loopback server', () => {
  it('sends the templated request and answers status, safe headers, body and the schema result', async () => {
    const { operator, connectorId } = await tenant();
    const before = server.received.length;
    const response = await invoke(t, operator, connectorId, getCustomers);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      connector_id: connectorId,
      method: 'GET',
      path: '/customers',
      status: 200,
      headers: {
        'content-type': 'application/json',
        date: expect.any(String),
        'x-ratelimit-remaining': '99',
      },
      body: [{ id: 'cus_1', email: 'ada@example.com' }],
      bytes: 42,
      duration_ms: expect.any(Number),
      redirects: 0,
      response_validation: { valid: true, errors: [] },
    });
    const sent = server.received.slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.url).toBe('/v1/customers?limit=2&status=open');
    expect(sent[0]?.headers).toMatchObject({
      host: `${HOST}:${server.port}`,
      accept: 'application/json',
      'user-agent': 'boardroom-connector/1',
      'x-trace': 'trace-1',
    });
  });

  it('answers the same over GraphQL as over REST', async () => {
    const { agent, connectorId } = await tenant();
    const rest = await invoke(t, agent, connectorId, getCustomers);
    const result = await t.graphql(InvokeConnector, { id: connectorId, ...getCustomers } as never, agent);
    expect(result.errors).toBeUndefined();
    const { headers: _restHeaders, duration_ms: _restDuration, ...restBody } = rest.body;
    const { headers: _headers, durationMs: _duration, ...graphqlBody } = result.data?.invokeConnector ?? {};
    expect(graphqlBody).toEqual({
      connectorId: restBody.connector_id,
      method: restBody.method,
      path: restBody.path,
      status: restBody.status,
      body: restBody.body,
      bytes: restBody.bytes,
      redirects: restBody.redirects,
      responseValidation: restBody.response_validation,
    });
  });

  it('sends a validated JSON body', async () => {
    const { operator, connectorId } = await tenant();
    const response = await invoke(t, operator, connectorId, {
      endpoint: { method: 'POST', path: '/customers' },
      input: { body: { email: 'grace@example.com', tags: ['vip'] } },
    });
    expect(response.body).toMatchObject({
      status: 201,
      body: { id: 'cus_2', email: 'grace@example.com', tags: ['vip'] },
      response_validation: null,
    });
    const sent = requestsTo('/v1/customers').at(-1);
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(sent?.body ?? '')).toEqual({ email: 'grace@example.com', tags: ['vip'] });
  });

  it('reports a response that does not match response_schema, with where and why', async () => {
    const { operator, connectorId } = await tenant();
    const response = await invoke(t, operator, connectorId, {
      endpoint: { method: 'GET', path: '/invoices' },
    });
    expect(response.status).toBe(200);
    expect(response.body.response_validation).toEqual({
      valid: false,
      errors: [{ path: '/0/id', message: "must have required property 'id'" }],
    });
  });

  it('reports a body that is not JSON as not matching response_schema and returns its text', async () => {
    const { operator, connectorId } = await tenant();
    const response = await invoke(t, operator, connectorId, { endpoint: { method: 'GET', path: '/report' } });
    expect(response.body).toMatchObject({
      body: 'not json',
      response_validation: { valid: false, errors: [{ path: '', message: 'the response body is not JSON' }] },
    });
  });

  it('returns a server error as a result with its status', async () => {
    const { operator, connectorId } = await tenant();
    const response = await invoke(t, operator, connectorId, {
      endpoint: { method: 'DELETE', path: '/fail' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 500, body: { error: 'boom' } });
    expect((await auditRows(t, operator.tenantId)).map((row) => row.outcome)).toEqual(['upstream_error']);
  });

  it('probes the base_url with HEAD for testConnector, over REST and GraphQL', async () => {
    const { operator, agent, connectorId } = await tenant();
    const rest = await t.rest('POST', `/api/v1/forge/connectors/${connectorId}/test`, { caller: operator });
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual({
      connector_id: connectorId,
      method: 'HEAD',
      url: `https://${HOST}:${server.port}/v1`,
      status: 204,
      duration_ms: expect.any(Number),
    });
    expect(requestsTo('/v1').at(-1)).toMatchObject({ method: 'HEAD', url: '/v1' });
    const result = await t.graphql(TestConnector, { id: connectorId }, agent);
    expect(result.data?.testConnector).toMatchObject({ connectorId, method: 'HEAD', status: 204 });
    const audits = await auditRows(t, operator.tenantId);
    expect(audits.map((row) => [row.action, row.outcome])).toEqual([
      ['connector.test', 'success'],
      ['connector.test', 'success'],
    ]);
  });
});

describe('who may call a connector', () => {
  it('refuses a member (403 / FORBIDDEN) and sends nothing', async () => {
    const { member, chairman, connectorId } = await tenant();
    const before = server.received.length;
    expect((await invoke(t, member, connectorId, getCustomers)).status).toBe(403);
    expect((await invoke(t, chairman, connectorId, getCustomers)).status).toBe(403);
    expect(
      (await t.rest('POST', `/api/v1/forge/connectors/${connectorId}/test`, { caller: member })).status,
    ).toBe(403);
    const result = await t.graphql(InvokeConnector, { id: connectorId, ...getCustomers } as never, member);
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(server.received.length).toBe(before);
    expect(await auditRows(t, member.tenantId)).toEqual([]);
  });

  it('answers another tenant’s connector as not found (404 / NOT_FOUND) and sends nothing', async () => {
    const { connectorId } = await tenant();
    const outsider = await t.caller(['operator']);
    const before = server.received.length;
    const response = await invoke(t, outsider, connectorId, getCustomers);
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: `Connector ${connectorId} not found` });
    const probe = await t.rest('POST', `/api/v1/forge/connectors/${connectorId}/test`, { caller: outsider });
    expect(probe.status).toBe(404);
    const result = await t.graphql(TestConnector, { id: connectorId }, outsider);
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(server.received.length).toBe(before);
  });

  it('refuses to call a disabled connector (409) and sends nothing', async () => {
    const { operator, connectorId } = await tenant();
    await t.db.prisma.connector.update({ where: { id: connectorId }, data: { status: 'disabled' } });
    const before = server.received.length;
    const response = await invoke(t, operator, connectorId, getCustomers);
    expect(response.status).toBe(409);
    expect(response.body.detail).toBe(
      `Connector ${connectorId} is disabled; only active connectors are called`,
    );
    expect(server.received.length).toBe(before);
  });
});

describe('input checked against the endpoint’s schemas', () => {
  let caller: Caller;
  let connectorId: string;
  beforeAll(async () => {
    ({ operator: caller, connectorId } = await tenant());
  });

  async function refusedDetail(body: unknown) {
    const before = server.received.length;
    const response = await invoke(t, caller, connectorId, body);
    expect(response.status).toBe(422);
    expect(server.received.length).toBe(before);
    expect(await auditRows(t, caller.tenantId)).toEqual([]);
    return response.body.detail;
  }

  it('refuses a query parameter the endpoint does not declare', async () => {
    expect(await refusedDetail({ ...getCustomers, input: { query: { limit: 1, page: 2 } } })).toEqual([
      {
        type: 'extra_forbidden',
        loc: ['body', 'input', 'query', 'page'],
        msg: 'Extra inputs are not permitted',
        input: 2,
      },
    ]);
  });

  it('refuses query values that do not match their schema, at each parameter', async () => {
    expect(await refusedDetail({ ...getCustomers, input: { query: { limit: 0, status: 'lost' } } })).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'input', 'query', 'limit'],
        msg: 'Value error, must be >= 1',
        input: 0,
        ctx: { error: 'must be >= 1' },
      },
      {
        type: 'value_error',
        loc: ['body', 'input', 'query', 'status'],
        msg: 'Value error, must be equal to one of the allowed values',
        input: 'lost',
        ctx: { error: 'must be equal to one of the allowed values' },
      },
    ]);
  });

  it('refuses a body missing a required field, and one with a wrong format, at the exact place', async () => {
    const post = { method: 'POST', path: '/customers' };
    expect(await refusedDetail({ endpoint: post, input: { body: { tags: ['a', 3] } } })).toEqual([
      {
        type: 'missing',
        loc: ['body', 'input', 'body', 'email'],
        msg: 'Field required',
        input: { tags: ['a', 3] },
      },
      {
        type: 'value_error',
        loc: ['body', 'input', 'body', 'tags', 1],
        msg: 'Value error, must be string',
        input: 3,
        ctx: { error: 'must be string' },
      },
    ]);
    expect(await refusedDetail({ endpoint: post, input: { body: { email: 'not-an-address' } } })).toEqual([
      expect.objectContaining({
        type: 'value_error',
        loc: ['body', 'input', 'body', 'email'],
        input: 'not-an-address',
      }),
    ]);
    expect(await refusedDetail({ endpoint: post })).toEqual([
      { type: 'missing', loc: ['body', 'input', 'body'], msg: 'Field required', input: null },
    ]);
  });

  it('refuses a body for a GET endpoint', async () => {
    expect(await refusedDetail({ ...getCustomers, input: { body: { a: 1 } } })).toEqual([
      expect.objectContaining({
        type: 'value_error',
        loc: ['body', 'input', 'body'],
        msg: 'Value error, a GET endpoint takes no body',
      }),
    ]);
  });

  it('refuses an endpoint the template does not have', async () => {
    expect(await refusedDetail({ endpoint: { method: 'PUT', path: '/customers' } })).toEqual([
      expect.objectContaining({
        type: 'value_error',
        loc: ['body', 'endpoint'],
        msg: expect.stringMatching(
          /^Value error, the connector has no endpoint PUT \/customers \(it has GET \/customers, /,
        ),
      }),
    ]);
  });

  it('refuses headers the service sets itself, and invalid header names', async () => {
    const detail = await refusedDetail({
      ...getCustomers,
      input: {
        headers: { Authorization: 'Bearer stolen', Host: 'evil.example', 'bad name': 'x', 'x-ok': 'fine' },
      },
    });
    expect(detail.map((item: { loc: unknown[] }) => item.loc)).toEqual([
      ['body', 'input', 'headers', 'Authorization'],
      ['body', 'input', 'headers', 'Host'],
      ['body', 'input', 'headers', 'bad name'],
    ]);
    expect(detail[0].msg).toBe(
      'Value error, the authorization header is set by the service, not by the caller',
    );
  });

  it('refuses a missing endpoint and an unknown method', async () => {
    expect(await refusedDetail({ input: {} })).toEqual([
      { type: 'missing', loc: ['body', 'endpoint'], msg: 'Field required', input: { input: {} } },
    ]);
    expect((await refusedDetail({ endpoint: { method: 'TRACE', path: '/customers' } }))[0]).toMatchObject({
      type: 'enum',
      loc: ['body', 'endpoint', 'method'],
    });
  });

  it('answers BAD_USER_INPUT with the same places over GraphQL', async () => {
    const result = await t.graphql(
      InvokeConnector,
      { id: connectorId, endpoint: getCustomers.endpoint, input: { query: { limit: 0 } } } as never,
      caller,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [expect.objectContaining({ loc: ['input', 'query', 'limit'], type: 'value_error' })],
    });
  });
});

describe('the egress guard on invocations', () => {
  it('refuses the loopback server without CONNECTOR_EGRESS_ALLOW: 502 EGRESS_REFUSED, audited, nothing sent', async () => {
    const { operator, connectorId } = await tenant(closed);
    const before = server.received.length;
    const response = await invoke(closed, operator, connectorId, getCustomers);
    expect(response.status).toBe(502);
    expect(response.body).toEqual({
      detail: `Connector call failed: ${HOST} resolved to 127.0.0.1, which is a loopback address; outbound connections to it on port ${server.port} are refused`,
    });
    const result = await closed.graphql(TestConnector, { id: connectorId }, operator);
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'EGRESS_REFUSED',
      reason: 'address_refused',
    });
    expect(server.received.length).toBe(before);
    expect((await auditRows(closed, operator.tenantId)).map((row) => [row.action, row.outcome])).toEqual([
      ['connector.invoke', 'address_refused'],
      ['connector.test', 'address_refused'],
    ]);
  });

  it.each(REBINDING_NAMES)(
    'accepts %s at create time and refuses it at connect time, where it resolves to %s',
    async (name, address) => {
      const chairman = await closed.caller(['chairman']);
      const operator = await closed.caller(['operator'], { tenantId: chairman.tenantId });
      const created = await closed.rest('POST', '/api/v1/forge/connectors', {
        caller: chairman,
        body: { template: { name: 'Rebinding', base_url: `https://${name}/v1`, auth_type: 'none' } },
      });
      expect(created.status).toBe(201);
      const result = await closed.graphql(TestConnector, { id: created.body.id }, operator);
      expect(result.errors?.[0]?.message).toMatch(
        new RegExp(`^Connector call failed: ${name.replaceAll('.', '\\.')} resolved to `),
      );
      expect(result.errors?.[0]?.message).toContain(`resolved to ${address}, which `);
      expect(result.errors?.[0]?.extensions).toMatchObject({
        code: 'EGRESS_REFUSED',
        reason: 'address_refused',
      });
    },
  );

  it('refuses a redirect to another host (502, redirect_refused) after the first request only', async () => {
    const { operator, connectorId } = await tenant();
    const response = await invoke(t, operator, connectorId, { endpoint: { method: 'GET', path: '/moved' } });
    expect(response.status).toBe(502);
    expect(response.body.detail).toMatch(/redirected to another host \(files\.acme-payments\.com:\d+\)/);
    expect(requestsTo('/v1/moved')).not.toHaveLength(0);
    const result = await t.graphql(
      InvokeConnector,
      { id: connectorId, endpoint: { method: 'GET', path: '/moved' } },
      operator,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'EGRESS_REFUSED',
      reason: 'redirect_refused',
    });
  });

  it('refuses a response body over 1 MiB (502 UPSTREAM_FAILED, response_too_large)', async () => {
    const { operator, connectorId } = await tenant();
    const result = await t.graphql(
      InvokeConnector,
      { id: connectorId, endpoint: { method: 'GET', path: '/export' } },
      operator,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'UPSTREAM_FAILED',
      reason: 'response_too_large',
    });
  });
});

describe('what every call leaves behind', () => {
  it('writes an audit entry with who, connector, endpoint, status, duration and bytes, never bodies or headers', async () => {
    const { operator, connectorId } = await tenant();
    await invoke(t, operator, connectorId, getCustomers);
    const [row] = await auditRows(t, operator.tenantId);
    expect(row).toMatchObject({
      actor: operator.sub,
      action: 'connector.invoke',
      targetType: 'connector',
      targetId: connectorId,
      outcome: 'success',
      details: {
        subject: operator.sub,
        method: 'GET',
        path: '/customers',
        status: 200,
        duration_ms: expect.any(Number),
        request_bytes: 0,
        response_bytes: 42,
        connector_version: 1,
      },
    });
    const stored = JSON.stringify(row);
    for (const secret of ['cus_1', 'ada@example.com', 'trace-1', 'limit', 'session=secret']) {
      expect(stored).not.toContain(secret);
    }
    const log = await t.graphql(AuditLog, { action: 'connector.invoke' }, operator);
    expect(log.data?.auditLog.nodes).toEqual([
      { action: 'connector.invoke', targetId: connectorId, outcome: 'success' },
    ]);
  });

  it('counts calls by outcome and observes their duration', async () => {
    const { operator, connectorId } = await tenant();
    const { registry } = t.app.services.metrics;
    const count = async (outcome: string) =>
      (await registry.getSingleMetric('boardroom_connector_calls_total')?.get())?.values.find(
        (value) => value.labels.kind === 'invoke' && value.labels.outcome === outcome,
      )?.value ?? 0;
    const durations = async () =>
      (await registry.getSingleMetric('boardroom_connector_call_duration_seconds')?.get())?.values.find(
        (value) =>
          (value as { metricName?: string }).metricName ===
            'boardroom_connector_call_duration_seconds_count' && value.labels.outcome === 'success',
      )?.value ?? 0;
    const [success, failed, observed] = [
      await count('success'),
      await count('upstream_error'),
      await durations(),
    ];
    await invoke(t, operator, connectorId, getCustomers);
    await invoke(t, operator, connectorId, { endpoint: { method: 'DELETE', path: '/fail' } });
    expect(await count('success')).toBe(success + 1);
    expect(await count('upstream_error')).toBe(failed + 1);
    expect(await durations()).toBe(observed + 1);
  });

  it('records a CONNECTOR_INVOKED event in the outbox without bodies or headers', async () => {
    const { operator, connectorId } = await tenant();
    await invoke(t, operator, connectorId, getCustomers);
    const events = await t.db.prisma.outboxEvent.findMany({
      where: { tenantId: operator.tenantId, type: 'CONNECTOR_INVOKED' },
    });
    expect(events).toHaveLength(1);
    expect(events[0]?.payload).toEqual({
      event_id: events[0]?.id,
      type: 'CONNECTOR_INVOKED',
      tenant_id: operator.tenantId,
      connector_id: connectorId,
      kind: 'invoke',
      method: 'GET',
      path: '/customers',
      outcome: 'success',
      status: 200,
      duration_ms: expect.any(Number),
      response_bytes: 42,
      actor: operator.sub,
      invoked_at: expect.any(String),
    });
  });

  describe('the connectorInvoked subscription', () => {
    let running: RunningServer;
    beforeAll(async () => {
      running = await listen(t);
    });
    afterAll(() => running.close());

    it('delivers a call to a subscriber of the tenant, filtered by connector', async () => {
      const { operator, member, connectorId } = await tenant();
      const subscription = await subscribe(running.url, member, ConnectorInvoked, { connectorId });
      try {
        await invoke(t, operator, connectorId, getCustomers);
        const event = await subscription.next();
        expect(event.data?.connectorInvoked).toEqual({
          eventId: expect.any(String),
          tenantId: operator.tenantId,
          connectorId,
          kind: 'invoke',
          method: 'GET',
          path: '/customers',
          outcome: 'success',
          status: 200,
          responseBytes: 42,
          actor: operator.sub,
        });
      } finally {
        await subscription.close();
      }
    });

    it('delivers a refused call with its reason and no status, and nothing of another tenant', async () => {
      const first = await tenant();
      const second = await tenant();
      const subscription = await subscribe(running.url, first.member, ConnectorInvoked, {
        connectorId: null,
      });
      try {
        await invoke(t, second.operator, second.connectorId, getCustomers);
        await invoke(t, first.operator, first.connectorId, { endpoint: { method: 'GET', path: '/moved' } });
        const event = await subscription.next();
        expect(event.data?.connectorInvoked).toMatchObject({
          connectorId: first.connectorId,
          outcome: 'redirect_refused',
          status: null,
        });
      } finally {
        await subscription.close();
      }
    });
  });
});

describe('a call of a connector with a credential and rate limits', () => {
  async function sealedTenant(overrides: Record<string, unknown>) {
    const chairman = await sealed.caller(['chairman']);
    const operator = await sealed.caller(['operator'], { tenantId: chairman.tenantId });
    const created = await sealed.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: { template: { ...template(`Sealed ${randomBytes(4).toString('hex')}`), ...overrides } },
    });
    expect(created.status).toBe(201);
    return { chairman, operator, connectorId: created.body.id as string };
  }
  const setCredential = (caller: Caller, id: string, body: unknown) =>
    sealed.rest('PUT', `/api/v1/forge/connectors/${id}/credential`, { caller, body });

  it('sends the stored bearer token, and answers nothing of it', async () => {
    const { chairman, operator, connectorId } = await sealedTenant({ auth_type: 'bearer' });
    expect((await setCredential(chairman, connectorId, { bearer: { token: 'tok_live_123' } })).status).toBe(
      200,
    );
    const before = server.received.length;

    const response = await invoke(sealed, operator, connectorId, getCustomers);
    const probe = await sealed.rest('POST', `/api/v1/forge/connectors/${connectorId}/test`, {
      caller: operator,
    });

    expect(response.status).toBe(200);
    expect(probe.status).toBe(200);
    const sent = server.received.slice(before);
    expect(sent.map((request) => request.headers.authorization)).toEqual([
      'Bearer tok_live_123',
      'Bearer tok_live_123',
    ]);
    expect(JSON.stringify([response.body, probe.body])).not.toContain('tok_live_123');
  });

  it('sends an api key as the query parameter it names, and answers the path without it', async () => {
    const { chairman, operator, connectorId } = await sealedTenant({ auth_type: 'api_key' });
    const stored = await setCredential(chairman, connectorId, {
      api_key: { key: 'key_abc', query_param: 'api_key' },
    });
    expect(stored.status).toBe(200);
    const before = server.received.length;

    const response = await invoke(sealed, operator, connectorId, getCustomers);

    expect(response.status).toBe(200);
    expect(response.body.path).toBe('/customers');
    expect(server.received.slice(before).map((request) => request.url)).toEqual([
      '/v1/customers?limit=2&status=open&api_key=key_abc',
    ]);
  });

  it('answers 409 without a stored credential, and sends nothing and records no call', async () => {
    const { operator, connectorId } = await sealedTenant({ auth_type: 'bearer' });
    const before = server.received.length;

    const response = await invoke(sealed, operator, connectorId, getCustomers);

    expect(response.status).toBe(409);
    expect(response.body.detail).toEqual(expect.stringContaining('credential'));
    expect(server.received.length).toBe(before);
    expect(await auditRows(sealed, operator.tenantId)).toEqual([]);
  });

  it('holds the template’s per-minute limit: 429 with Retry-After, and the server sees only the allowed calls', async () => {
    const { operator, connectorId } = await sealedTenant({ rate_limits: { per_minute: 2 } });
    const before = server.received.length;

    const statuses = [];
    for (let call = 0; call < 3; call++)
      statuses.push(await invoke(sealed, operator, connectorId, getCustomers));

    expect(statuses.map((response) => response.status)).toEqual([200, 200, 429]);
    expect(Number(statuses[2]?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(server.received.length - before).toBe(2);
  });
});
