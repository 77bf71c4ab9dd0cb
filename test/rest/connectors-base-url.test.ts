import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_BASE_URLS } from '../fixtures/hostile-base-urls.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { accepted, refused, withTemplate } from './connectors-support.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('base_url', () => {
  it('answers value_error with the reason for a loopback address', async () => {
    expect(await refused(t, withTemplate({ base_url: 'https://127.0.0.1/admin' }))).toMatchInlineSnapshot(`
      [
        {
          "ctx": {
            "error": "base_url host 127.0.0.1 is a loopback address",
          },
          "input": "https://127.0.0.1/admin",
          "loc": [
            "body",
            "template",
            "base_url",
          ],
          "msg": "Value error, base_url host 127.0.0.1 is a loopback address",
          "type": "value_error",
        },
      ]
    `);
  });

  it('has at least 30 hostile base URLs in its table', () => {
    expect(HOSTILE_BASE_URLS.length).toBeGreaterThanOrEqual(30);
  });

  it.each(HOSTILE_BASE_URLS)(
    'refuses %s (%s) with 422 at ["body","template","base_url"]',
    async (_label, baseUrl) => {
      expect(await refused(t, withTemplate({ base_url: baseUrl }))).toEqual([
        {
          type: 'value_error',
          loc: ['body', 'template', 'base_url'],
          msg: expect.stringMatching(/^Value error, base_url /),
          input: baseUrl,
          ctx: { error: expect.any(String) },
        },
      ]);
    },
  );

  it('refuses a backslash with its own reason, at the same location', async () => {
    expect(await refused(t, withTemplate({ base_url: 'https://evil.com\\@127.0.0.1' }))).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'template', 'base_url'],
        msg: 'Value error, base_url must not contain a backslash',
        input: 'https://evil.com\\@127.0.0.1',
        ctx: { error: 'base_url must not contain a backslash' },
      },
    ]);
  });

  it('refuses a look-alike host mixing Cyrillic and Latin letters', async () => {
    expect(await refused(t, withTemplate({ base_url: 'https://\u0430pple.com/v1' }))).toEqual([
      expect.objectContaining({
        type: 'value_error',
        loc: ['body', 'template', 'base_url'],
        msg: 'Value error, base_url host xn--pple-43d.com has a label mixing scripts (Cyrillic and Latin): \u0430pple',
      }),
    ]);
  });

  it('refuses the look-alike host over GraphQL with BAD_USER_INPUT at the same place', async () => {
    const caller = await t.caller(['chairman']);
    const result = await t.graphql(
      'mutation($input: ConnectorInput!) { createConnector(input: $input) { id } }',
      { input: { template: { name: 'Apple', baseUrl: 'https://\u0430pple.com', authType: 'none' } } },
      caller,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [expect.objectContaining({ loc: ['input', 'template', 'baseUrl'] })],
    });
  });

  it.each([
    ['https://Bücher.Example/API', 'https://xn--bcher-kva.example/API'],
    ['https://API.EXAMPLE.com:443/v1', 'https://api.example.com/v1'],
  ])('stores %s with its host normalised to %s, over REST and GraphQL', async (typed, stored) => {
    expect((await accepted(t, { base_url: typed })).template.base_url).toBe(stored);
    const caller = await t.caller(['chairman']);
    const result = await t.graphql(
      'mutation($input: ConnectorInput!) { createConnector(input: $input) { template } }',
      { input: { template: { name: 'Books', baseUrl: typed, authType: 'none' } } },
      caller,
    );
    expect(
      (result.data as { createConnector: { template: { base_url: string } } }).createConnector.template
        .base_url,
    ).toBe(stored);
  });

  it('answers string_type for a base_url that is not a string', async () => {
    expect(await refused(t, withTemplate({ base_url: { host: 'api.example.com' } }))).toEqual([
      expect.objectContaining({ type: 'string_type', loc: ['body', 'template', 'base_url'] }),
    ]);
  });

  it.each([
    'https://api.example.com',
    'https://api.example.com:8443/v1/',
    'https://8.8.8.8/dns',
    'https://[2606:4700::1111]',
  ])('accepts the public base URL %s', async (baseUrl) => {
    const created = await accepted(t, { base_url: baseUrl });
    expect(created.template.base_url).toBe(baseUrl);
  });
});
