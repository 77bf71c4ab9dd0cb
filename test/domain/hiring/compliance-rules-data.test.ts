import { describe, expect, it } from 'vitest';
import rawTable from '../../../src/domain/hiring/compliance-rules.json' with { type: 'json' };
import { complianceTable, parseComplianceTable } from '../../../src/domain/hiring/compliance-table.js';
import { resolveLocation } from '../../../src/domain/hiring/location.js';
import { RULE_CATEGORIES } from '../../../src/domain/hiring/types.js';

const { rules, general } = complianceTable;

function tableWithRule(change: (rule: Record<string, unknown>) => void): unknown {
  const copy = structuredClone(rawTable) as { rules: Record<string, unknown>[] };
  const first = copy.rules[0];
  if (first) change(first);
  return copy;
}

describe('compliance rules table', () => {
  it('loads every rule in the JSON file', () => {
    expect(rules).toHaveLength(rawTable.rules.length);
    expect(general).toHaveLength(rawTable.general.length);
  });

  it.each(rules.map((rule) => [rule.id, rule] as const))(
    '%s has a titled, described, cited rule',
    (_id, rule) => {
      expect(rule.title.trim()).not.toBe('');
      expect(rule.description.trim()).not.toBe('');
      expect(rule.source.name.trim()).not.toBe('');
      expect(rule.source.citation.trim()).not.toBe('');
      expect(rule.source.url).toMatch(/^https:\/\/[^\s]+$/);
    },
  );

  it.each(rules.map((rule) => [rule.id, rule] as const))(
    '%s has a deadline in days and in words',
    (_id, rule) => {
      expect(['start_date', 'offer_acceptance']).toContain(rule.deadline.relative_to);
      expect(Number.isInteger(rule.deadline.offset_days)).toBe(true);
      expect(rule.deadline.text.trim()).not.toBe('');
    },
  );

  it('uses only known categories', () => {
    const categories: readonly string[] = RULE_CATEGORIES;
    expect(rules.filter((rule) => !categories.includes(rule.category))).toEqual([]);
  });

  it('uses jurisdictions the resolver can produce', () => {
    const unknown = [...new Set(rules.map((rule) => rule.jurisdiction))].filter((code) => {
      const resolved = resolveLocation(code);
      return !resolved.resolved || (resolved.subdivision ?? resolved.country) !== code;
    });
    expect(unknown).toEqual([]);
  });

  it.each([
    'US',
    'US-CA',
    'US-NY',
    'US-WA',
    'US-CO',
    'US-IL',
    'US-MA',
    'US-TX',
    'GB',
    'DE',
    'FR',
    'CA',
    'CA-ON',
    'CA-BC',
    'IN',
  ])('covers %s', (jurisdiction) => {
    expect(rules.some((rule) => rule.jurisdiction === jurisdiction)).toBe(true);
  });

  it('gives every US state on file its own new-hire report that replaces the federal one', () => {
    const states = [
      ...new Set(rules.map((rule) => rule.jurisdiction).filter((code) => code.startsWith('US-'))),
    ];
    const replacing = states.filter((state) =>
      rules.some((rule) => rule.jurisdiction === state && rule.supersedes.includes('us-new-hire-reporting')),
    );
    expect(replacing).toEqual(states);
  });

  it('marks the general reminders with the wildcard jurisdiction', () => {
    expect(general.every((rule) => rule.jurisdiction === '*')).toBe(true);
  });

  it.each([
    [
      'a missing citation',
      (rule: Record<string, unknown>) => Object.assign(rule.source as object, { citation: '' }),
    ],
    ['a missing deadline', (rule: Record<string, unknown>) => delete rule.deadline],
    [
      'a fractional offset',
      (rule: Record<string, unknown>) => Object.assign(rule.deadline as object, { offset_days: 1.5 }),
    ],
    [
      'an unknown deadline anchor',
      (rule: Record<string, unknown>) => Object.assign(rule.deadline as object, { relative_to: 'payday' }),
    ],
    [
      'a non-https source',
      (rule: Record<string, unknown>) => Object.assign(rule.source as object, { url: 'http://x' }),
    ],
    ['an unknown category', (rule: Record<string, unknown>) => Object.assign(rule, { category: 'misc' })],
    [
      'a malformed jurisdiction',
      (rule: Record<string, unknown>) => Object.assign(rule, { jurisdiction: 'usa' }),
    ],
    [
      'a dangling supersedes',
      (rule: Record<string, unknown>) => Object.assign(rule, { supersedes: ['nope'] }),
    ],
  ])('rejects a table with %s', (_problem, change) => {
    expect(() => parseComplianceTable(tableWithRule(change))).toThrow(/compliance rules table/);
  });

  it('rejects duplicate rule ids', () => {
    const copy = structuredClone(rawTable);
    copy.rules.push(structuredClone(copy.rules[0] as (typeof copy.rules)[number]));
    expect(() => parseComplianceTable(copy)).toThrow(/duplicate id/);
  });
});
