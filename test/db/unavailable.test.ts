import { describe, expect, it } from 'vitest';
import { DatabaseOverloadedError, databaseUnavailableCause } from '../../src/db/unavailable.js';

// Shapes as the drivers and Prisma produce them (seen in the overload and outage tests).
describe('databaseUnavailableCause', () => {
  it.each([
    ['the queue refusal', new DatabaseOverloadedError(20), 'overloaded'],
    [
      'Prisma keeping the refusal’s code',
      Object.assign(new Error('x'), { code: 'DATABASE_OVERLOADED' }),
      'overloaded',
    ],
    ['P2028 (transaction not started in time)', Object.assign(new Error('x'), { code: 'P2028' }), 'P2028'],
    ['P1001 (server unreachable)', Object.assign(new Error('x'), { code: 'P1001' }), 'P1001'],
    ['statement timeout', Object.assign(new Error('x'), { code: '57014' }), '57014'],
    ['PostgreSQL shutting down', Object.assign(new Error('x'), { code: '57P01' }), '57P01'],
    ['a full disk', Object.assign(new Error('could not extend file'), { code: '53100' }), 'disk full'],
    ['ENOSPC writing a blob', Object.assign(new Error('x'), { code: 'ENOSPC' }), 'disk full'],
    ['pg-pool wait timeout', new Error('timeout exceeded when trying to connect'), 'connection lost'],
    ['pg query timeout', new Error('Query read timeout'), 'connection lost'],
    [
      'an adapter error inside Prisma’s',
      { meta: { driverAdapterError: { cause: { kind: 'ConnectionClosed' } } } },
      'ConnectionClosed',
    ],
    ['a wrapped GraphQL error', { originalError: { code: 'P2024' } }, 'P2024'],
  ])('recognises %s', (_name, error, cause) => {
    expect(databaseUnavailableCause(error)).toBe(cause);
  });

  it.each([
    ['a unique violation', Object.assign(new Error('x'), { code: 'P2002' })],
    ['a syntax error', Object.assign(new Error('x'), { code: '42601' })],
    ['a plain bug', new TypeError('undefined is not a function')],
    ['nothing', undefined],
  ])('leaves %s alone (it stays a masked 500)', (_name, error) => {
    expect(databaseUnavailableCause(error)).toBeUndefined();
  });
});
