/**
 * The candidate-facing view of a job design. Only the fields below are ever read (an allow-list), so budgets,
 * interview scores, internal notes and anything else in the job design can never leak into an offer letter.
 */
export interface CandidateJobDetails {
  title: string | null;
  department: string | null;
  responsibilities: string[];
  reportsTo: string | null;
  employmentType: EmploymentType | null;
  /** ISO date, YYYY-MM-DD. */
  startDate: string | null;
  hoursPerWeek: number | null;
  benefits: string[];
}

export interface EmploymentType {
  key: 'full_time' | 'part_time' | 'fixed_term' | 'contractor' | 'temporary' | 'internship' | 'other';
  label: string;
}

const KEYS = {
  title: ['title', 'job_title', 'jobTitle', 'role', 'position'],
  department: ['department', 'team'],
  responsibilities: ['responsibilities', 'key_responsibilities', 'duties'],
  reportsTo: ['reports_to', 'reportsTo', 'reporting_line', 'reportingLine', 'manager'],
  employmentType: ['employment_type', 'employmentType'],
  startDate: ['start_date', 'startDate'],
  hoursPerWeek: ['hours_per_week', 'hoursPerWeek'],
  benefits: ['benefits'],
} as const;

// Nested objects are read through their own allow-list too.
const NAME_KEYS = ['name', 'title'] as const;
const ITEM_KEYS = ['description', 'summary', 'title', 'name'] as const;
const MAX_TEXT = 300;
const MAX_ITEMS = 20;

const EMPLOYMENT_TYPES: Array<[RegExp, EmploymentType]> = [
  [/^(full|ft|fulltime)$|^full time|^permanent/, { key: 'full_time', label: 'Full-time' }],
  [/^(part|pt|parttime)$|^part time/, { key: 'part_time', label: 'Part-time' }],
  [/^fixed term/, { key: 'fixed_term', label: 'Fixed-term' }],
  [/^(contractor|independent|freelance|consultant)/, { key: 'contractor', label: 'Independent contractor' }],
  [/^contract/, { key: 'fixed_term', label: 'Fixed-term contract' }],
  [/^(temporary|temp|seasonal)/, { key: 'temporary', label: 'Temporary' }],
  [/^(intern|internship|trainee|apprentice)/, { key: 'internship', label: 'Internship' }],
];

function firstPresent(source: Record<string, unknown>, keys: readonly string[]): unknown {
  for (const key of keys) {
    if (Object.hasOwn(source, key) && source[key] !== undefined && source[key] !== null) return source[key];
  }
  return undefined;
}

function cleanText(value: unknown): string | null {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') return null;
  const cleaned = value.replace(/[\p{Cc}\s]+/gu, ' ').trim();
  return cleaned === '' ? null : cleaned.slice(0, MAX_TEXT);
}

function textOrNamed(value: unknown, keys: readonly string[]): string | null {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const named = value as Record<string, unknown>;
    const parts = keys.map((key) => (Object.hasOwn(named, key) ? cleanText(named[key]) : null));
    const unique = parts.filter((part, index): part is string => !!part && parts.indexOf(part) === index);
    return unique.length > 0 ? unique.join(', ') : null;
  }
  return cleanText(value);
}

function textList(value: unknown): string[] {
  const items =
    typeof value === 'string'
      ? value.split(/\r?\n|;/).map((line) => line.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, ''))
      : value;
  if (!Array.isArray(items)) return [];
  return items
    .map((item) => textOrNamed(item, ITEM_KEYS))
    .filter((item): item is string => item !== null)
    .slice(0, MAX_ITEMS);
}

function isoDate(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:$|T)/.exec(value.trim());
  if (!match) return null;
  const [, year, month, day] = match.map(Number) as [number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day
    ? date.toISOString().slice(0, 10)
    : null;
}

function employmentType(value: unknown): EmploymentType | null {
  const raw = cleanText(value);
  if (!raw) return null;
  const key = raw.toLowerCase().replace(/[_-]+/g, ' ');
  const known = EMPLOYMENT_TYPES.find(([pattern]) => pattern.test(key));
  if (known) return known[1];
  return { key: 'other', label: key.charAt(0).toUpperCase() + key.slice(1) };
}

export function readJobDesign(jobDesign: Record<string, unknown>): CandidateJobDetails {
  const hours = firstPresent(jobDesign, KEYS.hoursPerWeek);
  return {
    title: textOrNamed(firstPresent(jobDesign, KEYS.title), ['title', 'name']),
    department: textOrNamed(firstPresent(jobDesign, KEYS.department), ['name']),
    responsibilities: textList(firstPresent(jobDesign, KEYS.responsibilities)),
    reportsTo: textOrNamed(firstPresent(jobDesign, KEYS.reportsTo), NAME_KEYS),
    employmentType: employmentType(firstPresent(jobDesign, KEYS.employmentType)),
    startDate: isoDate(firstPresent(jobDesign, KEYS.startDate)),
    hoursPerWeek: typeof hours === 'number' && hours > 0 && hours <= 168 ? hours : null,
    benefits: textList(firstPresent(jobDesign, KEYS.benefits)),
  };
}
