import { describe, expect, it } from 'vitest';
import { normalizeConnectorName } from '../../../src/domain/connectors/connector-name.js';

describe('normalizeConnectorName', () => {
  it.each([
    ['Stripe', 'stripe'],
    ['  Stripe Billing  ', 'stripe billing'],
    ['\u3000Stripe\u3000', 'stripe'],
    ['ＳＴＲＩＰＥ', 'stripe'],
    ['ﬁnance', 'finance'],
    ['Cafe\u0301', 'café'],
    ['ÉQUIPE', 'équipe'],
    ['\u212Aelvin', 'kelvin'],
    ['already-normal', 'already-normal'],
  ])('normalises %j to %j', (name, expected) => {
    expect(normalizeConnectorName(name)).toBe(expected);
  });

  it.each([
    ['Stripe', ' stripe '],
    ['ＣＲＭ', 'crm'],
    ['Café', 'CAFE\u0301'],
  ])('gives %j and %j the same key', (first, second) => {
    expect(normalizeConnectorName(first)).toBe(normalizeConnectorName(second));
  });

  it.each(['Stripe', '  ＳＴＲＩＰＥ ', 'ﬁnance', 'Cafe\u0301', '\u212Aelvin', 'İstanbul'])(
    'returns a key that is already normalised for %j',
    (name) => {
      const key = normalizeConnectorName(name);
      expect(normalizeConnectorName(key)).toBe(key);
    },
  );

  it('keeps names that differ in inner spacing distinct', () => {
    expect(normalizeConnectorName('stripe billing')).not.toBe(normalizeConnectorName('stripebilling'));
  });
});
