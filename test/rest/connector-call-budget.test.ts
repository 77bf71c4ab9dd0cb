import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import type { TestHttpsServer } from '../support/https-server.js';
import {
  UPSTREAM_HOST as HOST,
  operatedConnector,
  sealingKey,
  startUpstream,
  type Upstream,
} from './connectors-support.js';

let server: TestHttpsServer;
/** Answers that trickle: one byte every 50 ms, until the test ends them. */
const trickling = new Set<ServerResponse>();
/** Told of each request the trickling routes receive. */
let onArrival: (() => void) | undefined;

/** Resolves once `count` more requests reached the trickling routes (fails the test after 10 s). */
function arrivals(count: number): Promise<void> {
  let left = count;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${left} requests did not arrive`)), 10_000);
    onArrival = () => {
      left -= 1;
      if (left === 0) {
        clearTimeout(timer);
        onArrival = undefined;
        resolve();
      }
    };
  });
}

function trickle(_request: unknown, _body: string, response: ServerResponse) {
  response.writeHead(200, { 'content-type': 'text/plain' });
  const timer = setInterval(() => response.write('.'), 50);
  trickling.add(response);
  response.on('close', () => {
    clearInterval(timer);
    trickling.delete(response);
  });
  onArrival?.();
}

/** Ends every trickling answer (a complete, valid body). */
function endTrickles() {
  for (const response of trickling) response.end();
}

beforeAll(async () => {
  const upstream = await startUpstream();
  ({ server, egress } = upstream);
  server.route('/v1/slow', trickle);
  // The probe's HEAD gets no body to trickle: its answer does not even start.
  server.route('/v1', (_request, _body, response) => {
    trickling.add(response);
    response.on('close', () => trickling.delete(response));
    onArrival?.();
  });
  server.route('/oauth/token', trickle);
  server.route('/v1/fast', (_request, _body, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
});
afterAll(async () => {
  endTrickles();
  await server?.close();
});

let egress: Upstream['egress'];

function appWith(env: Record<string, string>): Promise<TestApp> {
  return createTestApp({
    env: {
      CONNECTOR_EGRESS_ALLOW: `127.0.0.1:${server.port}`,
      ...sealingKey(),
      ...env,
    },
    egress,
  });
}

const connector = (t: TestApp, overrides: Record<string, unknown> = {}) =>
  operatedConnector(t, {
    name: `Slow ${randomBytes(3).toString('hex')}`,
    base_url: `https://${HOST}:${server.port}/v1`,
    auth_type: 'none',
    endpoints: [
      { method: 'GET', path: '/slow' },
      { method: 'GET', path: '/fast' },
    ],
    ...overrides,
  });

/** A connector whose calls first ask the trickling /oauth/token for a token (its credential stored, 200). */
async function oauthConnector(t: TestApp) {
  const created = await connector(t, { auth_type: 'oauth2_client_credentials' });
  const stored = await t.rest('PUT', `/api/v1/forge/connectors/${created.id}/credential`, {
    caller: created.chairman,
    body: {
      oauth2_client_credentials: {
        token_url: `https://${HOST}:${server.port}/oauth/token`,
        client_id: 'c',
        client_secret: 's',
      },
    },
  });
  expect(stored.status).toBe(200);
  return created;
}

const invoke = (t: TestApp, caller: Caller, id: string, path = '/slow') =>
  t.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, {
    caller,
    body: { endpoint: { method: 'GET', path } },
  });

describe('a tenant whose upstream hangs', () => {
  let t: TestApp;
  beforeAll(async () => {
    // Four requests in flight at most (pool 2 + queue 2); a connector call may take a minute.
    t = await appWith({
      DATABASE_POOL_SIZE: '2',
      DATABASE_QUEUE_SIZE: '2',
      CONNECTOR_CALL_TIMEOUT_MS: '60000',
    });
  });
  afterAll(async () => {
    endTrickles();
    await t?.close();
  });

  it('leaves other tenants’ requests answering while its calls wait on the upstream', async () => {
    const slow = await connector(t);
    const arrived = arrivals(4);
    const hanging = [1, 2, 3, 4].map(() => invoke(t, slow.operator, slow.id));
    await arrived;

    const other = await connector(t);
    const read = await t.rest('GET', `/api/v1/forge/connectors/${other.id}`, { caller: other.operator });
    expect(read.status).toBe(200);
    const call = await invoke(t, other.operator, other.id, '/fast');
    expect(call.status).toBe(200);
    expect(call.body.body).toEqual({ ok: true });

    endTrickles();
    expect((await Promise.all(hanging)).map((response) => response.status)).toEqual([200, 200, 200, 200]);
  });

  it('gives back the admission of a GraphQL request too', async () => {
    const slow = await connector(t);
    const arrived = arrivals(4);
    const hanging = [1, 2, 3, 4].map(() =>
      t.graphql(
        'mutation($id: ID!) { invokeConnector(id: $id, endpoint: { method: "GET", path: "/slow" }) { ... on ConnectorInvocation { status } } }',
        { id: slow.id },
        slow.operator,
      ),
    );
    await arrived;
    const other = await t.caller(['member']);
    const me = await t.graphql('{ me { tenantId } }', undefined, other);
    expect(me.status).toBe(200);
    expect(me.data).toEqual({ me: { tenantId: other.tenantId } });
    endTrickles();
    expect((await Promise.all(hanging)).map((result) => result.errors)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});

describe('the deadline of a connector call', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWith({ CONNECTOR_CALL_TIMEOUT_MS: '1500' });
  });
  afterAll(() => t?.close());

  it('answers 504 UPSTREAM_TIMEOUT when the upstream trickles past it, and audits call_timeout', async () => {
    const { operator, id } = await connector(t);
    const response = await invoke(t, operator, id);
    expect(response.status).toBe(504);
    expect(response.body).toEqual({
      detail: `Connector call failed: ${HOST}:${server.port} did not finish the call within 1500 ms`,
    });
    const audit = await t.db.prisma.auditEntry.findFirstOrThrow({
      where: { tenantId: operator.tenantId, action: 'connector.invoke' },
    });
    expect(audit.outcome).toBe('call_timeout');
  });

  it('covers the probe too (GraphQL UPSTREAM_TIMEOUT, reason call_timeout)', async () => {
    const { operator, id } = await connector(t);
    const result = await t.graphql(
      'mutation($id: ID!) { testConnector(id: $id) { status } }',
      { id },
      operator,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'UPSTREAM_TIMEOUT',
      reason: 'call_timeout',
    });
  });

  it('is shared by the OAuth 2.0 token request and the call', async () => {
    const { operator, id } = await oauthConnector(t);
    const response = await invoke(t, operator, id, '/fast');
    expect(response.status).toBe(504);
    expect(response.body.detail).toBe(
      `Connector call failed: ${HOST}:${server.port} did not finish the call within 1500 ms`,
    );
  });
});

describe('CONNECTOR_CALLS_PER_TENANT', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWith({ CONNECTOR_CALLS_PER_TENANT: '2', CONNECTOR_CALL_TIMEOUT_MS: '60000' });
  });
  afterAll(async () => {
    endTrickles();
    await t?.close();
  });

  it('answers a tenant’s call beyond it 429 RATE_LIMITED with Retry-After, sends nothing, and lets other tenants call', async () => {
    const slow = await connector(t);
    const arrived = arrivals(2);
    const hanging = [1, 2].map(() => invoke(t, slow.operator, slow.id));
    await arrived;
    const before = server.received.length;

    const refused = await invoke(t, slow.operator, slow.id, '/fast');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body).toEqual({
      detail: 'At most 2 connector calls of a tenant run at once on an instance; retry in 1 s',
    });
    const probe = await t.graphql(
      'mutation($id: ID!) { testConnector(id: $id) { status } }',
      { id: slow.id },
      slow.operator,
    );
    expect(probe.errors?.[0]?.extensions).toMatchObject({
      code: 'RATE_LIMITED',
      reason: 'connector_calls_busy',
      retryAfter: 1,
    });
    expect(server.received.length).toBe(before);

    const other = await connector(t);
    expect((await invoke(t, other.operator, other.id, '/fast')).status).toBe(200);

    endTrickles();
    await Promise.all(hanging);
    expect((await invoke(t, slow.operator, slow.id, '/fast')).status).toBe(200);
  });

  it('counts an OAuth 2.0 token request as a call', async () => {
    const oauth = await oauthConnector(t);
    const arrived = arrivals(2);
    const hanging = [1, 2].map(() => invoke(t, oauth.operator, oauth.id, '/fast'));
    await arrived;
    expect((await invoke(t, oauth.operator, oauth.id, '/fast')).status).toBe(429);
    endTrickles();
    await Promise.all(hanging);
  });
});
