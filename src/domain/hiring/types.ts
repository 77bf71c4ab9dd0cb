export interface ResolvedLocation {
  resolved: boolean;
  /** ISO 3166-1 alpha-2 code, e.g. 'US'. */
  country: string | null;
  /** ISO 3166-2 code, e.g. 'US-CA', 'CA-ON', 'GB-SCT', 'IN-KA'; null when unknown or not tracked. */
  subdivision: string | null;
  /** Human-readable place, e.g. 'San Francisco, California, United States'. */
  label: string;
  input: string;
  /** How an ambiguous input was read, e.g. a bare 'CA' read as Canada. */
  notes: string[];
}

export const PAY_BASES = ['annual', 'monthly', 'hourly'] as const;

export type PayBasis = (typeof PAY_BASES)[number];

export interface SalaryRange {
  minAmount: number;
  maxAmount: number;
  basis: PayBasis;
  /** ISO 4217 code, e.g. 'USD'. */
  currency: string;
}

export type DeadlineAnchor = 'start_date' | 'offer_acceptance';

export const RULE_CATEGORIES = [
  'work_authorization',
  'tax_withholding',
  'new_hire_reporting',
  'employment_terms',
  'notice',
  'training',
  'benefits',
  'social_insurance',
  'health_and_safety',
  'payroll_records',
  'general',
] as const;

export type RuleCategory = (typeof RULE_CATEGORIES)[number];

export type CompletedBy = 'employer' | 'employee';

export interface Deadline {
  relative_to: DeadlineAnchor;
  /** Calendar days after the anchor (negative: before it); month-based periods are rounded down. */
  offset_days: number;
  /** The legal deadline in words. */
  text: string;
}

export interface RuleSource {
  name: string;
  citation: string;
  /** Official page; null only for the general reminders used when no jurisdiction is known. */
  url: string | null;
}

/** A reminder as returned to API clients: keys are snake_case on purpose. */
export interface Reminder {
  id: string;
  /** 'US', 'US-CA', 'GB', ... or '*' for the general reminders. */
  jurisdiction: string;
  title: string;
  description: string;
  deadline: Deadline;
  source: RuleSource;
  category: RuleCategory;
  completed_by: CompletedBy;
  /** Condition under which the rule applies (e.g. headcount threshold); null when it always applies. */
  applies_if: string | null;
}

export interface ComplianceRule extends Reminder {
  /** Ids of country-level rules that this subdivision rule replaces. */
  supersedes: string[];
}

export interface JurisdictionSummary {
  resolved: boolean;
  country: string | null;
  subdivision: string | null;
  label: string;
}

export interface ComplianceReminders {
  jurisdiction: JurisdictionSummary;
  reminders: Reminder[];
  notes: string[];
}

export type ChecklistOwner = 'hiring_manager' | 'people_ops' | 'it' | 'candidate' | 'payroll';

export type ChecklistCategory =
  | 'paperwork'
  | 'compliance'
  | 'equipment'
  | 'accounts'
  | 'orientation'
  | 'payroll';

export interface ChecklistItem {
  id: string;
  title: string;
  owner: ChecklistOwner;
  due: {
    relative_to: 'start_date';
    offset_days: number;
    /** ISO date (YYYY-MM-DD) when the job design gives a start date, otherwise null. */
    date: string | null;
  };
  category: ChecklistCategory;
  required: boolean;
  /** The compliance reminder this item comes from, or null for a standard onboarding step. */
  reminder_id: string | null;
}

export interface Checklist {
  items: ChecklistItem[];
}
