import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.js';
import { type Caller, createTestApp, TEST_SECRET, type TestApp } from '../support/app.js';

let t: TestApp;
let caller: Caller;

beforeAll(async () => {
  t = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3' } });
  caller = await t.caller(['member']);
});
afterAll(() => t.close());

describe('rate limit', () => {
  it('answers 429 with Retry-After on REST once a caller spent the budget', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await t.rest('GET', '/api/v1/agents/ceo/vitals', { caller })).status);
    const refused = await t.rest('GET', '/api/v1/agents/ceo/vitals', { caller });
    expect(statuses).toEqual([200, 200, 200]);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body).toEqual({ detail: expect.stringMatching(/^Too many requests; retry in \d+ s$/) });
  });

  it('answers 429 as a GraphQL error on /graphql for the same caller', async () => {
    const result = await t.graphql('{ me { sub } }', {}, caller);
    expect(result.status).toBe(429);
    expect(result.errors?.[0]?.extensions?.code).toBe('RATE_LIMITED');
  });

  it('keeps budgets apart per caller and never limits the probes', async () => {
    const other = await t.caller(['member']);
    expect((await t.rest('GET', '/api/v1/agents/ceo/vitals', { caller: other })).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await t.rest('GET', '/healthz')).status).toBe(200);
  });
});

/** Sends a request as if from `address` (the node:http server context carries the socket). */
async function from(
  app: TestApp,
  address: string,
  path: string,
  authorization?: string,
): Promise<{ status: number; retryAfter: string | null; body: any }> {
  const response = await app.app.yoga.fetch(
    `http://yoga${path}`,
    {
      method: path === '/graphql' ? 'POST' : 'GET',
      headers: {
        'content-type': 'application/json',
        ...(authorization !== undefined ? { authorization } : {}),
      },
      ...(path === '/graphql' ? { body: JSON.stringify({ query: '{ me { sub } }' }) } : {}),
    },
    { req: { socket: { remoteAddress: address } } },
  );
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: await response.json(),
  };
}

const anAddress = () => `198.51.100.${Math.floor(Math.random() * 250) + 1}-${randomUUID()}`;

describe('rate limit keys', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({ env: { RATE_LIMIT_PER_MINUTE: '3', AUTH_FAILURES_PER_MINUTE: '2' } });
  });
  afterAll(() => limited.close());

  it('gives one budget to a verified caller however the Authorization header is spelled', async () => {
    const member = await limited.caller(['member']);
    const address = anAddress();
    const spellings = [`Bearer ${member.token}`, `bearer ${member.token}`, `BEARER   ${member.token}  `];
    const statuses = [];
    for (const spelling of spellings)
      statuses.push((await from(limited, address, '/api/v1/agents/ceo/vitals', spelling)).status);
    const refused = await from(limited, anAddress(), '/api/v1/agents/ceo/vitals', `Bearer\t${member.token}`);
    expect(statuses).toEqual([200, 200, 200]);
    expect(refused.status).toBe(429);
  });

  it('gives one budget to a tenant and subject across their tokens', async () => {
    const member = await limited.caller(['member']);
    const tokens = await Promise.all(
      ['1h', '2h', '3h', '4h'].map((ttl) =>
        signToken(TEST_SECRET, { tenantId: member.tenantId, sub: member.sub, roles: ['member'], ttl }),
      ),
    );
    expect(new Set(tokens).size).toBe(4);
    const statuses = [];
    for (const token of tokens)
      statuses.push((await from(limited, anAddress(), '/graphql', `Bearer ${token}`)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('limits failed authentications per client address, apart from the request budget', async () => {
    const address = anAddress();
    const guess = (n: number) => `Bearer guess.${n}.x`;
    const first = [(await from(limited, address, '/graphql', guess(1))).status];
    first.push((await from(limited, address, '/api/v1/agents/ceo/vitals', guess(2))).status);
    expect(first).toEqual([401, 401]);
    const graphql = await from(limited, address, '/graphql', guess(3));
    expect([graphql.status, Number(graphql.retryAfter) > 0]).toEqual([429, true]);
    expect(graphql.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    const rest = await from(limited, address, '/api/v1/agents/ceo/vitals', guess(4));
    expect(rest.status).toBe(429);
    expect(rest.body).toEqual({ detail: expect.stringMatching(/^Too many requests; retry in \d+ s$/) });
    // Another address still gets its answer; a valid token from the guessing address still works.
    expect((await from(limited, anAddress(), '/graphql', guess(5))).status).toBe(401);
    const member = await limited.caller(['member']);
    expect((await from(limited, address, '/graphql', `Bearer ${member.token}`)).status).toBe(200);
  });

  it('keys requests without a token by client address', async () => {
    const address = anAddress();
    const statuses = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await from(limited, address, '/api/v1/agents/ceo/vitals')).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await from(limited, anAddress(), '/api/v1/agents/ceo/vitals')).status).toBe(401);
  });
});
