import { describe, expect, it } from 'vitest';
import {
  type OnboardingPacketInput,
  prepareOnboardingPacket,
  toOnboardingResponse,
} from '../../../src/domain/hiring/onboarding-packet.js';

const input: OnboardingPacketInput = {
  candidateName: 'Ada Lovelace',
  companyName: 'Acme Robotics',
  jobDesign: { title: 'Data Engineer', start_date: '2027-03-01', budget: 'DO-NOT-DISCLOSE' },
  salary: { minAmount: 60000, maxAmount: 70000, basis: 'annual', currency: 'GBP' },
  location: 'Manchester, England',
  issuedAt: new Date('2026-11-21T00:00:00Z'),
};

describe('prepareOnboardingPacket', () => {
  it('resolves the location once and shares it across the packet', () => {
    const packet = prepareOnboardingPacket(input);
    expect(packet.jurisdiction).toMatchObject({ country: 'GB', subdivision: 'GB-ENG' });
    expect(packet.complianceReminders.jurisdiction.label).toBe(packet.jurisdiction.label);
    expect(packet.offerLetter).toContain(packet.jurisdiction.label);
  });

  it('builds checklist items from the same reminders it returns', () => {
    const packet = prepareOnboardingPacket(input);
    const reminderIds = packet.complianceReminders.reminders.map((reminder) => reminder.id);
    const itemIds = packet.checklist.items.flatMap((item) => (item.reminder_id ? [item.reminder_id] : []));
    expect(itemIds.sort()).toEqual(reminderIds.sort());
  });

  it('keeps internal job design fields out of the letter', () => {
    expect(prepareOnboardingPacket(input).offerLetter).not.toContain('DO-NOT-DISCLOSE');
  });

  it('notes that the reminders assume an employee when the job is for a contractor', () => {
    const packet = prepareOnboardingPacket({ ...input, jobDesign: { employment_type: 'contractor' } });
    expect(packet.complianceReminders.notes[0]).toContain('independent contractor');
  });

  it('still produces a full packet for an unresolved location', () => {
    const packet = prepareOnboardingPacket({ ...input, location: 'Atlantis' });
    expect(packet.jurisdiction.resolved).toBe(false);
    expect(packet.offerLetter).toContain('Dear Ada Lovelace,');
    expect(packet.complianceReminders.reminders.length).toBeGreaterThan(0);
  });
});

describe('toOnboardingResponse', () => {
  it('shapes the packet as the REST body with snake_case keys', () => {
    const packet = prepareOnboardingPacket(input);
    expect(toOnboardingResponse(packet)).toEqual({
      offer_letter: packet.offerLetter,
      checklist: packet.checklist,
      compliance_reminders: packet.complianceReminders,
    });
  });

  it('serialises to JSON without losing anything', () => {
    const response = toOnboardingResponse(prepareOnboardingPacket(input));
    expect(JSON.parse(JSON.stringify(response))).toEqual(response);
  });
});
