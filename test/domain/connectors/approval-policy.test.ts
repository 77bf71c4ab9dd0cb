import { describe, expect, it } from 'vitest';
import {
  checkPathPattern,
  isGated,
  pathMatches,
  toStoredPolicy,
} from '../../../src/domain/connectors/approval-policy.js';
import type { ConnectorHttpMethod } from '../../../src/domain/connectors/endpoint-path.js';
import { buildRequest } from '../../../src/domain/connectors/invoke-request.js';
import { pathReadings } from '../../../src/domain/connectors/request-path.js';

describe('an approval path pattern', () => {
  it.each([
    ['/**', '/customers', true],
    ['/**', '/', true],
    ['/customers', '/customers', true],
    ['/customers', '/customers/cus_1', false],
    ['/customers/*', '/customers/cus_1', true],
    ['/customers/*', '/customers', false],
    ['/customers/*', '/customers/cus_1/cards', false],
    ['/customers/**', '/customers', true],
    ['/customers/**', '/customers/cus_1/cards', true],
    ['/*/refunds', '/charges/refunds', true],
    ['/**/refunds', '/a/b/c/refunds', true],
    ['/**/refunds', '/a/b/c/refund', false],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(pathMatches(pattern, path)).toBe(expected);
  });

  it('stays fast on long paths with many wildcards', () => {
    const pattern = `/${Array.from({ length: 200 }, () => '**').join('/')}/x`;
    const path = `/${Array.from({ length: 1000 }, () => 'a').join('/')}`;
    const started = performance.now();
    expect(pathMatches(pattern, path)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('takes * and ** only as whole segments', () => {
    expect(checkPathPattern('/customers/*')).toBeNull();
    expect(checkPathPattern('/cust*')).toMatch(/whole segment/);
    expect(checkPathPattern('customers')).toMatch(/starts with \//);
  });

  it('is a path: no query string or fragment', () => {
    expect(checkPathPattern('/refunds?dry_run=1')).toMatch(/query string or fragment/);
    expect(checkPathPattern('/refunds#x')).toMatch(/query string or fragment/);
  });
});

describe('a stored policy', () => {
  it('always names the chairman, in a fixed order, with the defaults filled in', () => {
    expect(toStoredPolicy({ rules: [{ methods: ['POST', 'POST'] }], approverRoles: ['operator'] })).toEqual({
      rules: [{ methods: ['POST'], path: '/**' }],
      approver_roles: ['chairman', 'operator'],
      expires_in_seconds: 86400,
    });
  });

  it('gates a request when a rule names its method and matches the path of its URL', () => {
    const policy = toStoredPolicy({ rules: [{ methods: ['DELETE'], path: '/customers/*' }] });
    const url = (path: string) => `https://api.example.com${path}`;
    expect(isGated(policy, { method: 'DELETE', url: url('/customers/cus_1') })).toBe(true);
    expect(isGated(policy, { method: 'DELETE', url: url('/customers/cus_1?expand=cards') })).toBe(true);
    expect(isGated(policy, { method: 'GET', url: url('/customers/cus_1') })).toBe(false);
    expect(isGated(policy, { method: 'DELETE', url: url('/invoices/1') })).toBe(false);
    expect(isGated(null, { method: 'DELETE', url: url('/customers/cus_1') })).toBe(false);
  });
});

describe('a policy matches the request as it is sent', () => {
  const payments = toStoredPolicy({ rules: [{ methods: ['POST'], path: '/payments/**' }] });

  /** The request a template with `baseUrl` and one endpoint `method path` sends. */
  function sent(baseUrl: string, path: string, method: ConnectorHttpMethod = 'POST') {
    const endpoint = { method, path };
    return buildRequest(
      { name: 'Pay', base_url: baseUrl, auth_type: 'none', endpoints: [endpoint] },
      endpoint,
      {},
    );
  }

  it.each([
    ['a dot segment', 'https://api.example.com', '/./payments/refund'],
    ['an encoded dot segment', 'https://api.example.com', '/%2e/payments/refund'],
    ['an encoded unreserved character', 'https://api.example.com', '/%70ayments/refund'],
    ['the gated segment in base_url', 'https://api.example.com/payments', '/refund'],
    ['the gated segment in base_url with a trailing slash', 'https://api.example.com/payments/', '/refund'],
    ['another case', 'https://api.example.com', '/PAYMENTS/Refund'],
    ['a query string', 'https://api.example.com', '/payments/refund?dry_run=1'],
    ['a repeated slash', 'https://api.example.com/', '/payments//refund'],
    ['an encoded slash', 'https://api.example.com', '/payments%2Frefund'],
    ['an encoded backslash', 'https://api.example.com', '/payments%5crefund'],
    ['matrix parameters', 'https://api.example.com', '/payments;v=2/refund'],
    ['double encoding', 'https://api.example.com', '/%2570ayments/refund'],
    ['an encoded slash and dot segment in base_url', 'https://api.example.com/x/..%2Fpayments', '/refund'],
    [
      'a repeated slash before an encoded dot segment in base_url',
      'https://api.example.com/x//..%2Fpayments',
      '/refund',
    ],
  ])('gates a call written with %s', (_case, baseUrl, path) => {
    expect(isGated(payments, sent(baseUrl, path))).toBe(true);
  });

  it('gates an exact path whatever its trailing slash, repeated slashes or case', () => {
    const exact = toStoredPolicy({ rules: [{ methods: ['POST'], path: '/payments/refund' }] });
    for (const path of ['/payments/refund/', '/payments//refund', '/Payments/REFUND', '/payments%2frefund']) {
      expect(isGated(exact, sent('https://api.example.com', path)), path).toBe(true);
    }
    expect(isGated(exact, sent('https://api.example.com', '/payments/refunds'))).toBe(false);
  });

  it('leaves other paths and methods ungated', () => {
    expect(isGated(payments, sent('https://api.example.com', '/invoices/1'))).toBe(false);
    expect(isGated(payments, sent('https://api.example.com', '/paymentsx/refund'))).toBe(false);
    expect(isGated(payments, sent('https://api.example.com/v1', '/payments/refund'))).toBe(false);
    expect(isGated(payments, sent('https://api.example.com', '/payments/refund', 'GET'))).toBe(false);
  });

  it('normalises a pattern as it does a path, its trailing slash included', () => {
    const spelled = toStoredPolicy({ rules: [{ methods: ['POST'], path: '/%70ayments/./**' }] });
    expect(isGated(spelled, sent('https://api.example.com', '/payments/refund'))).toBe(true);
    const slashed = toStoredPolicy({ rules: [{ methods: ['POST'], path: '/Payments/Refund/' }] });
    expect(isGated(slashed, sent('https://api.example.com', '/payments/refund'))).toBe(true);
  });

  it('reads the method a method override (header or _method parameter) asks the server for', () => {
    const deletes = toStoredPolicy({ rules: [{ methods: ['DELETE'], path: '/customers/*' }] });
    const url = 'https://api.example.com/customers/cus_1';
    for (const name of ['X-HTTP-Method-Override', 'x-http-method', 'X-Method-Override']) {
      expect(isGated(deletes, { method: 'POST', url, headers: { [name]: ' delete ' } }), name).toBe(true);
    }
    expect(isGated(deletes, { method: 'POST', url: `${url}?_method=delete` })).toBe(true);
    expect(isGated(deletes, { method: 'POST', url, headers: { 'X-Request-Id': 'DELETE' } })).toBe(false);
  });

  it('reads a path that spells nothing servers read differently one way only', () => {
    expect(pathReadings('/v1/customers/cus_1')).toEqual([['v1', 'customers', 'cus_1']]);
    expect(pathReadings('/v1/a%2Fb;x=1//c/').length).toBeLessThanOrEqual(24);
  });
});

describe('the request sent', () => {
  const url = (baseUrl: string, path: string) => {
    const endpoint = { method: 'GET' as const, path };
    return buildRequest(
      { name: 'Pay', base_url: baseUrl, auth_type: 'none', endpoints: [endpoint] },
      endpoint,
      {},
    ).url;
  };

  it('is the path matched: dot segments removed, unreserved characters decoded, escapes in upper case', () => {
    expect(url('https://api.example.com', '/./%70ayments/%2e/refund')).toBe(
      'https://api.example.com/payments/refund',
    );
    expect(url('https://api.example.com/v1', '/a%7e%2d%5f/caf%c3%a9/a%2fb')).toBe(
      'https://api.example.com/v1/a~-_/caf%C3%A9/a%2Fb',
    );
    expect(url('https://api.example.com/v1/', '/refunds?state=open')).toBe(
      'https://api.example.com/v1/refunds?state=open',
    );
  });
});
