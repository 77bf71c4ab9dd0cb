import { buildChecklist } from './checklist.js';
import { complianceReminders } from './compliance.js';
import { readJobDesign } from './job-design.js';
import { resolveLocation } from './location.js';
import { buildOfferLetter } from './offer-letter.js';
import type { Checklist, ComplianceReminders, ResolvedLocation, SalaryRange } from './types.js';

export interface OnboardingPacketInput {
  candidateName: string;
  companyName: string;
  jobDesign: Record<string, unknown>;
  salary: SalaryRange;
  location: string;
  issuedAt: Date;
}

export interface OnboardingPacket {
  offerLetter: string;
  checklist: Checklist;
  complianceReminders: ComplianceReminders;
  jurisdiction: ResolvedLocation;
}

/** The body of POST /api/v1/hiring/{process_id}/onboard/{candidate_id}. */
export interface OnboardingResponse {
  offer_letter: string;
  checklist: Checklist;
  compliance_reminders: ComplianceReminders;
}

const CONTRACTOR_NOTE =
  'The job design describes an independent contractor; these reminders assume an employee, so confirm the worker classification before relying on them.';

export function prepareOnboardingPacket(input: OnboardingPacketInput): OnboardingPacket {
  const jurisdiction = resolveLocation(input.location);
  const reminders = complianceReminders(jurisdiction);
  const isContractor = readJobDesign(input.jobDesign).employmentType?.key === 'contractor';
  const compliance = isContractor
    ? { ...reminders, notes: [CONTRACTOR_NOTE, ...reminders.notes] }
    : reminders;
  return {
    offerLetter: buildOfferLetter({
      candidateName: input.candidateName,
      companyName: input.companyName,
      jobDesign: input.jobDesign,
      salary: input.salary,
      location: jurisdiction,
      issuedAt: input.issuedAt,
    }),
    checklist: buildChecklist({
      jobDesign: input.jobDesign,
      location: jurisdiction,
      reminders: compliance.reminders,
    }),
    complianceReminders: compliance,
    jurisdiction,
  };
}

export function toOnboardingResponse(packet: OnboardingPacket): OnboardingResponse {
  return {
    offer_letter: packet.offerLetter,
    checklist: packet.checklist,
    compliance_reminders: packet.complianceReminders,
  };
}
