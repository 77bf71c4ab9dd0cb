import { type CandidateJobDetails, readJobDesign } from './job-design.js';
import { countryInSentence } from './place-index.js';
import { formatSalaryRange } from './salary.js';
import type { ResolvedLocation, SalaryRange } from './types.js';

export interface OfferLetterInput {
  candidateName: string;
  companyName: string;
  jobDesign: Record<string, unknown>;
  salary: SalaryRange;
  location: ResolvedLocation;
  issuedAt: Date;
}

// The letter is in English; dates and numbers follow the English usage of the work country.
const LETTER_LOCALES: Record<string, string> = {
  US: 'en-US',
  CA: 'en-CA',
  GB: 'en-GB',
  IN: 'en-IN',
  AU: 'en-AU',
  NZ: 'en-NZ',
  IE: 'en-IE',
};

const LABEL_WIDTH = 19;
const INDENT = '  ';

export function letterLocale(country: string | null): string {
  if (!country) return 'en-US';
  return LETTER_LOCALES[country] ?? 'en-GB';
}

function required(value: string, field: string): string {
  const cleaned = value.replace(/\s+/g, ' ').trim();
  if (cleaned === '') throw new TypeError(`${field} must not be empty`);
  return cleaned;
}

// Names like "Acme Inc." already end a sentence.
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

function formatDate(date: Date, locale: string): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' }).format(date);
}

function field(label: string, value: string): string {
  return `${INDENT}${`${label}:`.padEnd(LABEL_WIDTH)}${value}`;
}

function bullets(items: string[]): string[] {
  return items.map((item) => `${INDENT}- ${item}`);
}

function section(heading: string, lines: string[]): string {
  return [heading.toUpperCase(), ...lines].join('\n');
}

function compensationLines(job: CandidateJobDetails, salary: SalaryRange, locale: string): string[] {
  const formatted = formatSalaryRange(salary, locale);
  const amount = formatted.includes(salary.currency.toUpperCase())
    ? formatted
    : `${formatted} (${salary.currency.toUpperCase()})`;
  const noun =
    job.employmentType?.key === 'contractor'
      ? 'Your compensation'
      : salary.basis === 'hourly'
        ? 'Your base pay rate'
        : 'Your base salary';
  const isRange = salary.minAmount !== salary.maxAmount;
  return [
    isRange
      ? `${INDENT}${noun} will be within the range of ${amount}.`
      : `${INDENT}${noun} will be ${amount}.`,
    ...(isRange ? [`${INDENT}The exact figure will be confirmed in your written terms of employment.`] : []),
    `${INDENT}Pay is subject to the deductions required by law and is paid on the company's regular payroll schedule.`,
  ];
}

/** A complete plain-text offer letter built only from candidate-facing job design fields. */
export function buildOfferLetter(input: OfferLetterInput): string {
  const candidate = required(input.candidateName, 'candidateName');
  const company = required(input.companyName, 'companyName');
  const job = readJobDesign(input.jobDesign);
  const locale = letterLocale(input.location.country);
  const engagement = job.employmentType?.key === 'contractor' ? 'engagement' : 'employment';
  const where = input.location.label.trim();
  const team = job.department ? ` in the ${job.department} team` : '';
  const position = job.title ? `the position of ${job.title}${team}` : `a position${team}`;

  const positionLines = [
    ...(job.title ? [field('Job title', job.title)] : []),
    ...(job.department ? [field('Department', job.department)] : []),
    ...(job.reportsTo ? [field('Reports to', job.reportsTo)] : []),
    ...(job.employmentType ? [field('Employment type', job.employmentType.label)] : []),
    ...(job.hoursPerWeek ? [field('Working hours', `${job.hoursPerWeek} hours per week`)] : []),
    field('Work location', where === '' ? 'To be agreed with you' : where),
    field(
      'Start date',
      job.startDate ? formatDate(new Date(`${job.startDate}T00:00:00Z`), locale) : 'To be agreed with you',
    ),
  ];
  const rightToWork =
    input.location.resolved && input.location.country
      ? `confirmation of your right to work in ${countryInSentence(input.location.country)}`
      : 'confirmation of your right to work where you will be based';

  const parts = [
    company,
    formatDate(input.issuedAt, locale),
    `Dear ${candidate},`,
    `Offer of ${engagement}${job.title ? `: ${job.title}` : ''}`,
    `On behalf of ${company}, we are pleased to offer you ${sentence(position)} This letter sets out the main terms of our offer.`,
    section('Position', positionLines),
    ...(job.responsibilities.length > 0
      ? [section('Key responsibilities', bullets(job.responsibilities))]
      : []),
    section('Compensation', compensationLines(job, input.salary, locale)),
    ...(job.benefits.length > 0 ? [section('Benefits', bullets(job.benefits))] : []),
    section('Conditions', [
      `${INDENT}${sentence(`This offer is conditional on ${rightToWork}`)}`,
      `${INDENT}Your full terms of ${engagement} will be set out in writing, as required by law where you will work.`,
    ]),
    section('Acceptance', [
      `${INDENT}To accept this offer, please sign and date this letter and return a copy to us.`,
      `${INDENT}If you have any questions, please let us know. ${sentence(`We look forward to welcoming you to ${company}`)}`,
    ]),
    `Sincerely,\n\n${company}`,
    `Accepted by: ${candidate}\n\nSignature: ______________________________\n\nDate: ______________________`,
  ];
  return `${parts.join('\n\n')}\n`;
}
