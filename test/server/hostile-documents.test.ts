import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signToken } from '../../src/auth/tokens.js';
import type { RunningServer } from '../../src/server.js';
import { type Caller, createTestApp, TEST_SECRET, type TestApp } from '../support/app.js';
import { migratedTarget, READY, runMain } from '../support/main-process.js';
import { listen, openSocket } from '../support/ws.js';

/**
 * A chain of fragments, each spreading the next one twice: a walk that follows spreads without remembering
 * them takes 2^depth steps, though the document is under 2 KB. Its leaf selects a cached root field, so
 * the response cache has to classify it.
 */
function fragmentChain(depth: number): string {
  const fragments = Array.from(
    { length: depth },
    (_, index) => `fragment F${index} on Query { ...F${index + 1} ...F${index + 1} }`,
  );
  return [
    'query Chain { ...F0 }',
    ...fragments,
    `fragment F${depth} on Query { agentVitals(role: "ceo") { agentRole } }`,
  ].join('\n');
}

const fragmentCycle = [
  'query Cycle { ...A }',
  'fragment A on Query { agentVitals(role: "ceo") { agentRole } ...B }',
  'fragment B on Query { ...A }',
].join('\n');

interface Answer {
  status: number;
  body: { data?: unknown; errors?: { message: string; extensions?: { code?: string } }[] };
}

async function post(url: string, token: string, query: string): Promise<Answer> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

describe('a document walked before validation (child process)', () => {
  it('answers a 40-deep fragment chain with a validation error while /healthz keeps answering', async () => {
    const target = await migratedTarget('documents');
    try {
      const main = runMain(target.env);
      const [, url = ''] = await main.waitFor(READY);
      const token = await signToken(TEST_SECRET, {
        tenantId: '22222222-2222-4222-8222-222222222222',
        sub: 'member',
        roles: ['member'],
      });

      // Sent first: were the process busy walking it, the probe sent next could not be answered.
      const hostile = post(url, token, fragmentChain(40));
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);

      const answer = await hostile;
      expect(answer.status).toBe(400);
      expect(answer.body.data).toBeUndefined();
      expect(answer.body.errors).toContainEqual(
        expect.objectContaining({
          message: expect.stringMatching(/Query Cost limit of 5000 exceeded/),
          extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }),
        }),
      );
    } finally {
      await target.cleanup();
    }
  });
});

describe('a document walked before validation (in process)', () => {
  let t: TestApp;
  let member: Caller;
  let server: RunningServer;

  beforeAll(async () => {
    t = await createTestApp();
    member = await t.caller(['member']);
    server = await listen(t);
  });
  afterAll(async () => {
    await server.close();
    await t.close();
  });

  it('answers a fragment cycle with a validation error, not a 500', async () => {
    const answer = await post(server.url, member.token, fragmentCycle);

    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        message: 'Cannot spread fragment "A" within itself via "B".',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      }),
    ]);
  });

  it('answers a document over the token limit with that limit, also when it selects only cached fields', async () => {
    const aliases = Array.from(
      { length: 1000 },
      (_, index) => `a${index}: agentVitals(role: "ceo") { agentRole }`,
    );
    const answer = await post(server.url, member.token, `query Many { ${aliases.join(' ')} }`);

    expect(answer.status).toBe(400);
    expect(answer.body.errors?.[0]?.message).toMatch(/more tha[nt] 5000 tokens|Token limit of 5000 exceeded/);
  });

  it('answers the fragment chain and the cycle over graphql-ws with validation errors, and the socket stays open', async () => {
    const socket = await openSocket(server.url, member);
    socket.subscribe('chain', fragmentChain(40));
    socket.subscribe('cycle', fragmentCycle);

    expect(await socket.settled('chain')).toEqual([
      {
        id: 'chain',
        type: 'error',
        payload: expect.arrayContaining([
          expect.objectContaining({ message: expect.stringMatching(/Query Cost limit of 5000 exceeded/) }),
        ]),
      },
    ]);
    expect(await socket.settled('cycle')).toEqual([
      {
        id: 'cycle',
        type: 'error',
        payload: [expect.objectContaining({ message: 'Cannot spread fragment "A" within itself via "B".' })],
      },
    ]);
    socket.subscribe('me', 'query Me { me { sub } }');
    expect((await socket.settled('me'))[0]).toMatchObject({
      type: 'next',
      payload: { data: { me: { sub: member.sub } } },
    });
    await socket.close();
  });
});
