import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { accepted, refused, withTemplate } from './connectors-support.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('body and template shape', () => {
  it('answers 422 at ["body"] for a missing body', async () => {
    expect(await refused(t, undefined)).toEqual([
      { type: 'missing', loc: ['body'], msg: 'Field required', input: null },
    ]);
  });

  it('answers 422 at ["body","template"] when template is missing', async () => {
    expect(await refused(t, { name: 'x' })).toMatchInlineSnapshot(`
      [
        {
          "input": {
            "name": "x",
          },
          "loc": [
            "body",
            "template",
          ],
          "msg": "Field required",
          "type": "missing",
        },
      ]
    `);
  });

  it('answers model_attributes_type when template is not an object', async () => {
    expect(await refused(t, { template: ['x'] })).toEqual([
      expect.objectContaining({ type: 'model_attributes_type', loc: ['body', 'template'] }),
    ]);
  });

  it('reports every missing required field of the template', async () => {
    const detail = await refused(t, { template: {} });
    expect(detail.map((item) => [item.type, item.loc])).toEqual([
      ['missing', ['body', 'template', 'name']],
      ['missing', ['body', 'template', 'base_url']],
      ['missing', ['body', 'template', 'auth_type']],
    ]);
  });
});

describe('name', () => {
  it('answers string_too_short for an empty name', async () => {
    expect(await refused(t, withTemplate({ name: '' }))).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "min_length": 1,
          },
          "input": "",
          "loc": [
            "body",
            "template",
            "name",
          ],
          "msg": "String should have at least 1 character",
          "type": "string_too_short",
        },
      ]
    `);
  });

  it('answers string_too_long for a name of 101 characters', async () => {
    expect(await refused(t, withTemplate({ name: 'n'.repeat(101) }))).toEqual([
      expect.objectContaining({
        type: 'string_too_long',
        loc: ['body', 'template', 'name'],
        ctx: { max_length: 100 },
      }),
    ]);
  });

  it('accepts a name of exactly 100 characters', async () => {
    await accepted(t, { name: 'n'.repeat(100) });
  });

  it('answers value_error for a blank name', async () => {
    expect(await refused(t, withTemplate({ name: '   ' }))).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "error": "name must not be blank",
          },
          "input": "   ",
          "loc": [
            "body",
            "template",
            "name",
          ],
          "msg": "Value error, name must not be blank",
          "type": "value_error",
        },
      ]
    `);
  });

  it('answers value_error for a name with control characters', async () => {
    expect(await refused(t, withTemplate({ name: 'Orders\nAPI' }))).toEqual([
      expect.objectContaining({ type: 'value_error', loc: ['body', 'template', 'name'] }),
    ]);
  });

  it('answers string_type for a name that is not a string', async () => {
    expect(await refused(t, withTemplate({ name: 42 }))).toEqual([
      expect.objectContaining({ type: 'string_type', loc: ['body', 'template', 'name'], input: 42 }),
    ]);
  });
});

describe('auth_type and description', () => {
  it('answers enum for an unknown auth_type', async () => {
    expect(await refused(t, withTemplate({ auth_type: 'kerberos' }))).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "expected": "'none', 'api_key', 'bearer', 'basic' or 'oauth2_client_credentials'",
          },
          "input": "kerberos",
          "loc": [
            "body",
            "template",
            "auth_type",
          ],
          "msg": "Input should be 'none', 'api_key', 'bearer', 'basic' or 'oauth2_client_credentials'",
          "type": "enum",
        },
      ]
    `);
  });

  it.each(['none', 'api_key', 'bearer', 'basic', 'oauth2_client_credentials'])(
    'accepts auth_type %s',
    async (authType) => {
      const created = await accepted(t, { auth_type: authType });
      expect(created.template.auth_type).toBe(authType);
    },
  );

  it('answers string_too_long for a description over 2000 characters', async () => {
    expect(await refused(t, withTemplate({ description: 'd'.repeat(2001) }))).toEqual([
      expect.objectContaining({ type: 'string_too_long', loc: ['body', 'template', 'description'] }),
    ]);
  });
});

describe('endpoints', () => {
  it('answers enum at ["body","template","endpoints",0,"method"] for an unknown method', async () => {
    expect(
      await refused(t, withTemplate({ endpoints: [{ method: 'TRACE', path: '/x' }] })),
    ).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "expected": "'GET', 'POST', 'PUT', 'PATCH' or 'DELETE'",
          },
          "input": "TRACE",
          "loc": [
            "body",
            "template",
            "endpoints",
            0,
            "method",
          ],
          "msg": "Input should be 'GET', 'POST', 'PUT', 'PATCH' or 'DELETE'",
          "type": "enum",
        },
      ]
    `);
  });

  it('locates a problem in a later endpoint by its index', async () => {
    const endpoints = [
      { method: 'GET', path: '/a' },
      { method: 'POST', path: '/b' },
      { method: 'get', path: '/c' },
    ];
    expect(await refused(t, withTemplate({ endpoints }))).toEqual([
      expect.objectContaining({
        type: 'enum',
        loc: ['body', 'template', 'endpoints', 2, 'method'],
        input: 'get',
      }),
    ]);
  });

  it('answers value_error for a path that does not start with /', async () => {
    expect(
      await refused(t, withTemplate({ endpoints: [{ method: 'GET', path: 'orders' }] })),
    ).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "error": "path must start with /",
          },
          "input": "orders",
          "loc": [
            "body",
            "template",
            "endpoints",
            0,
            "path",
          ],
          "msg": "Value error, path must start with /",
          "type": "value_error",
        },
      ]
    `);
  });

  it.each([
    '/orders/../admin',
    '/..',
    '/orders/%2e%2e/admin',
    '/orders/%252e%252e/admin',
    '//evil.example.com/x',
  ])('answers value_error for the path %s', async (path) => {
    expect(await refused(t, withTemplate({ endpoints: [{ method: 'GET', path }] }))).toEqual([
      expect.objectContaining({
        type: 'value_error',
        loc: ['body', 'template', 'endpoints', 0, 'path'],
        input: path,
      }),
    ]);
  });

  it('answers missing for an endpoint without a path', async () => {
    expect(await refused(t, withTemplate({ endpoints: [{ method: 'GET' }] }))).toEqual([
      expect.objectContaining({ type: 'missing', loc: ['body', 'template', 'endpoints', 0, 'path'] }),
    ]);
  });

  it.each(['body_schema', 'query_params', 'response_schema'])(
    'answers dict_type for a %s that is not an object',
    async (field) => {
      expect(
        await refused(
          t,
          withTemplate({ endpoints: [{ method: 'POST', path: '/x', [field]: ['not', 'an', 'object'] }] }),
        ),
      ).toEqual([
        expect.objectContaining({ type: 'dict_type', loc: ['body', 'template', 'endpoints', 0, field] }),
      ]);
    },
  );

  it('keeps the keys of free-form endpoint schemas as sent', async () => {
    const bodySchema = {
      type: 'object',
      properties: { first_name: { type: 'string' }, lastName: { type: 'string' } },
    };
    const created = await accepted(t, {
      endpoints: [{ method: 'POST', path: '/people', body_schema: bodySchema }],
    });
    expect(created.template.endpoints).toEqual([
      { method: 'POST', path: '/people', body_schema: bodySchema },
    ]);
  });

  it('answers list_type when endpoints is not a list', async () => {
    expect(await refused(t, withTemplate({ endpoints: { method: 'GET', path: '/x' } }))).toEqual([
      expect.objectContaining({ type: 'list_type', loc: ['body', 'template', 'endpoints'] }),
    ]);
  });

  it('answers too_long for 101 endpoints', async () => {
    const endpoints = Array.from({ length: 101 }, (_, index) => ({ method: 'GET', path: `/e${index}` }));
    expect(await refused(t, withTemplate({ endpoints }))).toEqual([
      expect.objectContaining({
        type: 'too_long',
        loc: ['body', 'template', 'endpoints'],
        ctx: { field_type: 'List', max_length: 100, actual_length: 101 },
      }),
    ]);
  });

  it('accepts exactly 100 endpoints', async () => {
    const endpoints = Array.from({ length: 100 }, (_, index) => ({ method: 'GET', path: `/e${index}` }));
    const created = await accepted(t, { endpoints });
    expect(created.template.endpoints).toHaveLength(100);
  });
});

describe('rate_limits', () => {
  it('answers greater_than_equal for a limit below 1', async () => {
    expect(await refused(t, withTemplate({ rate_limits: { per_minute: 0 } }))).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "ge": 1,
          },
          "input": 0,
          "loc": [
            "body",
            "template",
            "rate_limits",
            "per_minute",
          ],
          "msg": "Input should be greater than or equal to 1",
          "type": "greater_than_equal",
        },
      ]
    `);
  });

  it('answers int_from_float for a fractional limit', async () => {
    expect(await refused(t, withTemplate({ rate_limits: { per_hour: 2.5 } }))).toEqual([
      expect.objectContaining({
        type: 'int_from_float',
        loc: ['body', 'template', 'rate_limits', 'per_hour'],
      }),
    ]);
  });

  it('answers int_parsing for a limit that is text', async () => {
    expect(await refused(t, withTemplate({ rate_limits: { per_day: 'lots' } }))).toEqual([
      expect.objectContaining({ type: 'int_parsing', loc: ['body', 'template', 'rate_limits', 'per_day'] }),
    ]);
  });

  it('answers value_error at per_hour when per_minute exceeds it', async () => {
    expect(
      await refused(t, withTemplate({ rate_limits: { per_minute: 100, per_hour: 50 } })),
    ).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "error": "per_hour (50) must be at least per_minute (100)",
          },
          "input": 50,
          "loc": [
            "body",
            "template",
            "rate_limits",
            "per_hour",
          ],
          "msg": "Value error, per_hour (50) must be at least per_minute (100)",
          "type": "value_error",
        },
      ]
    `);
  });

  it('answers value_error at per_day when per_hour exceeds it', async () => {
    expect(
      await refused(t, withTemplate({ rate_limits: { per_minute: 1, per_hour: 500, per_day: 100 } })),
    ).toEqual([
      expect.objectContaining({ type: 'value_error', loc: ['body', 'template', 'rate_limits', 'per_day'] }),
    ]);
  });

  it('answers value_error at per_day when per_minute exceeds it and per_hour is not given', async () => {
    expect(await refused(t, withTemplate({ rate_limits: { per_minute: 500, per_day: 100 } }))).toEqual([
      expect.objectContaining({
        type: 'value_error',
        loc: ['body', 'template', 'rate_limits', 'per_day'],
        input: 100,
      }),
    ]);
  });

  it('accepts equal limits in every window', async () => {
    const created = await accepted(t, { rate_limits: { per_minute: 7, per_hour: 7, per_day: 7 } });
    expect(created.template.rate_limits).toEqual({ per_minute: 7, per_hour: 7, per_day: 7 });
  });

  it('answers model_attributes_type when rate_limits is not an object', async () => {
    expect(await refused(t, withTemplate({ rate_limits: 60 }))).toEqual([
      expect.objectContaining({ type: 'model_attributes_type', loc: ['body', 'template', 'rate_limits'] }),
    ]);
  });
});

describe('several problems at once', () => {
  it('reports every problem of one request together', async () => {
    const detail = await refused(t, {
      template: {
        name: '',
        base_url: 'https://10.1.2.3',
        auth_type: 'token',
        endpoints: [
          { method: 'GET', path: '/ok' },
          { method: 'FETCH', path: '../up' },
        ],
        rate_limits: { per_minute: 10, per_hour: 5 },
      },
    });
    expect(detail.map((item) => [item.type, item.loc.join('.')])).toEqual([
      ['string_too_short', 'body.template.name'],
      ['value_error', 'body.template.base_url'],
      ['enum', 'body.template.auth_type'],
      ['enum', 'body.template.endpoints.1.method'],
      ['value_error', 'body.template.endpoints.1.path'],
      ['value_error', 'body.template.rate_limits.per_hour'],
    ]);
  });
});
