import type { PayBasis, SalaryRange } from './types.js';

const BASIS_TEXT: Record<PayBasis, string> = {
  annual: 'per year',
  monthly: 'per month',
  hourly: 'per hour',
};

let currencies: Set<string> | undefined;

/** True for a current ISO 4217 code known to ICU, written in upper case as the standard does ('USD', not 'usd'). */
export function isIsoCurrency(code: string): boolean {
  currencies ??= new Set(Intl.supportedValuesOf('currency'));
  return /^[A-Z]{3}$/.test(code) && currencies.has(code);
}

/**
 * "$120,000 – $150,000 per year", "€4,500 per month", "£25.50 – £30.00 per hour".
 * Whole annual or monthly amounts drop the minor units; hourly rates always show them.
 */
export function formatSalaryRange(salary: SalaryRange, locale = 'en-US'): string {
  const { minAmount, maxAmount, basis, currency } = salary;
  if (!Number.isFinite(minAmount) || !Number.isFinite(maxAmount)) {
    throw new RangeError('Salary amounts must be finite numbers');
  }
  const low = Math.min(minAmount, maxAmount);
  const high = Math.max(minAmount, maxAmount);
  const wholeAmounts = basis !== 'hourly' && Number.isInteger(low) && Number.isInteger(high);
  const format = new Intl.NumberFormat(locale, {
    style: 'currency',
    currency,
    ...(wholeAmounts ? { minimumFractionDigits: 0, maximumFractionDigits: 0 } : {}),
  });
  const amount = low === high ? format.format(low) : format.formatRange(low, high);
  // Plain-text output: ICU's no-break and thin spaces become ordinary spaces.
  return `${amount.replace(/[\u00a0\u2009\u202f]/g, ' ')} ${BASIS_TEXT[basis]}`;
}
