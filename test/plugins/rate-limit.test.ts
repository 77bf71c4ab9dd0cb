import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';

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
