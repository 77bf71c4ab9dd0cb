import rawTable from './compliance-rules.json' with { type: 'json' };
import {
  type CompletedBy,
  type ComplianceRule,
  type DeadlineAnchor,
  RULE_CATEGORIES,
  type RuleCategory,
} from './types.js';

export interface ComplianceTable {
  reviewedOn: string;
  disclaimer: string;
  notes: Record<string, string[]>;
  general: ComplianceRule[];
  rules: ComplianceRule[];
}

const ANCHORS: readonly DeadlineAnchor[] = ['start_date', 'offer_acceptance'];
const COMPLETED_BY: readonly CompletedBy[] = ['employer', 'employee'];
const JURISDICTION = /^[A-Z]{2}(-[A-Z0-9]{1,3})?$/;
const RULE_ID = /^[a-z0-9]+(-[a-z0-9]+)*$/;

class TableError extends Error {
  constructor(where: string, problem: string) {
    super(`compliance rules table: ${where}: ${problem}`);
    this.name = 'ComplianceTableError';
  }
}

function record(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TableError(where, 'expected an object');
  }
  return value as Record<string, unknown>;
}

function text(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new TableError(where, 'expected a non-empty string');
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], where: string): T {
  if (!allowed.includes(value as T)) throw new TableError(where, `expected one of ${allowed.join(', ')}`);
  return value as T;
}

function parseRule(value: unknown, where: string, general: boolean): ComplianceRule {
  const rule = record(value, where);
  const id = text(rule.id, `${where}.id`);
  if (!RULE_ID.test(id)) throw new TableError(`${where}.id`, 'expected a kebab-case id');
  const at = `rule ${id}`;
  const jurisdiction = text(rule.jurisdiction, `${at}.jurisdiction`);
  if (general ? jurisdiction !== '*' : !JURISDICTION.test(jurisdiction)) {
    throw new TableError(`${at}.jurisdiction`, general ? "expected '*'" : 'expected an ISO 3166 code');
  }
  const deadline = record(rule.deadline, `${at}.deadline`);
  const offsetDays = deadline.offset_days;
  if (typeof offsetDays !== 'number' || !Number.isInteger(offsetDays)) {
    throw new TableError(`${at}.deadline.offset_days`, 'expected a whole number of days');
  }
  const source = record(rule.source, `${at}.source`);
  const url = source.url ?? null;
  const validUrl = typeof url === 'string' && url.startsWith('https://');
  if (!(validUrl || (url === null && general)))
    throw new TableError(`${at}.source.url`, 'expected an https URL');
  const appliesIf = rule.applies_if ?? null;
  const supersedes = rule.supersedes ?? [];
  if (!Array.isArray(supersedes)) throw new TableError(`${at}.supersedes`, 'expected a list of rule ids');
  return {
    id,
    jurisdiction,
    title: text(rule.title, `${at}.title`),
    description: text(rule.description, `${at}.description`),
    deadline: {
      relative_to: oneOf(deadline.relative_to, ANCHORS, `${at}.deadline.relative_to`),
      offset_days: offsetDays,
      text: text(deadline.text, `${at}.deadline.text`),
    },
    source: {
      name: text(source.name, `${at}.source.name`),
      citation: text(source.citation, `${at}.source.citation`),
      url: validUrl ? url : null,
    },
    category: oneOf<RuleCategory>(rule.category, RULE_CATEGORIES, `${at}.category`),
    completed_by: oneOf(rule.completed_by, COMPLETED_BY, `${at}.completed_by`),
    applies_if: appliesIf === null ? null : text(appliesIf, `${at}.applies_if`),
    supersedes: supersedes.map((entry, index) => text(entry, `${at}.supersedes[${index}]`)),
  };
}

function parseList(value: unknown, where: string, general: boolean): ComplianceRule[] {
  if (!Array.isArray(value)) throw new TableError(where, 'expected a list');
  return value.map((entry, index) => parseRule(entry, `${where}[${index}]`, general));
}

/** Validates the raw JSON table; throws on the first malformed entry so bad data never reaches clients. */
export function parseComplianceTable(raw: unknown): ComplianceTable {
  const table = record(raw, 'table');
  const notes = record(table.notes ?? {}, 'notes');
  const general = parseList(table.general, 'general', true);
  const rules = parseList(table.rules, 'rules', false);
  const ids = new Set<string>();
  for (const rule of [...general, ...rules]) {
    if (ids.has(rule.id)) throw new TableError(`rule ${rule.id}`, 'duplicate id');
    ids.add(rule.id);
  }
  const byId = new Map(rules.map((rule) => [rule.id, rule]));
  for (const rule of rules) {
    for (const target of rule.supersedes) {
      const superseded = byId.get(target);
      if (!superseded || !rule.jurisdiction.startsWith(`${superseded.jurisdiction}-`)) {
        throw new TableError(
          `rule ${rule.id}.supersedes`,
          `${target} is not a rule of the parent jurisdiction`,
        );
      }
    }
  }
  return {
    reviewedOn: text(table.reviewed_on, 'reviewed_on'),
    disclaimer: text(table.disclaimer, 'disclaimer'),
    notes: Object.fromEntries(
      Object.entries(notes).map(([key, list]) => {
        if (!Array.isArray(list)) throw new TableError(`notes.${key}`, 'expected a list');
        return [key, list.map((note, index) => text(note, `notes.${key}[${index}]`))];
      }),
    ),
    general,
    rules,
  };
}

export const complianceTable: ComplianceTable = parseComplianceTable(rawTable);
