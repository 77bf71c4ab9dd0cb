import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let chairman: Caller;

beforeAll(async () => {
  // One request in flight at a time: every other request of a burst is refused at the door.
  t = await createTestApp({ env: { DATABASE_POOL_SIZE: '1', DATABASE_QUEUE_SIZE: '0' } });
  chairman = await t.caller(['chairman']);
});
afterAll(() => t.close());

const agents = () =>
  t.app.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${chairman.token}` },
    body: JSON.stringify({ query: '{ agents { role } }' }),
  });

describe('useLoadShedding', () => {
  it('answers GraphQL requests beyond the in-flight bound 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    const responses = await Promise.all(Array.from({ length: 20 }, agents));

    const refused = responses.filter((response) => response.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(responses.some((response) => response.status === 200)).toBe(true);
    expect(refused[0]?.headers.get('retry-after')).toBe('2');
    expect(await refused[0]?.json()).toEqual({
      errors: [
        {
          message: 'Service temporarily unavailable; retry in 2 s',
          extensions: { code: 'SERVICE_UNAVAILABLE' },
        },
      ],
    });
  });

  it('admits requests again once those in flight are answered', async () => {
    await Promise.all(Array.from({ length: 20 }, agents));

    expect((await agents()).status).toBe(200);
    expect((await t.rest('GET', '/api/v1/agents/cfo/vitals', { caller: chairman })).status).toBe(200);
  });

  it('never refuses the probes', async () => {
    // The probe comes last, while the only slot is taken by the first query.
    const responses = await Promise.all([...Array.from({ length: 5 }, agents), t.rest('GET', '/readyz')]);
    const ready = responses.at(-1) as { status: number };

    expect(ready.status).toBe(200);
  });
});
