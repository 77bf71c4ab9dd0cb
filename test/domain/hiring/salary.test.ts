import { describe, expect, it } from 'vitest';
import { formatSalaryRange, isIsoCurrency } from '../../../src/domain/hiring/salary.js';
import type { SalaryRange } from '../../../src/domain/hiring/types.js';

describe('formatSalaryRange', () => {
  it.each<[string, SalaryRange, string, string]>([
    [
      'a US dollar annual range',
      { minAmount: 120000, maxAmount: 150000, basis: 'annual', currency: 'USD' },
      'en-US',
      '$120,000 – $150,000 per year',
    ],
    [
      'a euro monthly range',
      { minAmount: 4500, maxAmount: 5200, basis: 'monthly', currency: 'EUR' },
      'en-GB',
      '€4,500 – €5,200 per month',
    ],
    [
      'a pound hourly range with pence',
      { minAmount: 25.5, maxAmount: 30, basis: 'hourly', currency: 'GBP' },
      'en-GB',
      '£25.50 – £30.00 per hour',
    ],
    [
      'a rupee range with Indian digit grouping',
      { minAmount: 1800000, maxAmount: 2400000, basis: 'annual', currency: 'INR' },
      'en-IN',
      '₹18,00,000 – ₹24,00,000 per year',
    ],
    [
      'a yen hourly rate without minor units',
      { minAmount: 2000, maxAmount: 2500, basis: 'hourly', currency: 'JPY' },
      'en-US',
      '¥2,000 – ¥2,500 per hour',
    ],
    [
      'a Canadian dollar range outside Canada',
      { minAmount: 90000, maxAmount: 110000, basis: 'annual', currency: 'CAD' },
      'en-US',
      'CA$90,000–110,000 per year',
    ],
    [
      'an annual range with cents',
      { minAmount: 50000.5, maxAmount: 60000, basis: 'annual', currency: 'USD' },
      'en-US',
      '$50,000.50 – $60,000.00 per year',
    ],
  ])('formats %s', (_name, salary, locale, expected) => {
    expect(formatSalaryRange(salary, locale)).toBe(expected);
  });

  it('gives a single figure when the minimum equals the maximum', () => {
    expect(formatSalaryRange({ minAmount: 95000, maxAmount: 95000, basis: 'annual', currency: 'USD' })).toBe(
      '$95,000 per year',
    );
  });

  it('puts the lower amount first even when the bounds are swapped', () => {
    expect(formatSalaryRange({ minAmount: 60, maxAmount: 40, basis: 'hourly', currency: 'USD' })).toBe(
      '$40.00 – $60.00 per hour',
    );
  });

  it('uses only ordinary spaces', () => {
    const text = formatSalaryRange({ minAmount: 1, maxAmount: 2, basis: 'hourly', currency: 'CHF' }, 'en-US');
    expect(text).not.toMatch(/[\u00a0\u2009\u202f]/);
  });

  it('rejects non-finite amounts', () => {
    expect(() =>
      formatSalaryRange({ minAmount: Number.NaN, maxAmount: 1, basis: 'annual', currency: 'USD' }),
    ).toThrow(RangeError);
  });
});

describe('isIsoCurrency', () => {
  it.each(['USD', 'EUR', 'GBP', 'INR', 'JPY', 'CAD', 'CHF'])('accepts %s', (code) => {
    expect(isIsoCurrency(code)).toBe(true);
  });

  it.each(['usd', 'US', 'USDD', 'XYZ', 'DEM', '', 'U$D'])('rejects %j', (code) => {
    expect(isIsoCurrency(code)).toBe(false);
  });
});
