import type { IncomingMessage } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import type { TestHttpsServer } from '../support/https-server.js';
import {
  UPSTREAM_HOST as HOST,
  OTHER_UPSTREAM_HOST as OTHER_HOST,
  operatedConnector,
  sealingKey,
  startUpstream,
} from './connectors-support.js';

let server: TestHttpsServer;
let t: TestApp;
/** Every log line the instance wrote, at debug level. */
const logLines: string[] = [];

/** What the upstream saw of a request: its URL and headers, as an echo server answers them. */
const echoOf = (request: IncomingMessage) => ({ url: request.url, headers: request.headers });

/** A JSON string literal whose every character is a \\u escape. */
const unicodeEscaped = (text: string) =>
  `"${[...text].map((char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}`).join('')}"`;

beforeAll(async () => {
  const upstream = await startUpstream();
  ({ server } = upstream);
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk, _encoding, done) {
        logLines.push(String(chunk));
        done();
      },
    }),
  );
  t = await createTestApp({
    env: { ...upstream.allow, ...sealingKey(), LOG_LEVEL: 'debug' },
    egress: upstream.egress,
    logger,
  });
  server.route('/v1/echo', (request, _body, response) => {
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(echoOf(request)));
  });
  server.route('/v1/echo-text', (request, _body, response) => {
    const lines = Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`);
    response.writeHead(200, { 'content-type': 'text/plain' }).end(`${request.url}\n${lines.join('\n')}`);
  });
  server.route('/v1/echo-escaped', (request, _body, response) => {
    const authorization = String(
      request.headers.authorization ?? request.headers['x-api-key'] ?? request.url,
    );
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(
        `{"seen":${unicodeEscaped(authorization)},"url":${JSON.stringify(request.url).replaceAll('/', '\\/')}}`,
      );
  });
  server.route('/v1/echo-keys', (request, _body, response) => {
    const value = String(request.headers.authorization ?? request.headers['x-api-key'] ?? request.url);
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ [value]: value.length }));
  });
  server.route('/v1/items', (request, _body, response) => {
    const query = new URL(request.url ?? '/', 'https://upstream').search;
    response
      .writeHead(201, {
        'content-type': 'application/json',
        location: `/v1/items/1${query}`,
        link: `<https://${HOST}/v1/items${query}&page=2>; rel="next"`,
      })
      .end('{}');
  });
  server.route('/v1/elsewhere', (request, _body, response) => {
    const query = new URL(request.url ?? '/', 'https://upstream').search;
    response.writeHead(302, { location: `https://${OTHER_HOST}:${server.port}/v1/echo${query}` }).end();
  });
  server.route('/oauth/token', (_request, _body, response) => {
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(
        JSON.stringify({ access_token: 'at_secret_access_token_42', token_type: 'bearer', expires_in: 3600 }),
      );
  });
  server.route('/oauth/echoing-token', (_request, _body, response) => {
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: 'x', token_type: 'client secret was cs/the+client=secret' }));
  });
});
afterAll(async () => {
  await t?.close();
  await server?.close();
});

const ENDPOINTS = ['/echo', '/echo-text', '/echo-escaped', '/echo-keys', '/items', '/elsewhere'].map(
  (path) => ({
    method: path === '/items' ? 'POST' : 'GET',
    path,
  }),
);

interface Case {
  authType: string;
  credential: Record<string, unknown>;
  /** Values that must appear in no answer, in no spelling. */
  secrets: string[];
  /** The secret travels in the URL, so a Location or Link header echoing the query carries it. */
  inUrl?: boolean;
}

/** Stands for the test server's port until it listens. */
const PORT = '{port}';

const basicPair = Buffer.from('ana:pa55/w+rd=').toString('base64');
const CASES: [string, Case][] = [
  [
    'an api key sent as a query parameter',
    {
      authType: 'api_key',
      credential: { api_key: { key: 'key/with+special=chars&x', query_param: 'api_key' } },
      secrets: ['key/with+special=chars&x', 'key%2Fwith%2Bspecial%3Dchars%26x'],
      inUrl: true,
    },
  ],
  [
    'an api key sent as a header',
    {
      authType: 'api_key',
      credential: { api_key: { key: 'key_in_a_header_0042' } },
      secrets: ['key_in_a_header_0042'],
    },
  ],
  [
    'a bearer token',
    {
      authType: 'bearer',
      credential: { bearer: { token: 'tok_live_bearer_77' } },
      secrets: ['tok_live_bearer_77'],
    },
  ],
  [
    'basic credentials',
    {
      authType: 'basic',
      credential: { basic: { username: 'ana', password: 'pa55/w+rd=' } },
      secrets: ['pa55/w+rd=', basicPair, encodeURIComponent(basicPair)],
    },
  ],
  [
    'an OAuth 2.0 client',
    {
      authType: 'oauth2_client_credentials',
      credential: {
        oauth2_client_credentials: {
          token_url: `https://${HOST}:${PORT}/oauth/token`,
          client_id: 'client-1',
          client_secret: 'cs/the+client=secret',
        },
      },
      secrets: ['at_secret_access_token_42', 'cs/the+client=secret'],
    },
  ],
];

async function connectorFor(testCase: Case): Promise<{ operator: Caller; id: string; tenantId: string }> {
  const { chairman, operator, id } = await operatedConnector(t, {
    name: 'Echo',
    base_url: `https://${HOST}:${server.port}/v1`,
    auth_type: testCase.authType,
    endpoints: ENDPOINTS,
  });
  const credential = JSON.parse(
    JSON.stringify(testCase.credential).replace(PORT, String(server.port)),
  ) as Record<string, unknown>;
  const stored = await t.rest('PUT', `/api/v1/forge/connectors/${id}/credential`, {
    caller: chairman,
    body: credential,
  });
  expect(stored.status).toBe(200);
  return { operator, id, tenantId: chairman.tenantId };
}

function expectNoSecret(text: string, secrets: string[]) {
  for (const secret of secrets) expect(text).not.toContain(secret);
}

describe.each(CASES)('a connector with %s', (_name, testCase) => {
  let operator: Caller;
  let id: string;
  let tenantId: string;
  beforeAll(async () => {
    ({ operator, id, tenantId } = await connectorFor(testCase));
  });

  it.each(ENDPOINTS.filter((endpoint) => endpoint.path !== '/elsewhere'))(
    'answers $method $path without the secret, with [REDACTED] where the upstream echoed it',
    async (endpoint) => {
      const before = server.received.length;
      const response = await t.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, {
        caller: operator,
        body: { endpoint },
      });
      expect(response.status).toBe(200);
      // The upstream did receive the secret: what it echoes is real.
      const received = JSON.stringify(server.received.slice(before));
      expect(testCase.secrets.some((secret) => received.includes(secret))).toBe(true);
      const answer = JSON.stringify(response.body);
      expectNoSecret(answer, testCase.secrets);
      if (endpoint.path !== '/items' || testCase.inUrl) expect(answer).toContain('[REDACTED]');

      const graphql = await t.graphql(
        'mutation($id: ID!, $endpoint: ConnectorEndpointRefInput!) { invokeConnector(id: $id, endpoint: $endpoint) { ... on ConnectorInvocation { headers body } } }',
        { id, endpoint },
        operator,
      );
      expect(graphql.errors).toBeUndefined();
      expectNoSecret(JSON.stringify(graphql), testCase.secrets);
    },
  );

  it('refuses a redirect that carries the secret to another host without quoting it', async () => {
    const response = await t.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, {
      caller: operator,
      body: { endpoint: { method: 'GET', path: '/elsewhere' } },
    });
    expect(response.status).toBe(502);
    expectNoSecret(JSON.stringify(response.body), testCase.secrets);
  });

  it('leaves no secret in the audit log, the events or the logs', async () => {
    const [audits, events] = await Promise.all([
      t.db.prisma.auditEntry.findMany({ where: { tenantId } }),
      t.db.prisma.outboxEvent.findMany({ where: { tenantId } }),
    ]);
    expect(audits.length).toBeGreaterThan(0);
    expectNoSecret(
      JSON.stringify([audits, events], (_key, value) => (typeof value === 'bigint' ? String(value) : value)),
      testCase.secrets,
    );
    expectNoSecret(logLines.join(''), testCase.secrets);
  });
});

describe('a token endpoint that echoes the client secret', () => {
  it('answers UPSTREAM_FAILED without it', async () => {
    const { operator, id } = await connectorFor({
      authType: 'oauth2_client_credentials',
      credential: {
        oauth2_client_credentials: {
          token_url: `https://${HOST}:${server.port}/oauth/echoing-token`,
          client_id: 'client-1',
          client_secret: 'cs/the+client=secret',
        },
      },
      secrets: [],
    });
    const response = await t.rest('POST', `/api/v1/forge/connectors/${id}/invoke`, {
      caller: operator,
      body: { endpoint: { method: 'GET', path: '/echo' } },
    });
    expect(response.status).toBe(502);
    expect(response.body.detail).toBe(
      `No access token for connector ${id}: the token endpoint answered token_type client secret was [REDACTED], not bearer`,
    );
  });
});
