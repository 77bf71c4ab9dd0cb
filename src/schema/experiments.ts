import { z } from 'zod';
import { builder } from '../builder.js';
import { DEFAULT_ALPHA, MAX_VARIANT_WEIGHT, MIN_VARIANT_WEIGHT } from '../domain/experiments/index.js';
import { abTestResults, createAbTest, findAbTest, moveAbTest } from '../domain/experiments/lifecycle.js';
import { AB_TEST_ANALYSES, DEFAULT_AB_TEST_ANALYSIS } from '../domain/experiments/results.js';
import {
  assignSubject,
  convertSubject,
  MAX_EVENTS_PER_CALL,
  recordEvents,
} from '../domain/experiments/subjects.js';
import {
  AB_TEST_STATUSES,
  AbTestAssignmentRef,
  AbTestEventsReceiptRef,
  AbTestPage,
  AbTestRef,
  AbTestResultsRef,
  AbTestStatus,
} from './experiments/types.js';
import './experiments/events.js';
import { graphqlArg, idArg, zodField, zodInputType } from './args.js';
import { afterCursor, newestFirst, pageArgsSchema, toPage } from './pagination.js';

export const MAX_VARIANTS = 20;

const subjectId = z.string().min(1).max(256);

const variantInput = z.object({
  name: graphqlArg(z.string().trim().min(1).max(100), {
    description: '1–100 characters, unique in the test ignoring case.',
  }),
  weight: graphqlArg(z.number().min(MIN_VARIANT_WEIGHT).max(MAX_VARIANT_WEIGHT).nullish(), {
    description: `Relative share of new subjects, ${MIN_VARIANT_WEIGHT} to ${MAX_VARIANT_WEIGHT}; default 1.`,
  }),
});
zodInputType('AbTestVariantInput', variantInput);

const createAbTestInput = z.object({
  name: z.string().trim().min(1).max(200),
  variants: graphqlArg(
    z
      .array(variantInput)
      .min(2)
      .max(MAX_VARIANTS)
      .superRefine((variants, ctx) => {
        const seen = new Set<string>();
        variants.forEach((variant, index) => {
          const key = variant.name.toLowerCase();
          if (seen.has(key)) {
            ctx.addIssue({
              code: 'custom',
              path: [index, 'name'],
              input: variant.name,
              message: `variant names must be unique ignoring case; '${variant.name}' repeats an earlier one`,
            });
          }
          seen.add(key);
        });
      }),
    { description: `2 to ${MAX_VARIANTS} variants; the first is the control.` },
  ),
  alpha: graphqlArg(
    z
      .number()
      .gt(0)
      .lt(1)
      .nullish()
      .transform((alpha) => alpha ?? DEFAULT_ALPHA),
    { description: `Significance level in (0, 1); default ${DEFAULT_ALPHA}.` },
  ),
  analysis: graphqlArg(
    z
      .enum(AB_TEST_ANALYSES)
      .nullish()
      .transform((analysis) => analysis ?? DEFAULT_AB_TEST_ANALYSIS),
    {
      type: 'String',
      description: `Which analysis decides the test: ${AB_TEST_ANALYSES.join(' or ')}; default ${DEFAULT_AB_TEST_ANALYSIS}. See AbTestAnalysis.`,
    },
  ),
});
zodInputType('CreateAbTestInput', createAbTestInput);

export const createAbTestArgs = z.object({ input: createAbTestInput });

const eventInput = z.object({
  subjectId,
  variantId: graphqlArg(z.guid().nullish(), {
    type: 'ID',
    description:
      "The variant shown; omitted, the sticky assignment decides. Ignored when it contradicts the subject's first assignment.",
  }),
  converted: graphqlArg(z.boolean().nullish(), { description: 'The subject converted; default false.' }),
});
zodInputType('AbTestEventInput', eventInput);

const idArgs = z.object({ id: idArg() });
const subjectArgs = z.object({ testId: idArg(), subjectId });
export const recordEventsArgs = z.object({
  testId: idArg(),
  events: z.array(eventInput).max(MAX_EVENTS_PER_CALL),
});
const resultsArgs = z.object({ testId: idArg() });
const listArgs = z.object({
  ...pageArgsSchema,
  status: graphqlArg(z.enum(AB_TEST_STATUSES), { type: AbTestStatus }).nullish(),
});

builder.queryField('abTest', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AbTestRef,
    description: 'One A/B test of the caller’s tenant (NOT_FOUND otherwise).',
    ...zodField(t, idArgs, (_root, { id }, context) => findAbTest(context, id)),
  }),
);

builder.queryField('abTests', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AbTestPage,
    description: 'The tenant’s A/B tests, newest first.',
    ...zodField(t, listArgs, async (_root, { first, after, status }, context) => {
      const rows = await context.prisma.abTest.findMany({
        where: { tenantId: context.viewer.tenantId, ...(status ? { status } : {}), ...afterCursor(after) },
        orderBy: newestFirst,
        take: first + 1,
      });
      return toPage(rows, first);
    }),
  }),
);

builder.queryField('abTestResults', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: AbTestResultsRef,
    description: 'Per-variant metrics and the significance decision, read from counters kept on write.',
    ...zodField(t, resultsArgs, (_root, { testId }, context) => abTestResults(context, testId)),
  }),
);

builder.mutationField('createAbTest', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: AbTestRef,
    description: 'Creates a draft A/B test (operator or chairman).',
    ...zodField(t, createAbTestArgs, (_root, { input }, context) =>
      createAbTest(context, {
        ...input,
        variants: input.variants.map((variant) => ({ name: variant.name, weight: variant.weight ?? 1 })),
      }),
    ),
  }),
);

builder.mutationField('startAbTest', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: AbTestRef,
    description: 'draft → running (operator or chairman). Repeating it on a running test is a no-op.',
    ...zodField(t, idArgs, (_root, { id }, context) => moveAbTest(context, id, 'start')),
  }),
);

builder.mutationField('completeAbTest', (t) =>
  t.withAuth({ operator: true, chairman: true }).field({
    type: AbTestRef,
    description: 'running → completed (operator or chairman). Repeating it on a completed test is a no-op.',
    ...zodField(t, idArgs, (_root, { id }, context) => moveAbTest(context, id, 'complete')),
  }),
);

builder.mutationField('assignAbTestVariant', (t) =>
  t.withAuth({ operator: true, chairman: true, agent: true }).field({
    type: AbTestAssignmentRef,
    description:
      'The sticky variant of a subject in a running test; the first assignment counts as an observation.',
    ...zodField(t, subjectArgs, (_root, args, context) =>
      assignSubject(context, context.services.logger, args.testId, args.subjectId),
    ),
  }),
);

builder.mutationField('recordAbTestConversion', (t) =>
  t.withAuth({ operator: true, chairman: true, agent: true }).field({
    type: AbTestAssignmentRef,
    description: 'Counts a subject’s conversion once; an unseen subject is assigned and observed first.',
    ...zodField(t, subjectArgs, (_root, args, context) =>
      convertSubject(context, context.services.logger, args.testId, args.subjectId),
    ),
  }),
);

builder.mutationField('recordAbTestEvents', (t) =>
  t.withAuth({ operator: true, chairman: true, agent: true }).field({
    type: AbTestEventsReceiptRef,
    description: `Up to ${MAX_EVENTS_PER_CALL} exposures and conversions of a running test, applied in order in one transaction.`,
    ...zodField(t, recordEventsArgs, (_root, { testId, events }, context) =>
      recordEvents(context, context.services.logger, testId, events),
    ),
  }),
);
