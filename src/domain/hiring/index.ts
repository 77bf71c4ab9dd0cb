export { buildChecklist, type ChecklistInput } from './checklist.js';
export { companyNameOf, UNNAMED_COMPANY } from './company.js';
export { complianceReminders } from './compliance.js';
export { type ComplianceTable, complianceTable, parseComplianceTable } from './compliance-table.js';
export { type CandidateJobDetails, type EmploymentType, readJobDesign } from './job-design.js';
export { resolveLocation } from './location.js';
export { buildOfferLetter, letterLocale, type OfferLetterInput } from './offer-letter.js';
export {
  type OnboardingPacket,
  type OnboardingPacketInput,
  type OnboardingResponse,
  prepareOnboardingPacket,
  toOnboardingResponse,
} from './onboarding-packet.js';
export { formatSalaryRange, isIsoCurrency } from './salary.js';
export * from './types.js';
