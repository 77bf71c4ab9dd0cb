import { z } from 'zod';
import { builder } from '../builder.js';
import {
  earlierOnboardingPackets,
  generateOnboardingPacket,
  latestOnboardingPacket,
  type OnboardingPacketRow,
} from '../domain/hiring/packets.js';
import { isIsoCurrency } from '../domain/hiring/salary.js';
import { PAY_BASES } from '../domain/hiring/types.js';
import { graphqlArg, zodField, zodInputType } from './args.js';

const OnboardingPacketRef = builder.prismaObject('OnboardingPacket', {
  description: 'One generation of a hired candidate’s onboarding materials.',
  fields: (t) => ({
    id: t.exposeID('id'),
    processId: t.exposeString('processId'),
    candidateId: t.exposeString('candidateId'),
    generation: t.exposeInt('generation', {
      description: '1 for the first packet of the candidate, then previous + 1.',
    }),
    candidateName: t.exposeString('candidateName'),
    location: t.exposeString('location', { description: 'The location as given.' }),
    offerLetter: t.exposeString('offerLetter'),
    checklist: t.expose('checklist', { type: 'JSON' }),
    complianceReminders: t.expose('complianceReminders', { type: 'JSON' }),
    jurisdiction: t.expose('jurisdiction', { type: 'JSON', description: 'How the location was resolved.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    requestId: t.exposeString('requestId', {
      nullable: true,
      description: 'The request that generated this packet.',
    }),
  }),
});

builder.prismaObjectField(OnboardingPacketRef, 'history', (t) =>
  t.field({
    type: [OnboardingPacketRef],
    description: 'The earlier generations of this candidate’s packet, newest first.',
    resolve: (packet, _args, context) => earlierOnboardingPackets(context.prisma, packet),
  }),
);

const SalaryBasis = builder.enumType('SalaryBasis', { values: PAY_BASES });

const hiringId = z
  .string()
  .min(1, { abort: true })
  .max(128, { abort: true })
  .regex(/^[A-Za-z0-9._:-]+$/);

const salaryRangeInput = z
  .object({
    minAmount: z.number().min(0),
    maxAmount: z.number().min(0),
    basis: graphqlArg(z.enum(PAY_BASES), { type: SalaryBasis }),
    currency: graphqlArg(
      z
        .string()
        .trim()
        .toUpperCase()
        .refine(isIsoCurrency, { message: 'currency must be an ISO 4217 code such as USD, EUR or GBP' }),
      { description: 'ISO 4217 code, e.g. USD.' },
    ),
  })
  .superRefine((salary, issues) => {
    if (salary.maxAmount < salary.minAmount) {
      issues.addIssue({
        code: 'custom',
        path: ['maxAmount'],
        input: salary.maxAmount,
        message: `maximum amount must be greater than or equal to the minimum amount (${salary.minAmount})`,
      });
    }
  });
zodInputType('SalaryRangeInput', salaryRangeInput);

const onboardingInput = z.object({
  jobDesignData: graphqlArg(z.record(z.string(), z.unknown()), {
    type: 'JSON',
    description: 'The job design from the hiring process.',
  }),
  candidateName: z.string().trim().min(1).max(200),
  salary: salaryRangeInput,
  location: graphqlArg(z.string().trim().min(1).max(200), {
    description: 'Where the candidate will work, e.g. "Austin, TX" or "Berlin".',
  }),
});
zodInputType('OnboardingInput', onboardingInput);

export const onboardingArgs = z.object({
  processId: hiringId,
  candidateId: hiringId,
  input: onboardingInput,
});

const packetArgs = z.object({ processId: hiringId, candidateId: hiringId });

builder.mutationField('prepareOnboarding', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: OnboardingPacketRef,
    description:
      'Generates the offer letter, onboarding checklist and compliance reminders for a hired candidate (operator or chairman). Each call stores a new generation; earlier ones stay in `history`.',
    ...zodField(
      t,
      onboardingArgs,
      (_root, { processId, candidateId, input }, context): Promise<OnboardingPacketRow> =>
        generateOnboardingPacket(context, { processId, candidateId, ...input }),
    ),
  }),
);

builder.queryField('onboardingPacket', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: OnboardingPacketRef,
    nullable: true,
    description:
      'The latest onboarding packet of a candidate in the caller’s tenant, with earlier generations in `history`.',
    ...zodField(t, packetArgs, (_root, { processId, candidateId }, context) =>
      latestOnboardingPacket(context, processId, candidateId),
    ),
  }),
);
