import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createConnector } from './connectors-support.js';

let t: TestApp;
let keyless: TestApp;

beforeAll(async () => {
  t = await createTestApp({ env: { CONNECTOR_SECRETS_KEY: `k1:${randomBytes(32).toString('base64')}` } });
  keyless = await createTestApp();
});

afterAll(async () => {
  await Promise.all([t?.close(), keyless?.close()]);
});

const path = (id: string) => `/api/v1/forge/connectors/${id}/credential`;

async function stored(app: TestApp, tenantId: string) {
  const prisma = app.db.prisma;
  const [credentials, audits] = await Promise.all([
    prisma.connectorCredential.count({ where: { tenantId } }),
    prisma.auditEntry.count({ where: { tenantId, action: { startsWith: 'connector.credential' } } }),
  ]);
  return { credentials, audits };
}

async function setUp(app: TestApp, authType: string) {
  const chairman = await app.caller(['chairman']);
  const operator: Caller = await app.caller(['operator'], { tenantId: chairman.tenantId });
  const connector = await createConnector(app, chairman, 'Orders', { auth_type: authType });
  return { chairman, operator, connector };
}

describe('PUT /api/v1/forge/connectors/{id}/credential', () => {
  it('stores the secret and answers only its fingerprint; GET shows the same, DELETE removes it', async () => {
    const { operator, connector } = await setUp(t, 'api_key');
    const put = await t.rest('PUT', path(connector.id), {
      caller: operator,
      body: { api_key: { key: 'key-that-stays-secret', query_param: 'apikey' } },
    });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({
      connector_id: connector.id,
      credential: {
        auth_type: 'api_key',
        fingerprint: expect.stringMatching(/^hmac:[0-9a-f]{16}$/),
        updated_at: expect.any(String),
        origin: 'https://api.example.com',
        usable: true,
        unusable_reason: null,
      },
    });
    expect(JSON.stringify(put.body)).not.toContain('key-that-stays-secret');

    const get = await t.rest('GET', path(connector.id), { caller: operator });
    expect(get.status).toBe(200);
    expect(get.body).toEqual(put.body);
    const connectorRead = await t.rest('GET', `/api/v1/forge/connectors/${connector.id}`, {
      caller: operator,
    });
    expect(JSON.stringify(connectorRead.body)).not.toContain('key-that-stays-secret');

    const removed = await t.rest('DELETE', path(connector.id), { caller: operator });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ connector_id: connector.id, credential: null });
    expect(await stored(t, operator.tenantId)).toEqual({ credentials: 0, audits: 2 });
  });

  it('sets an oauth2 client credentials secret from its snake_case body', async () => {
    const { chairman, connector } = await setUp(t, 'oauth2_client_credentials');
    const put = await t.rest('PUT', path(connector.id), {
      caller: chairman,
      body: {
        oauth2_client_credentials: {
          token_url: 'https://auth.example.com/oauth/token',
          client_id: 'client',
          client_secret: 'secret',
          scope: 'read',
        },
      },
    });
    expect(put.status).toBe(200);
    expect(put.body.credential.auth_type).toBe('oauth2_client_credentials');
  });

  it('answers 422 with Pydantic-style detail for a bad body, and writes nothing', async () => {
    const { chairman, connector } = await setUp(t, 'basic');
    const response = await t.rest('PUT', path(connector.id), {
      caller: chairman,
      body: { basic: { username: 'a:b', password: '' } },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'basic', 'username'],
        msg: 'Value error, must not contain a colon',
      }),
      expect.objectContaining({ loc: ['body', 'basic', 'password'], type: 'string_too_short' }),
    ]);
    expect(await stored(t, chairman.tenantId)).toEqual({ credentials: 0, audits: 0 });
  });

  it('answers 422 located at the shape given when the template names another auth_type', async () => {
    const { chairman, connector } = await setUp(t, 'basic');
    const response = await t.rest('PUT', path(connector.id), {
      caller: chairman,
      body: { bearer: { token: 't' } },
    });
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'bearer'],
        msg: "Value error, the connector's auth_type is basic: give basic and nothing else",
      }),
    ]);
    expect(await stored(t, chairman.tenantId)).toEqual({ credentials: 0, audits: 0 });
  });

  it('answers 403 to a member and 404 to another tenant, writing nothing', async () => {
    const { chairman, connector } = await setUp(t, 'bearer');
    const member = await t.caller(['member'], { tenantId: chairman.tenantId });
    const body = { bearer: { token: 't' } };
    expect((await t.rest('PUT', path(connector.id), { caller: member, body })).status).toBe(403);
    expect((await t.rest('DELETE', path(connector.id), { caller: member })).status).toBe(403);
    const stranger = await t.caller(['chairman']);
    const foreign = await t.rest('PUT', path(connector.id), { caller: stranger, body });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ detail: `Connector ${connector.id} not found` });
    expect((await t.rest('GET', path(connector.id), { caller: stranger })).status).toBe(404);
    expect(await stored(t, chairman.tenantId)).toEqual({ credentials: 0, audits: 0 });
  });

  it('answers 503 naming CONNECTOR_SECRETS_KEY when the service has no key, writing nothing', async () => {
    const { chairman, connector } = await setUp(keyless, 'bearer');
    const response = await keyless.rest('PUT', path(connector.id), {
      caller: chairman,
      body: { bearer: { token: 't' } },
    });
    expect(response.status).toBe(503);
    expect(response.body.detail).toContain('CONNECTOR_SECRETS_KEY is not set');
    expect(await stored(keyless, chairman.tenantId)).toEqual({ credentials: 0, audits: 0 });
  });
});
