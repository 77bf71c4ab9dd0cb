import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runningTest, seedCounts } from '../schema/experiments-support.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { withTemplate } from './connectors-support.js';

let t: TestApp;
let chairman: Caller;

beforeAll(async () => {
  t = await createTestApp();
  chairman = await t.caller(['chairman', 'operator']);
});
afterAll(() => t.close());

const rowsOf = async (tenantId: string) => ({
  tasks: await t.db.prisma.task.count({ where: { tenantId } }),
  connectors: await t.db.prisma.connector.count({ where: { tenantId } }),
  audit: await t.db.prisma.auditEntry.count({ where: { tenantId } }),
});

/** `levels` nested JSON arrays, as text: JSON.stringify itself cannot write 10,000 levels. */
const nestedText = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('text that PostgreSQL cannot store', () => {
  it.each([
    { name: 'a NUL', text: 'hi\u0000', type: 'value_error' },
    { name: 'a lone surrogate', text: 'hi\ud800', type: 'string_unicode' },
  ])(
    'answers 422 at ["body","message"] for $name in a chat message and queues nothing',
    async ({ text, type }) => {
      const caller = await t.caller(['member']);

      const response = await t.rest('POST', '/api/v1/agents/ceo/chat', { caller, body: { message: text } });

      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([
        expect.objectContaining({ type, loc: ['body', 'message'], input: text }),
      ]);
      expect(await rowsOf(caller.tenantId)).toMatchObject({ tasks: 0 });
    },
  );

  it('locates a lone surrogate in a key of body_schema at the key, and creates nothing', async () => {
    const caller = await t.caller(['chairman']);
    const body = withTemplate({ endpoints: [{ method: 'POST', path: '/x', body_schema: { '\udc00': 1 } }] });

    const response = await t.rest('POST', '/api/v1/forge/connectors', { caller, body });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: 'string_unicode',
        loc: ['body', 'template', 'endpoints', 0, 'body_schema', '\udc00', '[key]'],
        msg: 'Input should be a valid string, unable to parse raw data as a unicode string',
        input: '\udc00',
      },
    ]);
    expect(await rowsOf(caller.tenantId)).toMatchObject({ connectors: 0 });
  });

  it('answers 422 at ["body","reason"] for a NUL in a pause reason, and writes no audit row', async () => {
    const caller = await t.caller(['chairman']);

    const response = await t.rest('POST', '/api/v1/dogfood/agents/ceo/pause', {
      caller,
      body: { actor_user_id: 'u1', reason: 'because\u0000' },
    });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'reason'],
        msg: 'Value error, NUL characters (U+0000) are not allowed',
        input: 'because\u0000',
        ctx: { error: 'NUL characters (U+0000) are not allowed' },
      },
    ]);
    expect(await rowsOf(caller.tenantId)).toMatchObject({ audit: 0 });
  });

  it('answers 422 at ["path","role"] for a NUL in a path parameter', async () => {
    const response = await t.rest('GET', '/api/v1/agents/ce%00o/vitals', { caller: chairman });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ type: 'value_error', loc: ['path', 'role'], input: 'ce\u0000o' }),
    ]);
  });

  it('answers 404 for a surrogate percent-encoded in a path, which is not UTF-8', async () => {
    // %ED%A0%80 is not UTF-8 and decodeURIComponent refuses it: not a route.
    const response = await t.rest(
      'POST',
      `/api/v1/finetuning/models/${chairman.tenantId}/a%ED%A0%80/rollback`,
      {
        caller: chairman,
        body: { reason: 'x' },
      },
    );

    expect(response.status).toBe(404);
  });

  it('answers 422 at ["query","cursor"] for a NUL in a query parameter', async () => {
    const response = await t.rest('GET', '/api/v1/forge/connectors?cursor=%00', { caller: chairman });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['query', 'cursor'] })]);
  });
});

describe('deeply nested JSON', () => {
  it('answers 401 without a token for a body nested 10,000 levels deep', async () => {
    const response = await t.rest('POST', '/api/v1/agents/ceo/chat', {
      caller: null,
      body: `{"message":${nestedText(10_000)}}`,
    });

    expect(response.status).toBe(401);
    expect(response.body).toEqual({ detail: 'Not authenticated' });
  });

  it('answers 422 with a token for a field nested 10,000 levels deep, without echoing it', async () => {
    const response = await t.rest('POST', `/api/v1/finetuning/models/${chairman.tenantId}/m/rollback`, {
      caller: chairman,
      body: `{"reason":${nestedText(10_000)}}`,
    });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'reason'],
        msg: 'Value error, JSON should be nested at most 64 levels deep',
        input: null,
        ctx: { error: 'JSON should be nested at most 64 levels deep' },
      },
    ]);
  });

  it('answers 422 at ["body"] for a key no route reads nested 10,000 levels deep, without echoing it', async () => {
    const before = await rowsOf(chairman.tenantId);

    const response = await t.rest('POST', '/api/v1/dogfood/agents/ceo/resume', {
      caller: chairman,
      body: `{"a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
    });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: 'value_error',
        loc: ['body'],
        msg: 'Value error, JSON should be nested at most 128 levels deep',
        input: null,
        ctx: { error: 'JSON should be nested at most 128 levels deep' },
      },
    ]);
    expect(await rowsOf(chairman.tenantId)).toEqual(before);
  });

  it('answers 422 at the JSON field for job_design_data nested 10,000 levels deep', async () => {
    const body = `{"job_design_data":{"a":${nestedText(10_000)}},"candidate_name":"Ada","salary":{"min_amount":1,"max_amount":2,"basis":"annual","currency":"USD"},"location":"Austin, TX"}`;

    const response = await t.rest('POST', '/api/v1/hiring/p1/onboard/c1', { caller: chairman, body });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'job_design_data'] })]);
  });

  it('answers 422 for body_schema nested 65 levels and creates nothing', async () => {
    const caller = await t.caller(['chairman']);
    const body = `{"template":{"name":"deep","base_url":"https://api.example.com","auth_type":"none","endpoints":[{"method":"POST","path":"/x","body_schema":{"a":${nestedText(64)}}}]}}`;

    const response = await t.rest('POST', '/api/v1/forge/connectors', { caller, body });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'template', 'endpoints', 0, 'body_schema'], input: null }),
    ]);
    expect(await rowsOf(caller.tenantId)).toMatchObject({ connectors: 0 });
  });
});

describe('forged cursors', () => {
  it.each([
    { name: 'a non-uuid id', cursor: Buffer.from(`${new Date().toISOString()}|42`).toString('base64url') },
    {
      name: 'an impossible date',
      cursor: Buffer.from(`2026-02-31T00:00:00.000Z|${randomUUID()}`).toString('base64url'),
    },
    { name: 'garbage', cursor: 'garbage' },
  ])('GET /api/v1/forge/connectors answers 422 at ["query","cursor"] for $name', async ({ cursor }) => {
    const response = await t.rest('GET', `/api/v1/forge/connectors?cursor=${cursor}`, { caller: chairman });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: 'value_error',
        loc: ['query', 'cursor'],
        msg: 'Value error, after is not a valid cursor',
        input: cursor,
        ctx: { error: 'after is not a valid cursor' },
      },
    ]);
  });
});

describe('broken percent-encoding in the path', () => {
  it.each(['/api/v1/agents/%E0%A4%A/vitals', '/api/v1/agents/%/chat', '/api/v1/forge/connectors/%C0%AF'])(
    '%s answers 404 {"detail":"Not Found"}',
    async (path) => {
      const response = await t.rest(path.endsWith('chat') ? 'POST' : 'GET', path, {
        caller: chairman,
        ...(path.endsWith('chat') ? { body: { message: 'hi' } } : {}),
      });

      expect(response.status).toBe(404);
      expect(response.body).toEqual({ detail: 'Not Found' });
    },
  );
});

describe('numbers', () => {
  it('answers finite_number for a salary of 1e999', async () => {
    const body = `{"job_design_data":{},"candidate_name":"Ada","salary":{"min_amount":1e999,"max_amount":2,"basis":"annual","currency":"USD"},"location":"Austin, TX"}`;

    const response = await t.rest('POST', '/api/v1/hiring/p1/onboard/c1', { caller: chairman, body });

    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: 'finite_number',
        loc: ['body', 'salary', 'min_amount'],
        msg: 'Input should be a finite number',
        input: null,
      },
    ]);
  });

  it('answers A/B results without NaN for weights stored before they were bounded', async () => {
    const test = await runningTest(t, chairman);
    await seedCounts(t, chairman, test, [
      { observations: 30, successes: 5 },
      { observations: 30, successes: 9 },
    ]);
    await t.db.prisma.abTestVariant.updateMany({ where: { testId: test.id }, data: { weight: 1e308 } });

    const response = await t.rest('GET', `/api/v1/ux/ab-tests/${test.id}/results`, { caller: chairman });

    expect(response.status).toBe(200);
    expect(response.body.variants.map((variant: { observations: number }) => variant.observations)).toEqual([
      30, 30,
    ]);
  });
});
