import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';

const lines: string[] = [];
const destination = new Writable({
  write(chunk, _encoding, done) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    done();
  },
});

let t: TestApp;
let member: Caller;
beforeAll(async () => {
  t = await createTestApp({ logger: pino({ level: 'info' }, destination) });
  member = await t.caller(['member']);
});
afterAll(() => t.close());

/** The request log lines of one request (pino writes synchronously to the stream). */
const linesOf = (requestId: string) =>
  lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.requestId === requestId);

async function send(path: string, init: RequestInit & { headers: Record<string, string> }) {
  const requestId = randomUUID();
  const response = await t.app.yoga.fetch(`http://yoga${path}`, {
    ...init,
    headers: { ...init.headers, 'x-request-id': requestId },
  });
  await response.text();
  return { requestId, status: response.status };
}

describe('request log', () => {
  it('logs an authenticated GraphQL request once, with its tenant and operation, never the token', async () => {
    const { requestId, status } = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${member.token}` },
      body: JSON.stringify({ query: 'query WhoAmI { me { sub } }', operationName: 'WhoAmI' }),
    });
    expect(status).toBe(200);
    expect(linesOf(requestId)).toEqual([
      expect.objectContaining({
        path: '/graphql',
        method: 'POST',
        status: 200,
        tenantId: member.tenantId,
        operation: 'WhoAmI',
      }),
    ]);
    expect(lines.join('\n')).not.toContain(member.token);
  });

  it('logs an authenticated REST request once, for its outer path, with its tenant', async () => {
    const { requestId, status } = await send('/api/v1/agents/ceo/vitals', {
      method: 'GET',
      headers: { authorization: `Bearer ${member.token}` },
    });
    expect(status).toBe(200);
    expect(linesOf(requestId)).toEqual([
      expect.objectContaining({ path: '/api/v1/agents/ceo/vitals', status: 200, tenantId: member.tenantId }),
    ]);
  });

  it('logs a refused request once, without a tenant', async () => {
    const { requestId, status } = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-token' },
      body: JSON.stringify({ query: '{ me { sub } }' }),
    });
    expect(status).toBe(401);
    const [line, ...rest] = linesOf(requestId);
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ path: '/graphql', status: 401 });
    expect(line?.tenantId).toBeUndefined();
    expect(lines.join('\n')).not.toContain('not-a-token');
  });

  it.each([
    {
      name: 'a variable of the wrong type',
      query: 'query Vitals($role: String!) { agentVitals(role: $role) { role } }',
      variables: { role: 7 },
    },
    {
      name: 'a missing variable',
      query: 'query Vitals($role: String!) { agentVitals(role: $role) { role } }',
      variables: {},
    },
  ])(
    'logs $name as the request it is, at info, never as an unexpected error',
    async ({ query, variables }) => {
      const { requestId, status } = await send('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${member.token}` },
        body: JSON.stringify({ query, variables }),
      });
      expect(status).toBe(200);
      expect(linesOf(requestId)).toEqual([expect.objectContaining({ path: '/graphql', level: 30 })]);
    },
  );
});
