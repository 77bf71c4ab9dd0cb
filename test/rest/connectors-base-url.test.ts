import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

  // Every entry names a host or URL form that could reach the service's own network or cloud credentials.
  const HOSTILE_BASE_URLS = [
    ['plain http', 'http://api.example.com'],
    ['another scheme', 'ftp://api.example.com'],
    ['a relative URL', '//api.example.com/v1'],
    ['a script URL', 'javascript:alert(1)'],
    ['an empty string', ''],
    ['IPv4 loopback', 'https://127.0.0.1'],
    ['IPv4 loopback with a port', 'https://127.0.0.1:8443/v1'],
    ['shortened IPv4 loopback', 'https://127.1'],
    ['decimal IPv4 loopback', 'https://2130706433'],
    ['hexadecimal IPv4 loopback', 'https://0x7f000001'],
    ['octal IPv4 loopback', 'https://0177.0.0.1'],
    ['IPv4 loopback with trailing dots', 'https://127.0.0.1../'],
    ['localhost', 'https://localhost'],
    ['localhost in capitals with a trailing dot', 'https://LOCALHOST./'],
    ['full-width localhost', 'https://ｌｏｃａｌｈｏｓｔ/'],
    ['a name under .localhost', 'https://api.localhost'],
    ['private 10/8', 'https://10.0.0.5'],
    ['private 172.16/12', 'https://172.16.10.1'],
    ['private 192.168/16', 'https://192.168.1.1'],
    ['cloud metadata address', 'https://169.254.169.254/latest/meta-data'],
    ['link-local IPv4', 'https://169.254.10.20'],
    ['CGNAT', 'https://100.64.0.1'],
    ['CGNAT upper end', 'https://100.127.255.254'],
    ['IPv4 multicast', 'https://224.0.0.1'],
    ['IPv4 multicast (SSDP)', 'https://239.255.255.250'],
    ['IPv4 unspecified', 'https://0.0.0.0'],
    ['IPv4 unspecified, shortened', 'https://0'],
    ['IPv4 broadcast', 'https://255.255.255.255'],
    ['IPv6 loopback', 'https://[::1]'],
    ['IPv6 unspecified', 'https://[::]'],
    ['IPv6 link-local', 'https://[fe80::1]'],
    ['IPv6 unique-local', 'https://[fc00::1]'],
    ['IPv6 cloud metadata', 'https://[fd00:ec2::254]'],
    ['IPv6 multicast', 'https://[ff02::1]'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]'],
    ['IPv4-mapped metadata in hex', 'https://[::ffff:a9fe:a9fe]'],
    ['NAT64 of a private address', 'https://[64:ff9b::10.0.0.1]'],
    ['6to4 of a private address', 'https://[2002:c0a8:0101::1]'],
    ['GCP metadata host', 'https://metadata.google.internal'],
    ['a name under .internal', 'https://billing.internal'],
    ['a name under .local', 'https://printer.local'],
    ['a single-label host', 'https://intranet'],
    ['user info', 'https://user:secret@api.example.com'],
    ['empty user info', 'https://@api.example.com'],
    ['user info hiding the real host', 'https://api.example.com@127.0.0.1'],
    ['surrounding whitespace', ' https://api.example.com'],
    ['a query string', 'https://api.example.com/v1?token=x'],
  ] as const;

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
