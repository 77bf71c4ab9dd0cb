import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { must } from '../support/seed.js';
import { createConnector, template } from './connectors-support.js';

// The seed tells "optional" (may be omitted) from "nullable" (may be null): only the fields it marks "or
// null" accept null. Every other null is the 422 FastAPI answers for the field's type, at the field's
// exact loc, with `input: null`. One row per request field of the seed's operations that take a body.

let t: TestApp;
let chairman: Caller;
let operator: Caller;
let connectorId: string;

beforeAll(async () => {
  t = await createTestApp();
  const tenantId = randomUUID();
  chairman = await t.caller(['chairman'], { tenantId });
  operator = await t.caller(['operator'], { tenantId });
  await must(t, 'mutation { setDogfoodLiveMode(enabled: true) { id } }', {}, chairman);
  connectorId = (await createConnector(t, chairman, 'Null checks')).id;
  // Two production versions in turn, so that one rollback has a version to restore.
  for (const hash of ['sha256:a', 'sha256:b']) {
    const { registerModelVersion } = await must(
      t,
      `mutation($input: RegisterModelVersionInput!) { registerModelVersion(input: $input) { id } }`,
      {
        input: {
          baseModel: 'gpt-4o-mini',
          provider: 'openai',
          trainingDataHash: hash,
          hyperparameters: {},
          evaluationMetrics: {},
        },
      },
      operator,
    );
    await must(
      t,
      'mutation($id: ID!) { promoteModelVersion(id: $id) { id } }',
      { id: registerModelVersion.id },
      operator,
    );
  }
});
afterAll(() => t.close());

/** A PNG signature, the smallest attachment accepted as image/png. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]).toString('base64');

type Expected = 'accepted' | { type: string; msg: string; ctx?: Record<string, unknown> };

const stringType = { type: 'string_type', msg: 'Input should be a valid string' };
const boolType = { type: 'bool_type', msg: 'Input should be a valid boolean' };
const intType = { type: 'int_type', msg: 'Input should be a valid integer' };
const floatType = { type: 'float_type', msg: 'Input should be a valid number' };
const listType = { type: 'list_type', msg: 'Input should be a valid list' };
const dictType = { type: 'dict_type', msg: 'Input should be a valid dictionary' };
// FastAPI validates a body with `from_attributes=True`, so a nested model that is not an object is this.
const modelType = {
  type: 'model_attributes_type',
  msg: 'Input should be a valid dictionary or object to extract fields from',
};
const enumOf = (...values: string[]) => {
  const expected = `${values
    .slice(0, -1)
    .map((value) => `'${value}'`)
    .join(', ')} or '${values.at(-1)}'`;
  return { type: 'enum', msg: `Input should be ${expected}`, ctx: { expected } };
};

interface Operation {
  method: string;
  path: () => string;
  caller: () => Caller;
  /** A body every check accepts, with every optional field given. */
  body: () => Record<string, unknown>;
  status: number;
  fields: [path: (string | number)[], expected: Expected][];
}

const connectorFields: Operation['fields'] = [
  [['template'], modelType],
  [['template', 'name'], stringType],
  [['template', 'base_url'], stringType],
  [['template', 'auth_type'], enumOf('none', 'api_key', 'bearer', 'basic', 'oauth2_client_credentials')],
  [['template', 'description'], stringType],
  [['template', 'endpoints'], listType],
  [['template', 'endpoints', 0], modelType],
  [['template', 'endpoints', 0, 'method'], enumOf('GET', 'POST', 'PUT', 'PATCH', 'DELETE')],
  [['template', 'endpoints', 0, 'path'], stringType],
  [['template', 'endpoints', 0, 'body_schema'], dictType],
  [['template', 'endpoints', 0, 'query_params'], dictType],
  [['template', 'endpoints', 0, 'response_schema'], dictType],
  [['template', 'rate_limits'], modelType],
  [['template', 'rate_limits', 'per_minute'], intType],
  [['template', 'rate_limits', 'per_hour'], intType],
  [['template', 'rate_limits', 'per_day'], intType],
];

/** A template with every optional part, its first endpoint with every schema. */
const fullTemplate = (name: string) => {
  const full = template(name);
  full.endpoints[0] = { ...full.endpoints[0], body_schema: { type: 'object' } } as (typeof full.endpoints)[0];
  return { template: full };
};

const operations: Record<string, Operation> = {
  'POST /api/v1/agents/{role}/chat': {
    method: 'POST',
    path: () => '/api/v1/agents/cfo/chat',
    caller: () => chairman,
    body: () => ({
      message: 'Summarise the quarter.',
      attachments: [{ data: PNG, mime_type: 'image/png', filename: 'q3.png' }],
      thread_id: null,
      persist_thread: true,
    }),
    status: 202,
    fields: [
      [['message'], stringType],
      [['attachments'], 'accepted'],
      [['attachments', 0], modelType],
      [['attachments', 0, 'data'], stringType],
      [['attachments', 0, 'mime_type'], stringType],
      [['attachments', 0, 'filename'], 'accepted'],
      [['thread_id'], 'accepted'],
      [['persist_thread'], boolType],
    ],
  },
  'POST /api/v1/forge/connectors': {
    method: 'POST',
    path: () => '/api/v1/forge/connectors',
    caller: () => chairman,
    body: () => fullTemplate(`Created ${randomUUID()}`),
    status: 201,
    fields: connectorFields,
  },
  'PUT /api/v1/forge/connectors/{id}': {
    method: 'PUT',
    path: () => `/api/v1/forge/connectors/${connectorId}`,
    caller: () => operator,
    body: () => fullTemplate('Null checks'),
    status: 200,
    fields: connectorFields,
  },
  'POST /api/v1/dogfood/agents/{role}/pause': {
    method: 'POST',
    path: () => '/api/v1/dogfood/agents/cmo/pause',
    caller: () => chairman,
    body: () => ({ actor_user_id: 'chair-1', reason: 'Quarter close' }),
    status: 200,
    fields: [
      [['actor_user_id'], stringType],
      [['reason'], 'accepted'],
    ],
  },
  'POST /api/v1/hiring/{process_id}/onboard/{candidate_id}': {
    method: 'POST',
    path: () => '/api/v1/hiring/proc-1/onboard/cand-1',
    caller: () => operator,
    body: () => ({
      job_design_data: { title: 'Data Engineer' },
      candidate_name: 'Ada Lovelace',
      salary: { min_amount: 90000, max_amount: 110000, basis: 'annual', currency: 'USD' },
      location: 'Austin, TX',
    }),
    status: 200,
    fields: [
      [['job_design_data'], dictType],
      [['candidate_name'], stringType],
      [['salary'], modelType],
      [['salary', 'min_amount'], floatType],
      [['salary', 'max_amount'], floatType],
      [['salary', 'basis'], enumOf('annual', 'monthly', 'hourly')],
      [['salary', 'currency'], stringType],
      [['location'], stringType],
    ],
  },
  'POST /api/v1/finetuning/models/{tenant_id}/{base_model}/rollback': {
    method: 'POST',
    path: () => `/api/v1/finetuning/models/${operator.tenantId}/gpt-4o-mini/rollback`,
    caller: () => operator,
    body: () => ({ reason: 'Regression in evals', performed_by: 'ops-oncall' }),
    status: 200,
    fields: [
      [['reason'], stringType],
      [['performed_by'], stringType],
    ],
  },
};

/** `body` with the value at `path` replaced by null. */
function withNullAt(body: Record<string, unknown>, path: (string | number)[]): Record<string, unknown> {
  const copy = structuredClone(body);
  let parent: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  parent[path.at(-1) as string | number] = null;
  return copy;
}

describe.each(Object.entries(operations))('%s', (_name, operation) => {
  it('accepts the body with every field given', async () => {
    const response = await t.rest(operation.method, operation.path(), {
      caller: operation.caller(),
      body: operation.body(),
    });
    expect(response.status, JSON.stringify(response.body)).toBe(operation.status);
  });

  it.each(operation.fields.map(([path, expected]) => [path.join('.'), path, expected] as const))(
    '%s: null is answered as the seed says',
    async (_label, path, expected) => {
      const response = await t.rest(operation.method, operation.path(), {
        caller: operation.caller(),
        body: withNullAt(operation.body(), path),
      });
      if (expected === 'accepted') {
        expect(response.status, JSON.stringify(response.body)).toBe(operation.status);
        return;
      }
      expect(response.status).toBe(422);
      expect(response.body).toEqual({ detail: [{ ...expected, loc: ['body', ...path], input: null }] });
    },
  );

  it('a null body is a missing body', async () => {
    const response = await t.rest(operation.method, operation.path(), {
      caller: operation.caller(),
      body: 'null',
    });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({
      detail: [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }],
    });
  });
});

// GraphQL runs the same rules: an explicit null where the seed says optional is BAD_USER_INPUT (422),
// located relative to the arguments, and nothing is written.
describe('the same nulls over GraphQL', () => {
  it.each([
    [
      'sendChatMessage persistThread',
      'mutation($input: ChatMessageInput!) { sendChatMessage(role: "cfo", input: $input) { taskId } }',
      () => ({ input: { message: 'Hello', persistThread: null } }),
      { ...boolType, loc: ['input', 'persistThread'] },
    ],
    [
      'createConnector rateLimits.perDay',
      'mutation($input: ConnectorInput!) { createConnector(input: $input) { id } }',
      () => ({
        input: {
          template: {
            name: 'GraphQL nulls',
            baseUrl: 'https://api.example.com',
            authType: 'none',
            rateLimits: { perDay: null },
          },
        },
      }),
      { ...intType, loc: ['input', 'template', 'rateLimits', 'perDay'] },
    ],
    [
      'rollbackModel performedBy',
      'mutation($tenantId: ID!, $input: RollbackInput!) { rollbackModel(tenantId: $tenantId, baseModel: "gpt-4o-mini", input: $input) { id } }',
      () => ({ tenantId: operator.tenantId, input: { reason: 'Regression', performedBy: null } }),
      { ...stringType, loc: ['input', 'performedBy'] },
    ],
  ])('%s: null is BAD_USER_INPUT', async (_label, query, variables, item) => {
    const caller = query.includes('createConnector') ? chairman : operator;
    const result = await t.graphql(query, variables(), caller);
    expect(result.data).toBeNull();
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [{ ...item, input: null }],
    });
  });
});
