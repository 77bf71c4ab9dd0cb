import { describe, expect, it } from 'vitest';
import {
  checkPathPattern,
  isGated,
  pathMatches,
  toStoredPolicy,
} from '../../../src/domain/connectors/approval-policy.js';

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
});

describe('a stored policy', () => {
  it('always names the chairman, in a fixed order, with the defaults filled in', () => {
    expect(toStoredPolicy({ rules: [{ methods: ['POST', 'POST'] }], approverRoles: ['operator'] })).toEqual({
      rules: [{ methods: ['POST'], path: '/**' }],
      approver_roles: ['chairman', 'operator'],
      expires_in_seconds: 86400,
    });
  });

  it('gates an endpoint when a rule names its method and matches its path', () => {
    const policy = toStoredPolicy({ rules: [{ methods: ['DELETE'], path: '/customers/*' }] });
    expect(isGated(policy, { method: 'DELETE', path: '/customers/cus_1' })).toBe(true);
    expect(isGated(policy, { method: 'GET', path: '/customers/cus_1' })).toBe(false);
    expect(isGated(policy, { method: 'DELETE', path: '/invoices/1' })).toBe(false);
    expect(isGated(null, { method: 'DELETE', path: '/customers/cus_1' })).toBe(false);
  });
});
