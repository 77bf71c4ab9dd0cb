import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/schema/index.js';
import { encodeCursor } from '../../src/schema/pagination.js';
import { inspectArguments, JSON_MAX_BYTES } from '../../src/validation/input-rules.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let boss: Caller;

beforeAll(async () => {
  t = await createTestApp();
  boss = await t.caller(['chairman', 'operator', 'agent']);
});
afterAll(() => t.close());

type Failure = { status: number; errors?: readonly { extensions?: Record<string, unknown> }[] };
const codeOf = (result: Failure) => result.errors?.[0]?.extensions?.code;
const detailOf = (result: Failure) => result.errors?.[0]?.extensions?.detail as Record<string, unknown>[];

const rowsOf = async (tenantId: string) => ({
  tasks: await t.db.prisma.task.count({ where: { tenantId } }),
  connectors: await t.db.prisma.connector.count({ where: { tenantId } }),
  versions: await t.db.prisma.modelVersion.count({ where: { tenantId } }),
  tests: await t.db.prisma.abTest.count({ where: { tenantId } }),
});

const Chat = `mutation($role: String!, $input: ChatMessageInput!) {
  sendChatMessage(role: $role, input: $input) { taskId }
}`;
const CreateConnector = `mutation($input: ConnectorInput!) { createConnector(input: $input) { id } }`;
const Register = `mutation($input: RegisterModelVersionInput!) { registerModelVersion(input: $input) { id } }`;
const CreateAbTest = `mutation($input: CreateAbTestInput!) { createAbTest(input: $input) { id } }`;

const connector = (endpoint: Record<string, unknown>) => ({
  template: {
    name: `c-${randomUUID()}`,
    baseUrl: 'https://api.example.com',
    authType: 'none',
    endpoints: [{ method: 'GET', path: '/items', ...endpoint }],
  },
});
const version = (overrides: Record<string, unknown>) => ({
  baseModel: 'gpt-4o-mini',
  provider: 'openai',
  trainingDataHash: 'sha256:abc',
  hyperparameters: { epochs: 3 },
  evaluationMetrics: { accuracy: 0.9 },
  ...overrides,
});

/** Nested arrays `levels` deep around a number. */
const nested = (levels: number): unknown => {
  let value: unknown = 1;
  for (let level = 0; level < levels; level++) value = [value];
  return value;
};

describe('text that PostgreSQL cannot store', () => {
  it.each([
    { name: 'a NUL', text: 'hello\u0000world', type: 'value_error' },
    { name: 'a lone high surrogate', text: 'hello\ud800', type: 'string_unicode' },
    { name: 'a lone low surrogate', text: '\udc00hello', type: 'string_unicode' },
  ])('refuses $name in a chat message as BAD_USER_INPUT and queues nothing', async ({ text, type }) => {
    const caller = await t.caller(['member']);

    const result = await t.graphql(Chat, { role: 'ceo', input: { message: text } }, caller);

    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(detailOf(result)).toEqual([
      expect.objectContaining({ type, loc: ['input', 'message'], input: text }),
    ]);
    expect(await rowsOf(caller.tenantId)).toMatchObject({ tasks: 0 });
  });

  it('refuses a lone surrogate in a key of a JSON field, located at the key', async () => {
    const caller = await t.caller(['chairman']);

    const result = await t.graphql(
      CreateConnector,
      {
        input: connector({
          bodySchema: { type: 'object', properties: { 'na\ud800me': { type: 'string' } } },
        }),
      },
      caller,
    );

    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(detailOf(result)).toEqual([
      {
        type: 'string_unicode',
        loc: ['input', 'template', 'endpoints', 0, 'bodySchema', 'properties', 'na\ud800me', '[key]'],
        msg: 'Input should be a valid string, unable to parse raw data as a unicode string',
        input: 'na\ud800me',
      },
    ]);
    expect(await rowsOf(caller.tenantId)).toMatchObject({ connectors: 0 });
  });

  it('refuses a NUL deep in a JSON value', async () => {
    const caller = await t.caller(['operator']);

    const result = await t.graphql(
      Register,
      { input: version({ hyperparameters: { schedule: [{ name: 'warm\u0000up' }] } }) },
      caller,
    );

    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(detailOf(result)).toEqual([
      expect.objectContaining({
        type: 'value_error',
        loc: ['input', 'hyperparameters', 'schedule', 0, 'name'],
        msg: 'Value error, NUL characters (U+0000) are not allowed',
      }),
    ]);
    expect(await rowsOf(caller.tenantId)).toMatchObject({ versions: 0 });
  });

  it('refuses a NUL in a string literal of the document, not only in variables', async () => {
    const result = await t.graphql('{ modelVersions(baseModel: "gpt\\u0000x") { id } }', undefined, boss);

    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(detailOf(result)).toEqual([expect.objectContaining({ loc: ['baseModel'] })]);
  });

  it.each([
    { field: 'claimTask', query: 'mutation($v: String!) { claimTask(role: $v) { id } }' },
    { field: 'agent', query: 'query($v: String!) { agent(role: $v) { role } }' },
    { field: 'productionModel', query: 'query($v: String!) { productionModel(baseModel: $v) { id } }' },
    { field: 'auditLog', query: 'query($v: String) { auditLog(action: $v) { nodes { id } } }' },
    {
      field: 'assignAbTestVariant',
      query: `mutation($v: String!) { assignAbTestVariant(testId: "${randomUUID()}", subjectId: $v) { variantId } }`,
    },
  ])('refuses a lone surrogate in the plain argument of $field', async ({ query }) => {
    const result = await t.graphql(query, { v: 'x\udfff' }, boss);

    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(detailOf(result)).toEqual([expect.objectContaining({ type: 'string_unicode', input: 'x\udfff' })]);
  });

  it('keeps 401 before 422: no token and a NUL answer UNAUTHENTICATED', async () => {
    const result = await t.graphql(Chat, { role: 'ceo', input: { message: '\u0000' } }, null);

    expect(codeOf(result)).toBe('UNAUTHENTICATED');
  });

  it('keeps 403 before 422: a member creating a connector with a NUL is FORBIDDEN', async () => {
    const member = await t.caller(['member']);

    const result = await t.graphql(CreateConnector, { input: connector({ path: '/a\u0000' }) }, member);

    expect(codeOf(result)).toBe('FORBIDDEN');
  });

  it('accepts well-formed text with astral characters, right-to-left and zero-width marks', async () => {
    const caller = await t.caller(['member']);

    const result = await t.graphql(
      Chat,
      { role: 'ceo', input: { message: '😀 \u202eabc\u200b שלום' } },
      caller,
    );

    expect(result.errors).toBeUndefined();
  });
});

describe('free-form JSON fields', () => {
  it('refuses hyperparameters nested 65 levels deep, and no version is registered', async () => {
    const caller = await t.caller(['operator']);

    const result = await t.graphql(
      Register,
      { input: version({ hyperparameters: { a: nested(64) } }) },
      caller,
    );

    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(detailOf(result)).toEqual([
      {
        type: 'value_error',
        loc: ['input', 'hyperparameters'],
        msg: 'Value error, JSON should be nested at most 64 levels deep',
        input: null,
        ctx: { error: 'JSON should be nested at most 64 levels deep' },
      },
    ]);
    expect(await rowsOf(caller.tenantId)).toMatchObject({ versions: 0 });
  });

  it('accepts hyperparameters nested exactly 64 levels deep', async () => {
    const result = await t.graphql(
      Register,
      { input: version({ hyperparameters: { a: nested(63) } }) },
      boss,
    );

    expect(result.errors).toBeUndefined();
  });

  it('refuses a request carrying an endpoint schema larger than 1 MiB, as REST does', async () => {
    const caller = await t.caller(['chairman']);
    const big = { description: 'x'.repeat(JSON_MAX_BYTES) };

    const result = await t.graphql(CreateConnector, { input: connector({ responseSchema: big }) }, caller);

    // The body limit (1 MiB but for chat) answers before the field's own rule can.
    expect(result.status).toBe(413);
    expect(codeOf(result)).toBe('PAYLOAD_TOO_LARGE');
    expect(await rowsOf(caller.tenantId)).toMatchObject({ connectors: 0 });
  });

  it('refuses 20 MiB of hyperparameters', async () => {
    const caller = await t.caller(['operator']);
    const huge = { blob: 'x'.repeat(20 * 1024 * 1024) };

    const result = await t.graphql(Register, { input: version({ hyperparameters: huge }) }, caller);

    expect(result.status).toBe(413);
    expect(codeOf(result)).toBe('PAYLOAD_TOO_LARGE');
    expect(await rowsOf(caller.tenantId)).toMatchObject({ versions: 0 });
  });

  it('locates a JSON argument over 1 MiB serialized, whatever transport carried it', () => {
    const field = schema.getMutationType()?.getFields().registerModelVersion;
    const input = { hyperparameters: { blob: 'x'.repeat(JSON_MAX_BYTES) } };

    expect(inspectArguments(field?.args ?? [], { input })).toEqual([
      expect.objectContaining({ type: 'value_error', loc: ['input', 'hyperparameters'], input: null }),
    ]);
  });

  it.each([
    { who: 'without a token', caller: () => null },
    { who: 'with a token', caller: () => boss },
  ])('answers variables nested 10,000 levels deep with 400 BAD_USER_INPUT $who', async ({ caller }) => {
    // Built as text: JSON.stringify itself cannot write a value this deep.
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const input = `{"baseModel":"m","provider":"openai","trainingDataHash":"h","hyperparameters":{"a":${deep}},"evaluationMetrics":{}}`;
    const token = caller()?.token;
    const response = await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: `{"query":${JSON.stringify(Register)},"variables":{"input":${input}}}`,
    });
    const result = (await response.json()) as Failure;

    expect(response.status).toBe(400);
    expect(codeOf(result)).toBe('BAD_USER_INPUT');
  });
});

describe('deeply nested documents', () => {
  it('answers a literal list nested 2,400 levels deep with 400 BAD_USER_INPUT, not a parser overflow', async () => {
    const result = await t.graphql(
      `{ modelVersions(baseModel: ${'['.repeat(2400)}${']'.repeat(2400)}) { id } }`,
      undefined,
      boss,
    );

    expect(result.status).toBe(400);
    expect(codeOf(result)).toBe('BAD_USER_INPUT');
  });

  it('does not count brackets inside strings and comments', async () => {
    const text = '[{('.repeat(200);
    const query = `# ${text}\nmutation { sendChatMessage(role: "ceo", input: { message: "${text}" }) { taskId } }`;

    const result = await t.graphql(query, undefined, boss);

    expect(result.errors).toBeUndefined();
  });
});

describe('forged cursors', () => {
  const forged = [
    {
      name: 'a non-uuid id',
      after: Buffer.from(`${new Date().toISOString()}|1 OR 1=1`).toString('base64url'),
    },
    {
      name: 'a date out of range',
      after: Buffer.from(`+275760-09-13T00:00:00.000Z|${randomUUID()}`).toString('base64url'),
    },
    { name: 'garbage', after: '%%%not-base64%%%' },
    { name: 'a NUL id', after: Buffer.from(`${new Date().toISOString()}|\u0000`).toString('base64url') },
  ];
  const lists = [
    { field: 'tasks', query: 'query($after: String) { tasks(after: $after) { nodes { id } } }' },
    { field: 'connectors', query: 'query($after: String) { connectors(after: $after) { nodes { id } } }' },
    { field: 'auditLog', query: 'query($after: String) { auditLog(after: $after) { nodes { id } } }' },
    { field: 'abTests', query: 'query($after: String) { abTests(after: $after) { nodes { id } } }' },
  ];

  it.each(lists.flatMap((list) => forged.map((cursor) => ({ ...list, ...cursor }))))(
    '$field refuses a cursor with $name as BAD_USER_INPUT at after',
    async ({ query, after }) => {
      const result = await t.graphql(query, { after }, boss);

      expect(codeOf(result)).toBe('BAD_USER_INPUT');
      expect(detailOf(result)).toEqual([expect.objectContaining({ loc: ['after'] })]);
    },
  );

  it.each(lists)('$field accepts a cursor it could have made', async ({ query }) => {
    const after = encodeCursor({ createdAt: new Date(), id: randomUUID() });

    const result = await t.graphql(query, { after }, boss);

    expect(result.errors).toBeUndefined();
  });
});

describe('A/B test weights', () => {
  it.each([
    { name: '1e308', weight: 1e308 },
    { name: 'above a million', weight: 1_000_001 },
    { name: '1e-300', weight: 1e-300 },
    { name: 'zero', weight: 0 },
  ])('refuses a weight of $name, and no test is created', async ({ weight }) => {
    const caller = await t.caller(['operator']);

    const result = await t.graphql(
      CreateAbTest,
      {
        input: {
          name: 'onboarding',
          variants: [
            { name: 'a', weight },
            { name: 'b', weight: 1 },
          ],
        },
      },
      caller,
    );

    expect(codeOf(result)).toBe('BAD_USER_INPUT');
    expect(detailOf(result)).toEqual([expect.objectContaining({ loc: ['input', 'variants', 0, 'weight'] })]);
    expect(await rowsOf(caller.tenantId)).toMatchObject({ tests: 0 });
  });

  it('accepts the bounds themselves', async () => {
    const result = await t.graphql(
      CreateAbTest,
      {
        input: {
          name: 'onboarding',
          variants: [
            { name: 'a', weight: 0.000001 },
            { name: 'b', weight: 1e6 },
          ],
        },
      },
      boss,
    );

    expect(result.errors).toBeUndefined();
  });
});

describe('variables a scalar cannot even describe', () => {
  it.each([
    { name: 'an object whose toString is not a function', value: { toString: 0 } },
    { name: 'an object without a prototype', value: JSON.parse('{"__proto__": null, "valueOf": 1}') },
  ])(
    'answers it like any invalid variable, not as an internal error, for $name as a SafeInt',
    async ({ value }) => {
      const before = await rowsOf(boss.tenantId);

      const result = await t.graphql(
        `mutation($id: ID!, $input: CompleteTaskInput!) { completeTask(id: $id, input: $input) { id } }`,
        { id: randomUUID(), input: { costUsd: 0, recommendations: [], tokensUsed: value } },
        boss,
      );

      expect(result.errors?.[0]).toMatchObject({
        message: expect.stringContaining('Variable "$input" got invalid value'),
      });
      expect(codeOf(result)).not.toBe('INTERNAL_SERVER_ERROR');
      expect(await rowsOf(boss.tenantId)).toEqual(before);
    },
  );
});
