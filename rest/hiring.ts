import { z } from 'zod';
import { graphql } from '../src/generated/graphql/index.js';
import { responseSchemaOf } from './response-schema.js';
import { defineRoute, fromBody, fromPath } from './route.js';

const PrepareOnboarding = graphql(`
  mutation PrepareOnboarding($processId: String!, $candidateId: String!, $input: OnboardingInput!) {
    prepareOnboarding(processId: $processId, candidateId: $candidateId, input: $input) {
      offer_letter: offerLetter
      checklist
      compliance_reminders: complianceReminders
      request_id: requestId
      timestamp: createdAt
    }
  }
`);

// GraphQL answers the checklist and reminders as JSON; REST documents their shape. respond splits the packet
// into data and meta, filling a missing request_id with the request's.
const packet = responseSchemaOf(PrepareOnboarding, {
  checklist: z.object({ items: z.array(z.record(z.string(), z.unknown())) }),
  compliance_reminders: z.object({
    jurisdiction: z.record(z.string(), z.unknown()),
    reminders: z.array(z.record(z.string(), z.unknown())),
    notes: z.array(z.string()),
  }),
  request_id: z.string(),
});

const onboardingResponse = z.object({
  data: packet.pick({ offer_letter: true, checklist: true, compliance_reminders: true }),
  meta: packet.pick({ request_id: true, timestamp: true }),
});

export const hiringRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/hiring/{process_id}/onboard/{candidate_id}',
    tag: 'hiring',
    summary: 'Prepare the offer letter, onboarding checklist and compliance reminders for a hired candidate',
    description:
      'Operator or chairman. Compliance reminders follow the jurisdiction resolved from `location`. Each call stores a new generation of the packet; earlier ones stay readable as history through GraphQL `onboardingPacket`.',
    document: PrepareOnboarding,
    variables: {
      processId: fromPath('process_id'),
      candidateId: fromPath('candidate_id'),
      input: fromBody(),
    },
    status: 200,
    respond: ({ prepareOnboarding: packet }, { requestId }) => ({
      data: {
        offer_letter: packet.offer_letter,
        checklist: packet.checklist,
        compliance_reminders: packet.compliance_reminders,
      },
      meta: { request_id: packet.request_id ?? requestId, timestamp: packet.timestamp },
    }),
    responseSchema: onboardingResponse,
    responseExample: {
      data: {
        offer_letter:
          'Dear Ada Lovelace,\n\nWe are delighted to offer you the position of Senior Platform Engineer…',
        checklist: {
          items: [{ id: 'sign-offer', title: 'Sign and return the offer letter', due: '2027-01-04' }],
        },
        compliance_reminders: {
          jurisdiction: { country: 'US', region: 'CA', resolved: true },
          reminders: [{ id: 'us-i9', title: 'Complete Form I-9', deadline: '2027-01-14' }],
          notes: [],
        },
      },
      meta: { request_id: '4f3e2d1c-0b9a-4876-9543-210fedcba987', timestamp: '2026-11-22T09:30:00.000Z' },
    },
    example: {
      job_design_data: {
        company_name: 'Acme Robotics',
        title: 'Senior Platform Engineer',
        department: 'Platform',
        employment_type: 'full_time',
        start_date: '2027-01-11',
      },
      candidate_name: 'Ada Lovelace',
      salary: { min_amount: 120000, max_amount: 150000, basis: 'annual', currency: 'USD' },
      location: 'San Francisco, CA',
    },
  }),
];
