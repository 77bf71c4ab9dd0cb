import { complianceTable } from './compliance-table.js';
import { countryLabel, subdivisionName, subdivisionTerm } from './place-index.js';
import type { ComplianceReminders, ComplianceRule, Reminder, ResolvedLocation } from './types.js';

function toReminder({ supersedes: _supersedes, ...reminder }: ComplianceRule): Reminder {
  return { ...reminder, deadline: { ...reminder.deadline }, source: { ...reminder.source } };
}

/**
 * Reminders for the resolved work location: the country's rules plus the subdivision's, where a subdivision
 * rule may replace a country rule it supersedes (e.g. Massachusetts' 14-day new-hire report replaces the
 * federal 20-day one). Unknown places, or countries with no rules on file, get the general reminders.
 */
export function complianceReminders(location: ResolvedLocation): ComplianceReminders {
  const jurisdiction = {
    resolved: location.resolved,
    country: location.country,
    subdivision: location.subdivision,
    label: location.label,
  };
  const { country, subdivision } = location;
  const closing = complianceTable.disclaimer;

  if (!location.resolved || !country) {
    const unresolved =
      location.input.trim() === ''
        ? 'No work location was given, so only general reminders are listed.'
        : `The location "${location.input.trim()}" could not be resolved to a country, so only general reminders are listed; give a recognizable city, state or country for jurisdiction-specific rules.`;
    return {
      jurisdiction,
      reminders: complianceTable.general.map(toReminder),
      notes: [unresolved, closing],
    };
  }

  const countryRules = rulesFor(country);
  const subdivisionRules = subdivision ? rulesFor(subdivision) : [];
  if (countryRules.length === 0 && subdivisionRules.length === 0) {
    return {
      jurisdiction,
      reminders: complianceTable.general.map(toReminder),
      notes: [
        ...location.notes,
        `No jurisdiction-specific rules are on file for ${countryLabel(country)}; the general reminders apply.`,
        closing,
      ],
    };
  }

  const superseded = new Set(subdivisionRules.flatMap((rule) => rule.supersedes));
  const reminders = [...countryRules.filter((rule) => !superseded.has(rule.id)), ...subdivisionRules];
  return {
    jurisdiction,
    reminders: reminders.map(toReminder),
    notes: [
      ...location.notes,
      ...subdivisionCoverageNotes(country, subdivision),
      ...(complianceTable.notes[country] ?? []),
      ...(subdivision ? (complianceTable.notes[subdivision] ?? []) : []),
      closing,
    ],
  };
}

function rulesFor(jurisdiction: string): ComplianceRule[] {
  return complianceTable.rules.filter((rule) => rule.jurisdiction === jurisdiction);
}

// Only countries whose rules differ by subdivision need telling that a subdivision is missing or not on file.
function subdivisionCoverageNotes(country: string, subdivision: string | null): string[] {
  const hasSubdivisionRules = complianceTable.rules.some((rule) =>
    rule.jurisdiction.startsWith(`${country}-`),
  );
  if (!hasSubdivisionRules) return [];
  const term = subdivisionTerm(country);
  if (!subdivision) {
    return [`The ${term} could not be determined, so ${term}-level rules are not included.`];
  }
  if (rulesFor(subdivision).length > 0) return [];
  const name = subdivisionName(subdivision) ?? subdivision;
  return [
    `No ${term}-specific rules are on file for ${name}; check its registration, tax withholding and notice requirements.`,
  ];
}
