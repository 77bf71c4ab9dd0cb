const COMPANY_KEYS = [
  'company_name',
  'companyName',
  'company',
  'employer_name',
  'employerName',
  'employer',
] as const;
const NAME_KEYS = ['legal_name', 'legalName', 'name'] as const;
const MAX_NAME = 200;

/**
 * How the letter names the employer when the job design does not: the defined term offer letters use
 * for the employing entity, so the letter still reads as a complete letter.
 */
export const UNNAMED_COMPANY = 'The Company';

function cleanName(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const cleaned = value.replace(/[\p{Cc}\s]+/gu, ' ').trim();
  return cleaned === '' ? null : cleaned.slice(0, MAX_NAME);
}

function nameOf(value: unknown): string | null {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const named = value as Record<string, unknown>;
    for (const key of NAME_KEYS) {
      const name = Object.hasOwn(named, key) ? cleanName(named[key]) : null;
      if (name) return name;
    }
    return null;
  }
  return cleanName(value);
}

/** The employer's name from a job design (`company_name`, `company`, `employer`, ... as text or `{ name }`). */
export function companyNameOf(jobDesign: Record<string, unknown>): string | null {
  for (const key of COMPANY_KEYS) {
    const name = Object.hasOwn(jobDesign, key) ? nameOf(jobDesign[key]) : null;
    if (name) return name;
  }
  return null;
}
