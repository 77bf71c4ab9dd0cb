import { describe, expect, it } from 'vitest';
import { callFingerprint } from '../../../src/domain/agents/breakers.js';

const call = { connectorId: 'c1', method: 'get', path: '/customers' };

describe('callFingerprint', () => {
  it('is the same for the same endpoint and arguments, whatever the order of their keys', () => {
    expect(callFingerprint({ ...call, query: { a: 1, b: [2, 3] }, body: { x: { y: 1, z: 2 } } })).toBe(
      callFingerprint({ ...call, method: 'GET', query: { b: [2, 3], a: 1 }, body: { x: { z: 2, y: 1 } } }),
    );
  });

  it('tells apart another argument, another endpoint and another connector', () => {
    const base = callFingerprint({ ...call, query: { limit: 1 } });
    expect(callFingerprint({ ...call, query: { limit: 2 } })).not.toBe(base);
    expect(callFingerprint({ ...call, path: '/orders', query: { limit: 1 } })).not.toBe(base);
    expect(callFingerprint({ ...call, connectorId: 'c2', query: { limit: 1 } })).not.toBe(base);
    expect(callFingerprint({ ...call, query: { limit: '1' } })).not.toBe(base);
  });
});
