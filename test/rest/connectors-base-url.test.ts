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
