import { describe, expect, it } from 'vitest';
import { buildChecklist } from '../../../src/domain/hiring/checklist.js';
import { complianceReminders } from '../../../src/domain/hiring/compliance.js';
import { resolveLocation } from '../../../src/domain/hiring/location.js';

function checklistFor(location: string, jobDesign: Record<string, unknown> = { title: 'Data Engineer' }) {
  const resolved = resolveLocation(location);
  const { reminders } = complianceReminders(resolved);
  return { reminders, items: buildChecklist({ jobDesign, location: resolved, reminders }).items };
}

describe('buildChecklist', () => {
  it('turns every compliance reminder into a required item', () => {
    const { reminders, items } = checklistFor('San Francisco, CA');
    const derived = items.filter((item) => item.reminder_id !== null);
    expect(derived.map((item) => item.reminder_id)).toEqual(
      expect.arrayContaining(reminders.map((r) => r.id)),
    );
    expect(derived).toHaveLength(reminders.length);
    expect(derived.every((item) => item.required)).toBe(true);
  });

  it('keeps the start-date offset of a compliance deadline', () => {
    const { items } = checklistFor('San Francisco, CA');
    expect(items.find((item) => item.reminder_id === 'us-i9-section-2')?.due).toMatchObject({
      relative_to: 'start_date',
      offset_days: 3,
    });
  });

  it('schedules deadlines tied to offer acceptance for the day before the start date', () => {
    const { items } = checklistFor('New York, NY');
    expect(items.find((item) => item.reminder_id === 'us-ny-pay-notice')?.due.offset_days).toBe(-1);
  });

  it.each([
    ['us-form-w4', 'candidate', 'payroll'],
    ['us-i9-section-1', 'candidate', 'compliance'],
    ['us-ca-new-hire-de34', 'payroll', 'payroll'],
    ['us-ca-wage-notice', 'people_ops', 'compliance'],
  ])('assigns %s to %s under %s', (reminderId, owner, category) => {
    const { items } = checklistFor('San Francisco, CA');
    expect(items.find((item) => item.reminder_id === reminderId)).toMatchObject({ owner, category });
  });

  it('assigns written-terms reminders to paperwork', () => {
    const { items } = checklistFor('Berlin');
    expect(items.find((item) => item.reminder_id === 'de-nachweis-day-one')?.category).toBe('paperwork');
  });

  it.each([
    ['order-equipment', 'equipment', true],
    ['create-accounts', 'accounts', true],
    ['prepare-first-week-plan', 'orientation', true],
    ['assign-onboarding-buddy', 'orientation', false],
    ['thirty-day-check-in', 'orientation', false],
  ])('includes the standard step %s (%s, required: %s)', (id, category, required) => {
    const { items } = checklistFor('London, UK');
    expect(items.find((item) => item.id === id)).toMatchObject({ category, required, reminder_id: null });
  });

  it('names the role in role-specific steps', () => {
    const { items } = checklistFor('London, UK');
    expect(items.find((item) => item.id === 'order-equipment')?.title).toContain('Data Engineer');
  });

  it('orders items by due date', () => {
    const offsets = checklistFor('Austin, Texas').items.map((item) => item.due.offset_days);
    expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
  });

  it('computes calendar dates from the job design start date', () => {
    const { items } = checklistFor('Austin, Texas', { start_date: '2027-01-11' });
    expect(items.find((item) => item.reminder_id === 'us-tx-new-hire')?.due.date).toBe('2027-01-31');
    expect(items.find((item) => item.id === 'collect-signed-offer')?.due.date).toBe('2026-12-28');
  });

  it('leaves dates empty when the start date is unknown', () => {
    expect(checklistFor('Austin, Texas', {}).items.every((item) => item.due.date === null)).toBe(true);
  });

  it('asks to confirm the work location when it could not be resolved', () => {
    const { items } = checklistFor('Atlantis');
    expect(items.find((item) => item.id === 'confirm-work-location')).toMatchObject({ required: true });
  });

  it('gives every item a unique id', () => {
    const ids = checklistFor('Toronto, Ontario, Canada').items.map((item) => item.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
