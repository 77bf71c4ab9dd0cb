import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import type { TestHttpsServer } from '../support/https-server.js';
import {
  UPSTREAM_HOST as HOST,
  OTHER_UPSTREAM_HOST as OTHER_HOST,
  sealingKey,
  startUpstream,
} from './connectors-support.js';

const UpdateConnector = graphql(`
  mutation UpdateConnectorOriginForTest($id: ID!, $input: ConnectorInput!) {
    updateConnector(id: $id, input: $input) {
      version
    }
  }
`);

let server: TestHttpsServer;
let t: TestApp;

beforeAll(async () => {
  const upstream = await startUpstream();
  ({ server } = upstream);
  t = await createTestApp({ env: { ...upstream.allow, ...sealingKey() }, egress: upstream.egress });
  for (const path of ['/v1/orders', '/v2/orders']) {
    server.route(path, (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
  }
  server.route('/oauth/token', (_request, _body, response) => {
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: 'at-from-token-url', token_type: 'bearer', expires_in: 3600 }));
  });
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});

const baseUrl = (host = HOST, path = '/v1') => `https://${host}:${server.port}${path}`;

function template(url: string, authType = 'bearer') {
  return {
    name: 'Orders',
    base_url: url,
    auth_type: authType,
    endpoints: [{ method: 'GET', path: '/orders' }],
  };
}

interface Tenant {
  chairman: Caller;
  operator: Caller;
  id: string;
}

/** A bearer connector on `url` whose credential the chairman stored. */
async function connectorWithCredential(
  url = baseUrl(),
  credential: unknown = { bearer: { token: 'tok_chairman_secret' } },
  authType = 'bearer',
): Promise<Tenant> {
  const chairman = await t.caller(['chairman']);
  const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
  const created = await t.rest('POST', '/api/v1/forge/connectors', {
    caller: chairman,
    body: { template: template(url, authType) },
  });
  expect(created.status).toBe(201);
  const stored = await t.rest('PUT', `/api/v1/forge/connectors/${created.body.id}/credential`, {
    caller: chairman,
    body: credential,
  });
  expect(stored.status).toBe(200);
  return { chairman, operator, id: created.body.id };
}

const edit = (caller: Caller, id: string, url: string, authType = 'bearer') =>
  t.rest('PUT', `/api/v1/forge/connectors/${id}`, { caller, body: { template: template(url, authType) } });
const invoke = (caller: Caller, id: string) =>
  t.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, {
    caller,
    body: { endpoint: { method: 'GET', path: '/orders' } },
  });
const readCredential = (caller: Caller, id: string) =>
  t.rest('GET', `/api/v1/forge/connectors/${id}/credential`, { caller });

async function rowsOf(tenantId: string, id: string) {
  const prisma = t.db.prisma;
  const [connector, versions, audits] = await Promise.all([
    prisma.connector.findUniqueOrThrow({ where: { id } }),
    prisma.connectorVersion.count({ where: { connectorId: id } }),
    prisma.auditEntry.findMany({
      where: { tenantId, action: { startsWith: 'connector.' } },
      orderBy: { createdAt: 'asc' },
      select: { action: true, outcome: true, details: true },
    }),
  ]);
  return { connector, versions, audits };
}

const requestsFor = (since: number) => server.received.slice(since);

/** The chairman's OAuth 2.0 client credential, its token_url on the connector's origin. */
const chairmanOauth = () => ({
  oauth2_client_credentials: {
    token_url: baseUrl(HOST, '/oauth/token'),
    client_id: 'client-1',
    client_secret: 'client-secret-of-the-chairman',
  },
});

describe('an edit that moves base_url to another origin', () => {
  it.each([
    ['another host', () => baseUrl(OTHER_HOST)],
    ['another port', () => `https://${HOST}:${server.port === 8443 ? 8444 : 8443}/v1`],
    ['the default port instead of the stored one', () => `https://${HOST}/v1`],
    ['the host with a trailing dot', () => baseUrl(`${HOST}.`)],
    ['an attacker’s host', () => 'https://collector.attacker.example/v1'],
  ])('is refused to an operator when it names %s: 403, audited, nothing else written', async (_what, url) => {
    const { operator, id } = await connectorWithCredential();
    const before = await rowsOf(operator.tenantId, id);
    const response = await edit(operator, id, url());
    expect(response.status).toBe(403);
    expect(response.body.detail).toBe(
      `Only the chairman may move connector ${id} to another origin (https://${HOST}:${server.port} → ${new URL(url()).origin}): its credential is sent to its origin`,
    );
    const after = await rowsOf(operator.tenantId, id);
    expect(after.connector).toEqual(before.connector);
    expect(after.versions).toBe(before.versions);
    expect(after.audits.slice(before.audits.length)).toEqual([
      {
        action: 'connector.update',
        outcome: 'origin_change_refused',
        details: {
          subject: operator.sub,
          version: 1,
          origin: `https://${HOST}:${server.port}`,
          requested_origin: new URL(url()).origin,
        },
      },
    ]);
    expect((await readCredential(operator, id)).body.credential).toMatchObject({
      origin: `https://${HOST}:${server.port}`,
      usable: true,
      unusable_reason: null,
    });
  });

  it('is refused to an operator over GraphQL with FORBIDDEN and the reason', async () => {
    const { operator, id } = await connectorWithCredential();
    const result = await t.graphql(
      UpdateConnector,
      { id, input: { template: { name: 'Orders', baseUrl: baseUrl(OTHER_HOST), authType: 'bearer' } } },
      operator,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'FORBIDDEN',
      reason: 'origin_change_refused',
      origin: `https://${HOST}:${server.port}`,
      requestedOrigin: `https://${OTHER_HOST}:${server.port}`,
    });
  });

  it('is refused to an operator for a connector without a credential too', async () => {
    const chairman = await t.caller(['chairman']);
    const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
    const created = await t.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: { template: template(baseUrl(), 'none') },
    });
    expect((await edit(operator, created.body.id, baseUrl(OTHER_HOST), 'none')).status).toBe(403);
  });

  it('keeps sending the credential to the stored origin only after the refusal', async () => {
    const { operator, id } = await connectorWithCredential();
    await edit(operator, id, baseUrl(OTHER_HOST));
    const since = server.received.length;
    expect((await invoke(operator, id)).status).toBe(200);
    expect(requestsFor(since).map((request) => request.headers.host)).toEqual([`${HOST}:${server.port}`]);
  });
});

describe('an edit on the same origin', () => {
  it.each([
    ['another path', () => baseUrl(HOST, '/v2')],
    ['the host in another case', () => baseUrl(HOST.toUpperCase())],
    ['the same port written again', () => `https://${HOST}:${server.port}/v1/`],
  ])('is an operator’s to make with %s, and the credential stays usable', async (_what, url) => {
    const { operator, id } = await connectorWithCredential();
    expect((await edit(operator, id, url())).status).toBe(200);
    expect((await readCredential(operator, id)).body.credential).toMatchObject({ usable: true });
    expect((await invoke(operator, id)).status).toBe(200);
  });

  it('treats https://host and https://host:443 as one origin', async () => {
    const chairman = await t.caller(['chairman']);
    const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
    const created = await t.rest('POST', '/api/v1/forge/connectors', {
      caller: chairman,
      body: { template: template('https://api.example.com/v1', 'none') },
    });
    const response = await edit(operator, created.body.id, 'https://API.example.com:443/v2', 'none');
    expect(response.status).toBe(200);
  });
});

describe('the chairman moving base_url to another origin', () => {
  it('is accepted, unbinds the credential with an audit row, and calls answer 409 until it is set again', async () => {
    const { chairman, operator, id } = await connectorWithCredential();
    const before = await rowsOf(chairman.tenantId, id);
    const moved = await edit(chairman, id, baseUrl(OTHER_HOST));
    expect(moved.status).toBe(200);
    const after = await rowsOf(chairman.tenantId, id);
    expect(after.audits.slice(before.audits.length)).toEqual([
      {
        action: 'connector.credential.unbind',
        outcome: 'origin_changed',
        details: {
          subject: chairman.sub,
          fingerprint: expect.stringMatching(/^hmac:/),
          bound_origin: `https://${HOST}:${server.port}`,
          origin: `https://${OTHER_HOST}:${server.port}`,
        },
      },
      {
        action: 'connector.update',
        outcome: 'updated',
        details: expect.objectContaining({
          version: 2,
          origin: `https://${OTHER_HOST}:${server.port}`,
          previous_origin: `https://${HOST}:${server.port}`,
        }),
      },
    ]);

    const credential = (await readCredential(operator, id)).body.credential;
    expect(credential).toMatchObject({
      origin: `https://${HOST}:${server.port}`,
      usable: false,
      unusable_reason: `The credential of connector ${id} was set for https://${HOST}:${server.port}; the connector's origin changed (now https://${OTHER_HOST}:${server.port}): set the credential again for the new origin`,
    });

    const since = server.received.length;
    const refused = await invoke(operator, id);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toBe(credential.unusable_reason);
    const probe = await t.rest('POST', `/api/v1/forge/connectors/${id}/test`, { caller: operator });
    expect(probe.status).toBe(409);
    expect(requestsFor(since)).toEqual([]);

    expect(
      (
        await t.rest('PUT', `/api/v1/forge/connectors/${id}/credential`, {
          caller: operator,
          body: { bearer: { token: 'tok_for_the_new_origin' } },
        })
      ).body.credential,
    ).toMatchObject({ origin: `https://${OTHER_HOST}:${server.port}`, usable: true });
    expect((await invoke(operator, id)).status).toBe(200);
    expect(
      requestsFor(since).map((request) => [request.headers.host, request.headers.authorization]),
    ).toEqual([[`${OTHER_HOST}:${server.port}`, 'Bearer tok_for_the_new_origin']]);
  });

  it('keeps the credential unusable when the origin is moved back', async () => {
    const { chairman, operator, id } = await connectorWithCredential();
    expect((await edit(chairman, id, baseUrl(OTHER_HOST))).status).toBe(200);
    expect((await edit(chairman, id, baseUrl())).status).toBe(200);
    const since = server.received.length;
    expect((await invoke(operator, id)).status).toBe(409);
    expect((await readCredential(operator, id)).body.credential.usable).toBe(false);
    expect(requestsFor(since)).toEqual([]);
    const unbinds = await t.db.prisma.auditEntry.count({
      where: { tenantId: chairman.tenantId, action: 'connector.credential.unbind' },
    });
    expect(unbinds).toBe(1);
  });

  it('sends no OAuth 2.0 token request (and so no client secret) once the origin moved', async () => {
    const { chairman, operator, id } = await connectorWithCredential(
      baseUrl(),
      chairmanOauth(),
      'oauth2_client_credentials',
    );
    expect((await edit(chairman, id, baseUrl(OTHER_HOST), 'oauth2_client_credentials')).status).toBe(200);
    const since = server.received.length;
    expect((await invoke(operator, id)).status).toBe(409);
    expect(requestsFor(since)).toEqual([]);
  });
});

describe('the OAuth 2.0 token_url', () => {
  it('is part of the sealed secret: changing it takes a new client secret, which an operator cannot read', async () => {
    const { operator, id } = await connectorWithCredential(
      baseUrl(),
      chairmanOauth(),
      'oauth2_client_credentials',
    );
    // A credential is set whole: a token_url without its client_secret is refused before anything is stored.
    const partial = await t.rest('PUT', `/api/v1/forge/connectors/${id}/credential`, {
      caller: operator,
      body: {
        oauth2_client_credentials: { token_url: 'https://collector.attacker.example/token', client_id: 'c' },
      },
    });
    expect(partial.status).toBe(422);
    expect(partial.body.detail).toContainEqual(
      expect.objectContaining({
        type: 'missing',
        loc: ['body', 'oauth2_client_credentials', 'client_secret'],
      }),
    );
    const since = server.received.length;
    expect((await invoke(operator, id)).status).toBe(200);
    expect(requestsFor(since).map((request) => request.url)).toEqual(['/oauth/token', '/v1/orders']);
    expect(requestsFor(since)[0]?.headers.authorization).toBe(
      `Basic ${Buffer.from('client-1:client-secret-of-the-chairman').toString('base64')}`,
    );
  });
});
