import { describe, expect, it } from 'vitest';
import { resolveLocation } from '../../../src/domain/hiring/location.js';
import { buildOfferLetter, type OfferLetterInput } from '../../../src/domain/hiring/offer-letter.js';

const SECRET = 'DO-NOT-DISCLOSE';

const baseInput: OfferLetterInput = {
  candidateName: 'Ada Lovelace',
  companyName: 'Acme Robotics',
  jobDesign: {
    job_title: 'Senior Platform Engineer',
    department: 'Platform',
    responsibilities: ['Own the deploy pipeline', 'Mentor engineers'],
    reports_to: 'Grace Hopper',
    employment_type: 'full_time',
    start_date: '2027-01-11',
  },
  salary: { minAmount: 120000, maxAmount: 150000, basis: 'annual', currency: 'USD' },
  location: resolveLocation('San Francisco, CA'),
  issuedAt: new Date('2026-11-21T10:00:00Z'),
};

function letter(overrides: Partial<OfferLetterInput> = {}): string {
  return buildOfferLetter({ ...baseInput, ...overrides });
}

describe('buildOfferLetter', () => {
  it.each([
    ['the candidate name', 'Dear Ada Lovelace,'],
    ['the company name', 'On behalf of Acme Robotics'],
    ['the job title', 'the position of Senior Platform Engineer in the Platform team'],
    ['the reporting line', 'Grace Hopper'],
    ['the employment type', 'Full-time'],
    ['each responsibility', '- Mentor engineers'],
    ['the salary range with its currency', '$120,000 – $150,000 per year (USD)'],
    ['the work location', 'San Francisco, California, United States'],
    ['the start date', 'January 11, 2027'],
    ['the issue date', 'November 21, 2026'],
    ['the right-to-work condition', 'right to work in the United States'],
    ['a signature block', 'Accepted by: Ada Lovelace'],
  ])('contains %s', (_what, expected) => {
    expect(letter()).toContain(expected);
  });

  it.each([
    ['budget'],
    ['headcount_plan'],
    ['internal_notes'],
    ['interview_scores'],
    ['hiring_manager_notes'],
    ['other_candidates'],
    ['secret'],
    ['comp_band'],
    ['score'],
    ['approval_chain'],
  ])('never prints the %s field of the job design', (key) => {
    const text = letter({ jobDesign: { ...baseInput.jobDesign, [key]: `${SECRET} ${key}` } });
    expect(text).not.toContain(SECRET);
  });

  it('never prints internal fields nested inside allowed ones', () => {
    const jobDesign = {
      ...baseInput.jobDesign,
      reports_to: { name: 'Grace Hopper', internal_notes: SECRET },
      responsibilities: [{ description: 'Own the deploy pipeline', score: SECRET }],
    };
    expect(letter({ jobDesign })).not.toContain(SECRET);
  });

  it.each([
    [
      'a monthly euro salary in Berlin',
      'Berlin, Germany',
      { minAmount: 5000, maxAmount: 6000, basis: 'monthly', currency: 'EUR' },
      '€5,000 – €6,000 per month (EUR)',
    ],
    [
      'an hourly pound rate in London',
      'London, UK',
      { minAmount: 25, maxAmount: 25, basis: 'hourly', currency: 'GBP' },
      'Your base pay rate will be £25.00 per hour (GBP).',
    ],
    [
      'a rupee salary in Bengaluru',
      'Bengaluru, India',
      { minAmount: 2400000, maxAmount: 3000000, basis: 'annual', currency: 'INR' },
      '₹24,00,000 – ₹30,00,000 per year (INR)',
    ],
  ] as const)('formats %s for its currency and basis', (_name, place, salary, expected) => {
    expect(letter({ location: resolveLocation(place), salary: { ...salary } })).toContain(expected);
  });

  it('writes day-first dates outside North America', () => {
    expect(letter({ location: resolveLocation('London, UK') })).toContain('11 January 2027');
  });

  it('states a single figure when the minimum equals the maximum', () => {
    const text = letter({
      salary: { minAmount: 130000, maxAmount: 130000, basis: 'annual', currency: 'USD' },
    });
    expect(text).toContain('Your base salary will be $130,000 per year (USD).');
    expect(text).not.toContain('within the range');
  });

  it.each([
    ['a complete job design', baseInput.jobDesign],
    ['an empty job design', {}],
  ])('leaves no placeholders with %s', (_name, jobDesign) => {
    const text = letter({ jobDesign, location: resolveLocation('') });
    expect(text).not.toMatch(/\[[^\]]*\]|\{[^}]*\}|undefined|null|NaN|\[object Object\]|TBD/);
  });

  it('falls back to wording without a title when the job design has none', () => {
    const text = letter({ jobDesign: {} });
    expect(text).toContain('we are pleased to offer you a position.');
    expect(text).toMatch(/Start date:\s+To be agreed with you/);
  });

  it('keeps the text of an unresolved location', () => {
    const text = letter({ location: resolveLocation('Atlantis') });
    expect(text).toMatch(/Work location:\s+Atlantis/);
    expect(text).toContain('right to work where you will be based');
  });

  it('does not double the full stop after a company name ending in one', () => {
    expect(letter({ companyName: 'Acme Inc.' })).not.toContain('..');
  });

  it('words a contractor engagement as an engagement', () => {
    const text = letter({ jobDesign: { ...baseInput.jobDesign, employment_type: 'contractor' } });
    expect(text).toContain('Offer of engagement: Senior Platform Engineer');
  });

  it.each([
    ['candidateName', { candidateName: '  ' }],
    ['companyName', { companyName: '' }],
  ])('refuses an empty %s', (_field, overrides) => {
    expect(() => letter(overrides)).toThrow(TypeError);
  });
});
