import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import { createTestApp, TEST_SECRET, type TestApp } from '../support/app.js';

const Me = graphql(`
  query Me {
    me {
      sub
      tenantId
      roles
    }
  }
`);

const secret = new TextEncoder().encode(TEST_SECRET);
const tenantId = randomUUID();

const sign = (
  claims: Record<string, unknown>,
  { exp = '5m', key = secret }: { exp?: string | null; key?: Uint8Array } = {},
) => {
  let jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject('alice').setIssuedAt();
  if (exp) jwt = jwt.setExpirationTime(exp);
  return jwt.sign(key);
};

/** A well-signed token whose subject the service cannot store. */
const signSubject = (sub: string) =>
  new SignJWT({ tenant_id: tenantId, roles: ['chairman'], sub })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime('5m')
    .sign(secret);

const unsigned = (claims: Record<string, unknown>) => {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 300, ...claims })}.`;
};

const badTokens: [string, () => Promise<string> | string][] = [
  [
    'a wrong signature',
    () =>
      sign({ tenant_id: tenantId, roles: ['chairman'] }, { key: new TextEncoder().encode('x'.repeat(48)) }),
  ],
  ['an expired token', () => sign({ tenant_id: tenantId, roles: ['chairman'] }, { exp: '-1m' })],
  ['no exp claim', () => sign({ tenant_id: tenantId, roles: ['chairman'] }, { exp: null })],
  ['alg none', () => unsigned({ tenant_id: tenantId, roles: ['chairman'] })],
  ['no tenant_id', () => sign({ roles: ['chairman'] })],
  ['a tenant_id that is not a uuid', () => sign({ tenant_id: 'acme', roles: ['chairman'] })],
  ['an unknown role', () => sign({ tenant_id: tenantId, roles: ['emperor'] })],
  ['garbage', () => 'not-a-jwt'],
  ['a sub with a NUL character', () => signSubject('al\u0000ice')],
  ['a sub with a lone surrogate', () => signSubject('al\ud800ice')],
  ['a sub longer than 256 characters', () => signSubject('a'.repeat(257))],
  [
    'agent_roles that is not a list',
    () => sign({ tenant_id: tenantId, roles: ['agent'], agent_roles: 'cfo' }),
  ],
  ['an empty agent_roles', () => sign({ tenant_id: tenantId, roles: ['agent'], agent_roles: [] })],
  [
    'agent_roles naming no agent role',
    () => sign({ tenant_id: tenantId, roles: ['agent'], agent_roles: ['cfo', 'not a role!'] }),
  ],
  [
    'agent_roles on a token without the agent role',
    () => sign({ tenant_id: tenantId, roles: ['chairman'], agent_roles: ['cfo'] }),
  ],
];

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('authentication', () => {
  it('answers me for a valid token and creates the tenant on first sight', async () => {
    const caller = await t.caller(['operator', 'member']);
    const result = await t.graphql(Me, {}, caller);
    expect(result.data?.me).toEqual({
      sub: caller.sub,
      tenantId: caller.tenantId,
      roles: ['operator', 'member'],
    });
    const tenant = await t.db.prisma.tenant.findUnique({ where: { id: caller.tenantId } });
    expect(tenant?.dogfoodLiveMode).toBe(false);
    expect(await t.db.prisma.agentRole.count({ where: { tenantId: caller.tenantId } })).toBe(8);
  });

  it('answers 401 over GraphQL without a token', async () => {
    const result = await t.graphql(Me, {}, null);
    expect(result.status).toBe(401);
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('allows introspection without a token outside production', async () => {
    const result = await t.graphql('{ __schema { queryType { name } } }', {}, null);
    expect(result.data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });

  it.each(badTokens)('answers 401 over GraphQL for %s', async (_name, make) => {
    const result = await t.graphql(Me, {}, { token: await make(), tenantId, sub: 'alice', roles: [] });
    expect(result.status).toBe(401);
    expect(result.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
  });

  it.each(badTokens)('answers 401 over REST for %s', async (_name, make) => {
    const response = await t.rest('POST', '/api/v1/dogfood/agents/ceo/pause', {
      headers: { authorization: `Bearer ${await make()}` },
      body: { actor_user_id: 'x' },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.body).toEqual({ detail: expect.any(String) });
  });

  it('says why a token signed with another secret is refused, naming no secret', async () => {
    const token = await sign(
      { tenant_id: tenantId, roles: ['chairman'] },
      { key: new TextEncoder().encode('x'.repeat(48)) },
    );
    const response = await t.rest('GET', '/api/v1/agents/ceo/vitals', {
      caller: { token, tenantId, sub: 'alice', roles: [] },
    });
    expect(response.status).toBe(401);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": "Invalid token: signature verification failed (it was signed with another secret or key than this server's)",
      }
    `);
    expect(response.body.detail).not.toContain(TEST_SECRET);
  });

  it('says what is wrong with an agent_roles claim', async () => {
    const token = await sign({ tenant_id: tenantId, roles: ['member'], agent_roles: ['cfo'] });
    const response = await t.rest('GET', '/api/v1/agents/cfo/vitals', {
      caller: { token, tenantId, sub: 'alice', roles: [] },
    });
    expect(response.status).toBe(401);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": "Invalid token: agent_roles binds an agent token, and this token has no agent role",
      }
    `);
  });

  it('reads agent_roles in lower case, each role once', async () => {
    const token = await sign({ tenant_id: tenantId, roles: ['agent'], agent_roles: ['CFO', 'ceo', 'cfo'] });
    const result = await t.graphql('{ me { agentRoles } }', {}, { token, tenantId, sub: 'alice', roles: [] });
    expect(result.data).toEqual({ me: { agentRoles: ['ceo', 'cfo'] } });
  });

  it('creates no tenant for a rejected token', async () => {
    const stranger = randomUUID();
    await t.graphql(
      Me,
      {},
      {
        token: await sign({ tenant_id: stranger, roles: [] }, { exp: '-1m' }),
        tenantId: stranger,
        sub: 'a',
        roles: [],
      },
    );
    expect(await t.db.prisma.tenant.findUnique({ where: { id: stranger } })).toBeNull();
  });
});

describe('issuer and audience, when configured', () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await createTestApp({
      env: { AUTH_ISSUER: 'https://id.boardroom.test', AUTH_AUDIENCE: 'boardroom' },
    });
  });
  afterAll(() => strict.close());

  const withClaims = (issuer: string, audience: string) =>
    new SignJWT({ tenant_id: tenantId, roles: ['member'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('alice')
      .setIssuer(issuer)
      .setAudience(audience)
      .setExpirationTime('5m')
      .sign(secret);

  it('accepts the configured issuer and audience', async () => {
    const result = await strict.graphql(
      Me,
      {},
      {
        token: await withClaims('https://id.boardroom.test', 'boardroom'),
        tenantId,
        sub: 'alice',
        roles: [],
      },
    );
    expect(result.data?.me.sub).toBe('alice');
  });

  it('answers 401 for a wrong issuer', async () => {
    const result = await strict.graphql(
      Me,
      {},
      { token: await withClaims('https://evil.test', 'boardroom'), tenantId, sub: 'alice', roles: [] },
    );
    expect(result.status).toBe(401);
  });

  it('answers 401 for a wrong audience', async () => {
    const result = await strict.graphql(
      Me,
      {},
      { token: await withClaims('https://id.boardroom.test', 'other'), tenantId, sub: 'alice', roles: [] },
    );
    expect(result.status).toBe(401);
  });
});
