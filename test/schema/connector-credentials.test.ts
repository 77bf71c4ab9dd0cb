import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  credentialRequestParts,
  resealConnectorCredentials,
} from '../../src/domain/connectors/credential-store.js';
import type { OAuth2TokenRequest } from '../../src/domain/connectors/credentials.js';
import type { ConnectorCredentialInput } from '../../src/generated/graphql/graphql.js';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Connector } from '../../src/generated/prisma/client.js';
import { createConnector } from '../rest/connectors-support.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { capturingLogger } from '../support/fixtures.js';

const SetCredential = graphql(`
  mutation SetCredentialForTest($id: ID!, $input: ConnectorCredentialInput!) {
    setConnectorCredential(id: $id, input: $input) {
      id
      credential {
        authType
        fingerprint
        updatedAt
      }
    }
  }
`);

const ClearCredential = graphql(`
  mutation ClearCredentialForTest($id: ID!) {
    clearConnectorCredential(id: $id) {
      id
      credential {
        fingerprint
      }
    }
  }
`);

const ReadEverything = graphql(`
  query ReadConnectorEverythingForTest($id: ID!) {
    connector(id: $id) {
      id
      template
      credential {
        authType
        fingerprint
        updatedAt
      }
      versions {
        template
      }
    }
    connectors {
      nodes {
        credential {
          fingerprint
        }
      }
    }
    auditLog {
      nodes {
        action
        outcome
        details
      }
    }
  }
`);

const keyOf = () => randomBytes(32).toString('base64');
const KEY_1 = keyOf();
const KEY_2 = keyOf();

let database: TestDatabase;
/** CONNECTOR_SECRETS_KEY=k1 */
let t: TestApp;
/** The same database with k2 current and k1 kept: the rotation. */
let rotated: TestApp;
/** The same database without CONNECTOR_SECRETS_KEY. */
let keyless: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  t = await createTestApp({ database, env: { CONNECTOR_SECRETS_KEY: `k1:${KEY_1}` } });
  rotated = await createTestApp({ database, env: { CONNECTOR_SECRETS_KEY: `k2:${KEY_2},k1:${KEY_1}` } });
  keyless = await createTestApp({ database });
});

afterAll(async () => {
  await Promise.all([t?.close(), rotated?.close(), keyless?.close()]);
  await database?.drop();
});

async function connectorRow(app: TestApp, id: string): Promise<Connector> {
  return app.db.prisma.connector.findUniqueOrThrow({ where: { id } });
}

async function setUp(authType = 'bearer', name = 'Customers') {
  const chairman = await t.caller(['chairman']);
  const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
  const connector = await createConnector(t, chairman, name, { auth_type: authType });
  return { chairman, operator, connector };
}

async function set(app: TestApp, caller: Caller, id: string, input: ConnectorCredentialInput) {
  return app.graphql(SetCredential, { id, input }, caller);
}

const storedCredentials = (tenantId: string) =>
  t.db.prisma.connectorCredential.count({ where: { tenantId } });
const credentialAudits = (tenantId: string) =>
  t.db.prisma.auditEntry.count({ where: { tenantId, action: { startsWith: 'connector.credential' } } });

describe('setting a credential', () => {
  it('seals it, shows only its fingerprint and writes an audit row without the secret', async () => {
    const { operator, connector } = await setUp();
    const result = await set(t, operator, connector.id, { bearer: { token: 'sk_live_first_token' } });
    expect(result.errors).toBeUndefined();
    const credential = result.data?.setConnectorCredential.credential;
    expect(credential).toEqual({
      authType: 'bearer',
      fingerprint: expect.stringMatching(/^hmac:[0-9a-f]{16}$/),
      updatedAt: expect.any(String),
    });

    const row = await t.db.prisma.connectorCredential.findUniqueOrThrow({
      where: { connectorId: connector.id },
    });
    expect(row).toMatchObject({ keyId: 'k1', authType: 'bearer', tenantId: operator.tenantId });
    expect(Buffer.from(row.sealed).includes('sk_live_first_token')).toBe(false);

    const read = await t.graphql(ReadEverything, { id: connector.id }, operator);
    expect(read.errors).toBeUndefined();
    expect(JSON.stringify(read)).not.toContain('sk_live_first_token');
    expect(read.data?.connector.credential?.fingerprint).toBe(credential?.fingerprint);
    expect(read.data?.auditLog.nodes[0]).toEqual({
      action: 'connector.credential.set',
      outcome: 'set',
      details: expect.objectContaining({
        auth_type: 'bearer',
        fingerprint: credential?.fingerprint,
        key_id: 'k1',
      }),
    });
  });

  it('replaces the secret on a second set (rotation), with the previous fingerprint in the audit row', async () => {
    const { chairman, connector } = await setUp();
    const first = await set(t, chairman, connector.id, { bearer: { token: 'first-token' } });
    const second = await set(t, chairman, connector.id, { bearer: { token: 'second-token' } });
    const before = first.data?.setConnectorCredential.credential?.fingerprint;
    const after = second.data?.setConnectorCredential.credential?.fingerprint;
    expect(after).not.toBe(before);
    expect(await storedCredentials(chairman.tenantId)).toBe(1);
    const audit = await t.db.prisma.auditEntry.findFirstOrThrow({
      where: { tenantId: chairman.tenantId, outcome: 'rotated' },
    });
    expect(audit.details).toMatchObject({ fingerprint: after, previous_fingerprint: before });
    const parts = await credentialRequestParts(t.app.services, await connectorRow(t, connector.id));
    expect(parts).toEqual({
      headers: { authorization: 'Bearer second-token' },
      query: {},
      secrets: ['second-token'],
    });
  });

  it.each([
    ['a member', ['member'] as const],
    ['an agent', ['agent'] as const],
  ])('is forbidden to %s, and writes nothing', async (_name, roles) => {
    const { chairman, connector } = await setUp();
    const caller = await t.caller([...roles], { tenantId: chairman.tenantId });
    const result = await set(t, caller, connector.id, { bearer: { token: 'x' } });
    expect(result.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const cleared = await t.graphql(ClearCredential, { id: connector.id }, caller);
    expect(cleared.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(await storedCredentials(chairman.tenantId)).toBe(0);
    expect(await credentialAudits(chairman.tenantId)).toBe(0);
  });

  it('does not find another tenant’s connector, and writes nothing', async () => {
    const { chairman, connector } = await setUp();
    const stranger = await t.caller(['chairman']);
    const result = await set(t, stranger, connector.id, { bearer: { token: 'x' } });
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const cleared = await t.graphql(ClearCredential, { id: connector.id }, stranger);
    expect(cleared.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await storedCredentials(chairman.tenantId)).toBe(0);
    expect(await t.db.prisma.auditEntry.count({ where: { tenantId: stranger.tenantId } })).toBe(0);
  });

  it.each<[string, string, ConnectorCredentialInput, string]>([
    ['no shape', 'bearer', {}, 'exactly one of'],
    [
      'two shapes',
      'bearer',
      { bearer: { token: 't' }, basic: { username: 'u', password: 'p' } },
      'exactly one of',
    ],
    [
      'another auth type’s shape',
      'bearer',
      { basic: { username: 'u', password: 'p' } },
      'auth_type is bearer',
    ],
    ['a credential for auth_type none', 'none', { bearer: { token: 't' } }, 'takes no credential'],
    ['an empty token', 'bearer', { bearer: { token: '' } }, 'input.bearer.token'],
    ['a token with a line break', 'bearer', { bearer: { token: 'a\r\nX-Evil: 1' } }, 'control characters'],
    ['a username with a colon', 'basic', { basic: { username: 'a:b', password: 'p' } }, 'colon'],
    ['a reserved header', 'api_key', { apiKey: { key: 'k', header: 'Host' } }, 'header the HTTP client sets'],
    ['a header that is not a token', 'api_key', { apiKey: { key: 'k', header: 'X Key' } }, 'header name'],
    [
      'header and query parameter',
      'api_key',
      { apiKey: { key: 'k', header: 'X-K', queryParam: 'k' } },
      'not both',
    ],
    [
      'a token URL on loopback',
      'oauth2_client_credentials',
      { oauth2ClientCredentials: { tokenUrl: 'https://127.0.0.1/token', clientId: 'c', clientSecret: 's' } },
      'input.oauth2ClientCredentials.tokenUrl',
    ],
    [
      'a plain http token URL',
      'oauth2_client_credentials',
      {
        oauth2ClientCredentials: {
          tokenUrl: 'http://auth.example.com/token',
          clientId: 'c',
          clientSecret: 's',
        },
      },
      'input.oauth2ClientCredentials.tokenUrl',
    ],
  ])('refuses %s with BAD_USER_INPUT and writes nothing', async (_name, authType, input, reason) => {
    const { chairman, connector } = await setUp(authType);
    const result = await set(t, chairman, connector.id, input);
    expect(result.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(result.errors?.[0]?.message).toContain(reason);
    expect(await storedCredentials(chairman.tenantId)).toBe(0);
    expect(await credentialAudits(chairman.tenantId)).toBe(0);
  });

  it('answers NOT_CONFIGURED without CONNECTOR_SECRETS_KEY, and writes nothing', async () => {
    const { chairman, connector } = await setUp();
    const result = await set(keyless, chairman, connector.id, { bearer: { token: 't' } });
    expect(result.errors?.[0]?.extensions?.code).toBe('NOT_CONFIGURED');
    expect(result.errors?.[0]?.message).toContain('CONNECTOR_SECRETS_KEY is not set');
    expect(await storedCredentials(chairman.tenantId)).toBe(0);
    expect(await credentialAudits(chairman.tenantId)).toBe(0);
  });
});

describe('clearing a credential', () => {
  it('removes it, with an audit row; the connector then needs one again', async () => {
    const { operator, connector } = await setUp();
    await set(t, operator, connector.id, { bearer: { token: 't' } });
    const result = await t.graphql(ClearCredential, { id: connector.id }, operator);
    expect(result.errors).toBeUndefined();
    expect(result.data?.clearConnectorCredential.credential).toBeNull();
    expect(await storedCredentials(operator.tenantId)).toBe(0);
    const again = await t.graphql(ClearCredential, { id: connector.id }, operator);
    expect(again.errors).toBeUndefined();
    const outcomes = await t.db.prisma.auditEntry.findMany({
      where: { tenantId: operator.tenantId, action: 'connector.credential.clear' },
      orderBy: { createdAt: 'asc' },
      select: { outcome: true },
    });
    expect(outcomes.map((row) => row.outcome).sort()).toEqual(['absent', 'cleared']);
    await expect(credentialRequestParts(t.app.services, await connectorRow(t, connector.id))).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringContaining('no credential'),
        extensions: expect.objectContaining({ code: 'CONFLICT' }),
      }),
    );
  });
});

describe('what the invoke path injects', () => {
  it('puts an api key in X-API-Key by default, or in the query parameter given', async () => {
    const { chairman, connector } = await setUp('api_key');
    await set(t, chairman, connector.id, { apiKey: { key: 'k-123' } });
    const row = await connectorRow(t, connector.id);
    expect(await credentialRequestParts(t.app.services, row)).toEqual({
      headers: { 'X-API-Key': 'k-123' },
      query: {},
      secrets: ['k-123'],
    });
    await set(t, chairman, connector.id, { apiKey: { key: 'k-456', queryParam: 'api_key' } });
    expect(await credentialRequestParts(t.app.services, row)).toEqual({
      headers: {},
      query: { api_key: 'k-456' },
      secrets: ['k-456'],
    });
  });

  it('sends basic credentials', async () => {
    const { chairman, connector } = await setUp('basic');
    await set(t, chairman, connector.id, { basic: { username: 'ana', password: 'pw' } });
    expect(await credentialRequestParts(t.app.services, await connectorRow(t, connector.id))).toEqual({
      headers: { authorization: `Basic ${Buffer.from('ana:pw').toString('base64')}` },
      query: {},
      secrets: ['pw', Buffer.from('ana:pw').toString('base64')],
    });
  });

  it('injects nothing for auth_type none', async () => {
    const { connector } = await setUp('none');
    expect(await credentialRequestParts(t.app.services, await connectorRow(t, connector.id))).toEqual({
      headers: {},
      query: {},
      secrets: [],
    });
  });

  it('obtains a client credentials token through fetchToken and reuses it until the secret changes', async () => {
    const { chairman, connector } = await setUp('oauth2_client_credentials');
    const input = {
      oauth2ClientCredentials: {
        tokenUrl: 'https://auth.example.com/oauth/token',
        clientId: 'client-1',
        clientSecret: 'secret-1',
        scope: 'orders:read',
      },
    };
    await set(t, chairman, connector.id, input);
    const requests: OAuth2TokenRequest[] = [];
    const fetchToken = async (request: OAuth2TokenRequest) => {
      requests.push(request);
      return {
        status: 200,
        body: { access_token: `at-${requests.length}`, token_type: 'bearer', expires_in: 3600 },
      };
    };
    const row = await connectorRow(t, connector.id);
    expect(await credentialRequestParts(t.app.services, row, { fetchToken })).toEqual({
      headers: { authorization: 'Bearer at-1' },
      query: {},
      secrets: ['at-1', 'secret-1', Buffer.from('client-1:secret-1').toString('base64')],
    });
    expect(await credentialRequestParts(t.app.services, row, { fetchToken })).toEqual({
      headers: { authorization: 'Bearer at-1' },
      query: {},
      secrets: ['at-1', 'secret-1', Buffer.from('client-1:secret-1').toString('base64')],
    });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({
      url: 'https://auth.example.com/oauth/token',
      body: 'grant_type=client_credentials&scope=orders%3Aread',
      headers: { authorization: `Basic ${Buffer.from('client-1:secret-1').toString('base64')}` },
    });

    await set(t, chairman, connector.id, {
      oauth2ClientCredentials: { ...input.oauth2ClientCredentials, clientSecret: 'secret-2' },
    });
    expect((await credentialRequestParts(t.app.services, row, { fetchToken })).headers.authorization).toBe(
      'Bearer at-2',
    );
  });

  it('answers UPSTREAM_FAILED when the token endpoint gives no token', async () => {
    const { chairman, connector } = await setUp('oauth2_client_credentials');
    await set(t, chairman, connector.id, {
      oauth2ClientCredentials: {
        tokenUrl: 'https://auth.example.com/token',
        clientId: 'c',
        clientSecret: 's',
      },
    });
    const fetchToken = async () => ({ status: 401, body: { error: 'invalid_client' } });
    await expect(
      credentialRequestParts(t.app.services, await connectorRow(t, connector.id), { fetchToken }),
    ).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringContaining('the token endpoint answered 401'),
        extensions: expect.objectContaining({ code: 'UPSTREAM_FAILED' }),
      }),
    );
  });

  it('refuses a credential set for another auth_type than the template now says', async () => {
    const { chairman, connector } = await setUp('bearer');
    await set(t, chairman, connector.id, { bearer: { token: 't' } });
    await t.db.prisma.connector.update({
      where: { id: connector.id },
      data: { template: { ...connector.template, auth_type: 'basic' } as object },
    });
    await expect(credentialRequestParts(t.app.services, await connectorRow(t, connector.id))).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringContaining('is for auth_type bearer, the template says basic'),
        extensions: expect.objectContaining({ code: 'CONFLICT' }),
      }),
    );
  });

  it('answers a clear CONFLICT for a sealed value altered at rest, not a crash', async () => {
    const { chairman, connector } = await setUp();
    await set(t, chairman, connector.id, { bearer: { token: 'tamper-me' } });
    const row = await t.db.prisma.connectorCredential.findUniqueOrThrow({
      where: { connectorId: connector.id },
    });
    const altered = new Uint8Array(row.sealed);
    altered[altered.length - 1] = (altered[altered.length - 1] ?? 0) ^ 0xff;
    await t.db.prisma.connectorCredential.update({ where: { id: row.id }, data: { sealed: altered } });
    await expect(credentialRequestParts(t.app.services, await connectorRow(t, connector.id))).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringContaining('cannot be opened (it fails authentication); set it again'),
        extensions: expect.objectContaining({ code: 'CONFLICT' }),
      }),
    );
  });

  it('refuses a sealed value moved to another connector', async () => {
    const { chairman, connector } = await setUp('bearer', 'Source');
    const target = await createConnector(t, chairman, 'Target', { auth_type: 'bearer' });
    await set(t, chairman, connector.id, { bearer: { token: 'moved' } });
    await set(t, chairman, target.id, { bearer: { token: 'own' } });
    const source = await t.db.prisma.connectorCredential.findUniqueOrThrow({
      where: { connectorId: connector.id },
    });
    await t.db.prisma.connectorCredential.update({
      where: { connectorId: target.id },
      data: { sealed: source.sealed, keyId: source.keyId },
    });
    await expect(credentialRequestParts(t.app.services, await connectorRow(t, target.id))).rejects.toThrow(
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'CONFLICT' }) }),
    );
  });

  it('answers NOT_CONFIGURED without CONNECTOR_SECRETS_KEY', async () => {
    const { chairman, connector } = await setUp();
    await set(t, chairman, connector.id, { bearer: { token: 't' } });
    await expect(
      credentialRequestParts(keyless.app.services, await connectorRow(t, connector.id)),
    ).rejects.toThrow(
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'NOT_CONFIGURED' }) }),
    );
  });
});

describe('key rotation', () => {
  it('opens secrets of the old key, seals new ones under the new key, and re-seals the rest', async () => {
    const { chairman, connector } = await setUp('bearer', 'Old');
    await set(t, chairman, connector.id, { bearer: { token: 'sealed-under-k1' } });
    const before = await t.db.prisma.connectorCredential.findUniqueOrThrow({
      where: { connectorId: connector.id },
    });
    expect(before.keyId).toBe('k1');
    const row = await connectorRow(t, connector.id);
    expect((await credentialRequestParts(rotated.app.services, row)).headers.authorization).toBe(
      'Bearer sealed-under-k1',
    );

    const fresh = await createConnector(t, chairman, 'New', { auth_type: 'bearer' });
    await set(rotated, chairman, fresh.id, { bearer: { token: 'sealed-under-k2' } });
    const freshRow = await connectorRow(t, fresh.id);
    expect(
      (await t.db.prisma.connectorCredential.findUniqueOrThrow({ where: { connectorId: fresh.id } })).keyId,
    ).toBe('k2');
    // An instance that still has only the old key cannot open it, and says which key is missing.
    await expect(credentialRequestParts(t.app.services, freshRow)).rejects.toThrow(
      expect.objectContaining({
        message: expect.stringContaining("key 'k2'"),
        extensions: expect.objectContaining({ code: 'NOT_CONFIGURED' }),
      }),
    );

    const outcome = await resealConnectorCredentials(
      rotated.db.prisma,
      rotated.app.services.config.connectorSecretsKeys,
    );
    expect(outcome.resealed).toBeGreaterThanOrEqual(1);
    // Values altered at rest by other tests of this file are reported, not re-sealed, and stop nothing.
    expect(outcome.unreadable.map((item) => item.connectorId)).not.toContain(connector.id);
    const after = await t.db.prisma.connectorCredential.findUniqueOrThrow({
      where: { connectorId: connector.id },
    });
    expect(after).toMatchObject({
      keyId: 'k2',
      fingerprint: before.fingerprint,
      updatedAt: before.updatedAt,
    });
    expect(Buffer.from(after.sealed).equals(Buffer.from(before.sealed))).toBe(false);
    // Once every secret is re-sealed, the old key can go.
    const newKeyOnly = {
      ...rotated.app.services,
      config: { connectorSecretsKeys: rotated.app.services.config.connectorSecretsKeys.slice(0, 1) },
    };
    expect((await credentialRequestParts(newKeyOnly, row)).headers.authorization).toBe(
      'Bearer sealed-under-k1',
    );
    expect(await t.db.prisma.connectorCredential.count({ where: { keyId: 'k1' } })).toBe(
      outcome.unreadable.length,
    );
  });
});

describe('start-up', () => {
  it('logs an error naming the key ids of stored secrets that no configured key opens', async () => {
    const { chairman, connector } = await setUp('bearer', 'Logged');
    await set(t, chairman, connector.id, { bearer: { token: 't' } });
    const { lines, logger } = capturingLogger();
    const app = await createTestApp({ database, env: { CONNECTOR_SECRETS_KEY: `k9:${keyOf()}` }, logger });
    await app.close();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 50,
        secretsByKeyId: expect.objectContaining({ k1: expect.any(Number) }),
        msg: expect.stringContaining('sealed under keys CONNECTOR_SECRETS_KEY does not hold'),
      }),
    );
  });

  it('warns in production when no key is configured and no secret is stored', async () => {
    const { lines, logger } = capturingLogger();
    const app = await createTestApp({ env: { NODE_ENV: 'production' }, logger });
    await app.close();
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'CONNECTOR_SECRETS_KEY is not set: connector credentials cannot be stored',
      }),
    );
  });
});
