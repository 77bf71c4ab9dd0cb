import { readJobDesign } from './job-design.js';
import type {
  Checklist,
  ChecklistCategory,
  ChecklistItem,
  ChecklistOwner,
  Reminder,
  ResolvedLocation,
  RuleCategory,
} from './types.js';

export interface ChecklistInput {
  jobDesign: Record<string, unknown>;
  location: ResolvedLocation;
  reminders: Reminder[];
}

interface StandardStep {
  id: string;
  title: (role: string) => string;
  owner: ChecklistOwner;
  offsetDays: number;
  category: ChecklistCategory;
  required: boolean;
}

const STANDARD_STEPS: StandardStep[] = [
  {
    id: 'collect-signed-offer',
    title: () => 'Collect the signed offer letter',
    owner: 'people_ops',
    offsetDays: -14,
    category: 'paperwork',
    required: true,
  },
  {
    id: 'order-equipment',
    title: (role) => `Order and configure the laptop and equipment for the ${role}`,
    owner: 'it',
    offsetDays: -10,
    category: 'equipment',
    required: true,
  },
  {
    id: 'provide-personal-details',
    title: () => 'Provide legal name, home address, emergency contact and bank details',
    owner: 'candidate',
    offsetDays: -7,
    category: 'paperwork',
    required: true,
  },
  {
    id: 'assign-onboarding-buddy',
    title: () => 'Assign an onboarding buddy',
    owner: 'hiring_manager',
    offsetDays: -5,
    category: 'orientation',
    required: false,
  },
  {
    id: 'add-to-payroll',
    title: () => 'Add the new hire to payroll with the agreed pay',
    owner: 'payroll',
    offsetDays: -5,
    category: 'payroll',
    required: true,
  },
  {
    id: 'create-accounts',
    title: () => 'Create email, chat and single sign-on accounts',
    owner: 'it',
    offsetDays: -3,
    category: 'accounts',
    required: true,
  },
  {
    id: 'prepare-first-week-plan',
    title: (role) => `Prepare a first-week plan with goals and introductions for the ${role}`,
    owner: 'hiring_manager',
    offsetDays: -3,
    category: 'orientation',
    required: true,
  },
  {
    id: 'grant-role-access',
    title: (role) => `Request access to the tools and systems the ${role} needs`,
    owner: 'hiring_manager',
    offsetDays: -2,
    category: 'accounts',
    required: true,
  },
  {
    id: 'send-first-day-logistics',
    title: () => 'Send first-day logistics: time, place or video link, and who to ask for',
    owner: 'people_ops',
    offsetDays: -2,
    category: 'orientation',
    required: true,
  },
  {
    id: 'day-one-orientation',
    title: () => 'Run day-one orientation: policies, security and benefits overview',
    owner: 'people_ops',
    offsetDays: 0,
    category: 'orientation',
    required: true,
  },
  {
    id: 'team-introductions',
    title: () => 'Introduce the new hire to the team and key partners',
    owner: 'hiring_manager',
    offsetDays: 0,
    category: 'orientation',
    required: false,
  },
  {
    id: 'benefits-enrollment',
    title: () => 'Walk through optional benefits and collect enrollment choices',
    owner: 'people_ops',
    offsetDays: 7,
    category: 'payroll',
    required: false,
  },
  {
    id: 'thirty-day-check-in',
    title: () => 'Hold a 30-day check-in',
    owner: 'hiring_manager',
    offsetDays: 30,
    category: 'orientation',
    required: false,
  },
];

const PAYROLL_CATEGORIES: ReadonlySet<RuleCategory> = new Set([
  'tax_withholding',
  'new_hire_reporting',
  'social_insurance',
  'payroll_records',
]);

function reminderOwner(reminder: Reminder): ChecklistOwner {
  if (reminder.completed_by === 'employee') return 'candidate';
  return PAYROLL_CATEGORIES.has(reminder.category) ? 'payroll' : 'people_ops';
}

function reminderCategory(reminder: Reminder): ChecklistCategory {
  if (PAYROLL_CATEGORIES.has(reminder.category)) return 'payroll';
  if (reminder.category === 'employment_terms') return 'paperwork';
  return 'compliance';
}

// Acceptance always comes before the start date, so the day before the start is the latest safe date.
function reminderOffset(reminder: Reminder): number {
  return reminder.deadline.relative_to === 'start_date' ? reminder.deadline.offset_days : -1;
}

function addDays(isoDate: string, days: number): string {
  const date = new Date(`${isoDate}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

/** Compliance reminders become required items; standard onboarding steps follow, optional ones marked so. */
export function buildChecklist(input: ChecklistInput): Checklist {
  const job = readJobDesign(input.jobDesign);
  const role = job.title ?? 'new hire';
  const due = (offsetDays: number): ChecklistItem['due'] => ({
    relative_to: 'start_date',
    offset_days: offsetDays,
    date: job.startDate ? addDays(job.startDate, offsetDays) : null,
  });

  const fromReminders = input.reminders.map(
    (reminder): ChecklistItem => ({
      id: `compliance-${reminder.id}`,
      title: reminder.title,
      owner: reminderOwner(reminder),
      due: due(reminderOffset(reminder)),
      category: reminderCategory(reminder),
      required: true,
      reminder_id: reminder.id,
    }),
  );
  const standard = STANDARD_STEPS.map(
    (step): ChecklistItem => ({
      id: step.id,
      title: step.title(role),
      owner: step.owner,
      due: due(step.offsetDays),
      category: step.category,
      required: step.required,
      reminder_id: null,
    }),
  );
  const locationStep: ChecklistItem[] = input.location.resolved
    ? []
    : [
        {
          id: 'confirm-work-location',
          title: 'Confirm the work location so the local legal requirements can be identified',
          owner: 'people_ops',
          due: due(-14),
          category: 'compliance',
          required: true,
          reminder_id: null,
        },
      ];
  const items = [...locationStep, ...fromReminders, ...standard].sort(
    (a, b) => a.due.offset_days - b.due.offset_days || Number(b.required) - Number(a.required),
  );
  return { items };
}
