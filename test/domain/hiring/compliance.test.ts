import { describe, expect, it } from 'vitest';
import { complianceReminders } from '../../../src/domain/hiring/compliance.js';
import { resolveLocation } from '../../../src/domain/hiring/location.js';

function remindersFor(location: string) {
  return complianceReminders(resolveLocation(location));
}

function collectKeys(value: unknown, keys: Set<string> = new Set()): Set<string> {
  if (Array.isArray(value)) {
    for (const item of value) collectKeys(item, keys);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, nested] of Object.entries(value)) {
      keys.add(key);
      collectKeys(nested, keys);
    }
  }
  return keys;
}

describe('complianceReminders', () => {
  it.each([
    ['US federal', 'USA', 'us-i9-section-1', 'start_date', 0, '8 CFR 274a.2'],
    ['US federal', 'USA', 'us-i9-section-2', 'start_date', 3, '8 CFR 274a.2(b)(1)(ii)'],
    ['US federal', 'USA', 'us-form-w4', 'start_date', 0, '26 U.S.C. § 3402'],
    ['US federal', 'USA', 'us-new-hire-reporting', 'start_date', 20, '42 U.S.C. § 653a'],
    ['California', 'San Francisco, CA', 'us-ca-new-hire-de34', 'start_date', 20, 'Unemp. Ins. Code § 1088.5'],
    ['California', 'San Francisco, CA', 'us-ca-wage-notice', 'offer_acceptance', 0, 'Lab. Code § 2810.5'],
    [
      'California',
      'San Francisco, CA',
      'us-ca-harassment-training',
      'start_date',
      181,
      'Gov. Code § 12950.1',
    ],
    ['New York', 'New York, NY', 'us-ny-pay-notice', 'offer_acceptance', 0, 'Labor Law § 195(1)'],
    ['New York', 'New York, NY', 'us-ny-new-hire', 'start_date', 20, 'Tax Law § 171-h'],
    ['Washington', 'Seattle, WA', 'us-wa-new-hire', 'start_date', 20, 'RCW 26.23.040'],
    ['Washington', 'Seattle, WA', 'us-wa-paid-sick-leave-notice', 'start_date', 0, 'WAC 296-128-760'],
    ['Colorado', 'Denver, Colorado', 'us-co-new-hire', 'start_date', 20, 'C.R.S. § 26-13-125'],
    ['Colorado', 'Denver, Colorado', 'us-co-hfwa-notice', 'start_date', 0, 'C.R.S. § 8-13.3-408'],
    ['Illinois', 'Chicago, IL', 'us-il-new-hire', 'start_date', 20, '820 ILCS 405/1801.1'],
    ['Illinois', 'Chicago, IL', 'us-il-w4', 'start_date', 0, '35 ILCS 5'],
    ['Massachusetts', 'Boston, MA', 'us-ma-new-hire', 'start_date', 14, 'c. 62E, § 2'],
    ['Massachusetts', 'Boston, MA', 'us-ma-earned-sick-time', 'start_date', 0, 'c. 149, § 148C'],
    ['Texas', 'Austin, Texas', 'us-tx-new-hire', 'start_date', 20, 'Fam. Code §§ 234.101'],
    ['United Kingdom', 'London, UK', 'gb-right-to-work', 'start_date', -1, 'Nationality Act 2006, s. 15'],
    ['United Kingdom', 'London, UK', 'gb-written-statement', 'start_date', 0, 'Employment Rights Act 1996'],
    ['United Kingdom', 'London, UK', 'gb-auto-enrolment', 'start_date', 42, 'Pensions Act 2008'],
    ['Germany', 'Berlin, Germany', 'de-nachweis-day-one', 'start_date', 0, 'Nachweisgesetz § 2'],
    ['Germany', 'Berlin, Germany', 'de-social-insurance-registration', 'start_date', 42, 'DEÜV'],
    ['France', 'Paris, France', 'fr-dpae', 'start_date', -1, 'L1221-10'],
    ['Canada (federal)', 'Canada', 'ca-td1', 'start_date', 0, 'Income Tax Act'],
    ['Canada (federal)', 'Canada', 'ca-sin', 'start_date', 3, 'SOR/96-332'],
    [
      'Ontario',
      'Toronto, Ontario, Canada',
      'ca-on-esa-poster',
      'start_date',
      30,
      'Employment Standards Act, 2000',
    ],
    ['British Columbia', 'Vancouver, BC', 'ca-bc-td1bc', 'start_date', 0, 'TD1BC'],
    ['India', 'Mumbai, India', 'in-epf-enrolment', 'start_date', 15, 'para. 36(2)'],
    ['India', 'Mumbai, India', 'in-esi-registration', 'start_date', 10, 'regs. 10-B, 11 and 12'],
  ])(
    '%s: %j includes %s with its deadline and source',
    (_name, location, id, relativeTo, offsetDays, citation) => {
      const reminder = remindersFor(location).reminders.find((entry) => entry.id === id);
      expect(reminder?.deadline).toMatchObject({ relative_to: relativeTo, offset_days: offsetDays });
      expect(reminder?.deadline.text).not.toBe('');
      expect(reminder?.source.citation).toContain(citation);
      expect(reminder?.source.url).toMatch(/^https:\/\//);
    },
  );

  it.each([
    ['San Francisco, CA', 'us-ca-new-hire-de34'],
    ['Boston, MA', 'us-ma-new-hire'],
    ['Austin, Texas', 'us-tx-new-hire'],
  ])('replaces the federal new-hire rule with the state one for %j', (location, stateRule) => {
    const ids = remindersFor(location).reminders.map((reminder) => reminder.id);
    expect(ids).toContain(stateRule);
    expect(ids).not.toContain('us-new-hire-reporting');
  });

  it('keeps the federal rules alongside the state rules', () => {
    const ids = remindersFor('Chicago, IL').reminders.map((reminder) => reminder.id);
    expect(ids).toEqual(expect.arrayContaining(['us-i9-section-1', 'us-form-w4', 'us-il-w4']));
  });

  it('lists only the rules of the jurisdiction resolved', () => {
    const jurisdictions = new Set(
      remindersFor('Austin, Texas').reminders.map((reminder) => reminder.jurisdiction),
    );
    expect(jurisdictions).toEqual(new Set(['US', 'US-TX']));
  });

  it('adds the federal Canadian rules to the provincial ones', () => {
    const ids = remindersFor('Toronto, Ontario, Canada').reminders.map((reminder) => reminder.id);
    expect(ids).toEqual(expect.arrayContaining(['ca-td1', 'ca-sin', 'ca-on-esa-poster', 'ca-on-td1on']));
  });

  it('says when the US state could not be determined', () => {
    expect(remindersFor('USA').notes.join(' ')).toContain('state could not be determined');
  });

  it('says when a US state has no rules on file and keeps the federal ones', () => {
    const result = remindersFor('Portland, Oregon');
    expect(result.notes.join(' ')).toContain('No state-specific rules are on file for Oregon');
    expect(result.reminders.map((reminder) => reminder.id)).toContain('us-new-hire-reporting');
  });

  it('adds the Northern Ireland note for Belfast', () => {
    expect(remindersFor('Belfast').notes.join(' ')).toContain(
      'Northern Ireland has its own employment legislation',
    );
  });

  it('gives general reminders and a note for an unresolved location', () => {
    const result = remindersFor('Atlantis');
    expect(result.jurisdiction).toEqual({
      resolved: false,
      country: null,
      subdivision: null,
      label: 'Atlantis',
    });
    expect(result.reminders.map((reminder) => reminder.id)).toEqual([
      'general-right-to-work',
      'general-written-terms',
      'general-payroll-registration',
      'general-local-counsel',
    ]);
    expect(result.notes[0]).toContain('"Atlantis" could not be resolved');
  });

  it('gives general reminders for a country with no rules on file', () => {
    const result = remindersFor('Tokyo, Japan');
    expect(result.reminders.every((reminder) => reminder.jurisdiction === '*')).toBe(true);
    expect(result.notes.join(' ')).toContain('No jurisdiction-specific rules are on file for Japan');
  });

  it('passes on how an ambiguous location was read', () => {
    expect(remindersFor('CA').notes.join(' ')).toContain('read as Canada');
  });

  it('uses only snake_case keys in the returned object', () => {
    const keys = [...collectKeys(remindersFor('San Francisco, CA'))];
    expect(keys.filter((key) => !/^[a-z]+(_[a-z]+)*$/.test(key))).toEqual([]);
  });

  it('returns copies that callers cannot use to change the table', () => {
    const first = remindersFor('Berlin');
    const reminder = first.reminders[0];
    if (reminder) reminder.deadline.offset_days = 999;
    expect(remindersFor('Berlin').reminders[0]?.deadline.offset_days).not.toBe(999);
  });
});
