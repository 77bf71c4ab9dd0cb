import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
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
afterEach(() => {
  vi.restoreAllMocks();
});

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
      query: 'query Vitals($role: String!) { agentVitals(role: $role) { agentRole } }',
      variables: { role: 7 },
    },
    {
      name: 'a missing variable',
      query: 'query Vitals($role: String!) { agentVitals(role: $role) { agentRole } }',
      variables: {},
    },
    {
      name: 'a null $id',
      query: 'query Task($id: ID!) { task(id: $id) { id } }',
      variables: { id: null },
    },
    {
      name: 'an id that is not a uuid (BAD_USER_INPUT)',
      query: 'query Task($id: ID!) { task(id: $id) { id } }',
      variables: { id: 'not-a-uuid' },
    },
    {
      name: 'an unknown role (NOT_FOUND)',
      query: 'query Vitals($role: String!) { agentVitals(role: $role) { agentRole } }',
      variables: { role: 'no-such-role' },
    },
    {
      name: 'a document that does not validate',
      query: '{ me { nope } }',
      variables: {},
    },
  ])('logs $name as a client error at info, without a stack', async ({ query, variables }) => {
    const { requestId } = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${member.token}` },
      body: JSON.stringify({ query, variables }),
    });
    const logged = linesOf(requestId);
    expect(logged).toContainEqual(expect.objectContaining({ path: '/graphql', level: 30 }));
    for (const line of logged) {
      expect(line.level, JSON.stringify(line)).toBeLessThanOrEqual(40);
      expect(JSON.stringify(line)).not.toMatch(/"stack"|unexpected error/);
    }
  });

  it('logs a client error with its code and path, never the value it refused', async () => {
    const { requestId } = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${member.token}` },
      body: JSON.stringify({
        query: 'query Vitals($role: String!) { agentVitals(role: $role) { agentRole } }',
        variables: { role: { secret: 'do-not-log-me' } },
      }),
    });
    const [line] = linesOf(requestId).filter((entry) => entry.msg === 'client error');
    expect(line).toMatchObject({ level: 30, error: 'Variable "$role" got an invalid value' });
    expect(lines.join('\n')).not.toContain('do-not-log-me');

    const notFound = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${member.token}` },
      body: JSON.stringify({ query: '{ agentVitals(role: "no-such-role") { agentRole } }' }),
    });
    expect(linesOf(notFound.requestId).filter((entry) => entry.msg === 'client error')).toEqual([
      expect.objectContaining({ level: 30, code: 'NOT_FOUND', path: ['agentVitals'] }),
    ]);
  });

  it('logs an unexpected error in a resolver as an error, with its stack', async () => {
    vi.spyOn(t.app.services.prisma.task, 'findFirst').mockRejectedValueOnce(new Error('disk on fire'));
    const { requestId } = await send('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${member.token}` },
      body: JSON.stringify({ query: `{ task(id: "${randomUUID()}") { id } }` }),
    });
    const [line] = linesOf(requestId).filter((entry) => entry.level === 50);
    expect(line).toMatchObject({ msg: 'unexpected error in resolver', path: ['task'] });
    expect((line?.err as { stack?: string } | undefined)?.stack).toContain('disk on fire');
  });

  it('logs a client error of an SSE subscription at info, without a stack', async () => {
    const { requestId } = await send('/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${member.token}`,
      },
      body: JSON.stringify({ query: 'subscription { agentPaused(after: "not-an-event-id") { eventId } }' }),
    });
    expect(linesOf(requestId).filter((entry) => entry.msg === 'client error')).toEqual([
      expect.objectContaining({ level: 30, code: 'BAD_USER_INPUT', path: ['agentPaused'] }),
    ]);
  });
});
