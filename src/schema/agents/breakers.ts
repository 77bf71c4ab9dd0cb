import { z } from 'zod';
import { builder } from '../../builder.js';
import {
  BREAKER_KINDS,
  type BreakerPolicy,
  breakerBounds,
  type RolePolicy,
  readBreakerPolicy,
  setBreakerPolicy,
} from '../../domain/agents/breaker-policy.js';
import { requireAgentRole } from '../../domain/agents/registry.js';
import { graphqlArg, zodField, zodInputType } from '../args.js';
import { decodeCursor as decodeTripCursor, pageArgsSchema, pageType, toPage } from '../pagination.js';
import { roleArg } from './types.js';

const BreakerPolicyRef = builder.objectRef<RolePolicy & { role: string }>('BreakerPolicy').implement({
  description:
    'The circuit breakers of an agent role as they apply: its own values, or the defaults (docs/breakers.md).',
  fields: (t) => ({
    role: t.exposeString('role'),
    custom: t.exposeBoolean('custom', { description: 'Whether the chairman set it; false: the defaults.' }),
    enabled: t.exposeBoolean('enabled', { description: 'Off: none of the role’s breakers trips.' }),
    consecutiveFailures: t.exposeInt('consecutiveFailures', {
      description: 'Failed tasks in a row (no completion between, since the last resume) that trip.',
    }),
    spendWindowMinutes: t.exposeInt('spendWindowMinutes', {
      description: 'The sliding window spend is summed over.',
    }),
    spendLimitUsd: t.exposeFloat('spendLimitUsd', {
      nullable: true,
      description: 'Spend in the window above this trips; null: no absolute limit.',
    }),
    spendMultiple: t.exposeFloat('spendMultiple', {
      nullable: true,
      description:
        'Spend in the window above this multiple of the role’s trailing rate (the 7 days before, per window) trips; null: off.',
    }),
    maxAttempts: t.exposeInt('maxAttempts', {
      nullable: true,
      description: 'A lease lapsing on this attempt or later trips; null: the task’s own limit.',
    }),
    maxDurationMinutes: t.exposeInt('maxDurationMinutes', {
      description: 'A task running longer than this since its claim trips.',
    }),
    repeatedCallLimit: t.exposeInt('repeatedCallLimit', {
      description: 'The same connector call (endpoint and arguments) made this often within one task trips.',
    }),
    onDelegationCycle: t.exposeBoolean('onDelegationCycle', {
      description: 'Whether a delegation refused as a cycle trips.',
    }),
  }),
});

interface TripRow {
  id: string;
  role: string;
  kind: string;
  incidentKey: string;
  evidence: unknown;
  trippedAt: Date;
}

const BreakerTripRef = builder.objectRef<TripRow>('BreakerTrip').implement({
  description: 'A breaker that tripped and paused its role: once per incident.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.exposeString('role'),
    kind: t.exposeString('kind', { description: BREAKER_KINDS.join(', ') }),
    incidentKey: t.exposeString('incidentKey', {
      description: 'What makes the incident one: a task id, a streak’s first task, a spend window, ...',
    }),
    evidence: t.expose('evidence', {
      type: 'JSON',
      description: 'The figures (counts, sums, thresholds, window) and task ids the trip was decided on.',
    }),
    trippedAt: t.expose('trippedAt', { type: 'DateTime' }),
  }),
});

const tripColumns = {
  id: true,
  role: true,
  kind: true,
  incidentKey: true,
  evidence: true,
  trippedAt: true,
} as const;

builder.prismaObjectFields('AgentRole', (t) => ({
  breakerPolicy: t.field({
    type: BreakerPolicyRef,
    description: 'Its circuit breakers as they apply (the defaults when the chairman set none).',
    resolve: async (role, _args, context) => ({
      role: role.role,
      ...(await readBreakerPolicy(context.prisma, role.tenantId, role.role)),
    }),
  }),
  pauseReason: t.string({
    nullable: true,
    description:
      'Why the pause in force was made (a breaker’s summary, or the reason given); null while not paused, and for callers other than the chairman or an operator (a person’s reason is kept for the audit log’s readers).',
    resolve: (role, _args, context) =>
      role.paused && context.viewer?.roles.some((each) => each === 'chairman' || each === 'operator')
        ? role.pauseReason
        : null,
  }),
  lastBreakerTrip: t.field({
    type: BreakerTripRef,
    nullable: true,
    description:
      'The last breaker trip of the role (kept after a resume); the pause in force is a breaker’s when pausedBy is breaker:<kind>.',
    resolve: (role, _args, context) =>
      role.lastBreakerTripId
        ? context.prisma.breakerTrip.findUnique({
            where: { id: role.lastBreakerTripId },
            select: tripColumns,
          })
        : null,
  }),
}));

const bound = (field: keyof ReturnType<typeof breakerBounds>) => {
  const { min, max } = breakerBounds()[field];
  return `${min} to ${max}`;
};

const policyInput = z.object({
  enabled: z.boolean().nullish(),
  consecutiveFailures: graphqlArg(z.int().nullish(), { description: bound('consecutiveFailures') }),
  spendWindowMinutes: graphqlArg(z.int().nullish(), { description: bound('spendWindowMinutes') }),
  spendLimitUsd: graphqlArg(z.number().nullish(), {
    description: `${bound('spendLimitUsd')}; null clears it (no absolute limit).`,
  }),
  spendMultiple: graphqlArg(z.number().nullish(), {
    description: `${bound('spendMultiple')}; null turns the trailing-rate rule off.`,
  }),
  maxAttempts: graphqlArg(z.int().nullish(), {
    description: `${bound('maxAttempts')}; null: the task’s own limit.`,
  }),
  maxDurationMinutes: graphqlArg(z.int().nullish(), { description: bound('maxDurationMinutes') }),
  repeatedCallLimit: graphqlArg(z.int().nullish(), { description: bound('repeatedCallLimit') }),
  onDelegationCycle: z.boolean().nullish(),
});
zodInputType('BreakerPolicyInput', policyInput, {
  description:
    'A change of a role’s breakers: an omitted field keeps its value; null clears spendLimitUsd, spendMultiple and maxAttempts (and keeps the others).',
});

/** Fields that may be cleared with null; the others keep their value when null. */
const NULLABLE: readonly (keyof BreakerPolicy)[] = ['spendLimitUsd', 'spendMultiple', 'maxAttempts'];

builder.mutationField('setBreakerPolicy', (t) =>
  t.withAuth({ chairman: true }).field({
    type: BreakerPolicyRef,
    description:
      'Sets an agent role’s circuit breakers (chairman only); audited as breaker_policy.set. NOT_FOUND (reason unknown_role) for a role the tenant does not have, BAD_USER_INPUT (reason out_of_range) for a value out of bounds; a refusal writes nothing.',
    ...zodField(t, z.object({ role: roleArg, input: policyInput }), (_root, { role, input }, context) => {
      const change = Object.fromEntries(
        Object.entries(input).filter(
          ([field, value]) =>
            value !== undefined && (value !== null || NULLABLE.includes(field as keyof BreakerPolicy)),
        ),
      );
      return setBreakerPolicy(context, role, change);
    }),
  }),
);

const BreakerTripPage = pageType('BreakerTrip', BreakerTripRef);

builder.queryField('breakerTrips', (t) =>
  t.withAuth({ authenticated: true }).field({
    type: BreakerTripPage,
    description:
      'The breaker trips of an agent role, newest first; NOT_FOUND for a role the tenant does not have.',
    ...zodField(t, z.object({ role: roleArg, ...pageArgsSchema }), async (_root, args, context) => {
      const found = await requireAgentRole(context, args.role);
      const cursor = args.after ? decodeTripCursor(args.after) : null;
      const rows = await context.prisma.breakerTrip.findMany({
        where: {
          tenantId: context.viewer.tenantId,
          role: found.role,
          ...(cursor
            ? {
                OR: [
                  { trippedAt: { lt: cursor.createdAt } },
                  { trippedAt: cursor.createdAt, id: { lt: cursor.id } },
                ],
              }
            : {}),
        },
        orderBy: [{ trippedAt: 'desc' }, { id: 'desc' }],
        take: args.first + 1,
        select: tripColumns,
      });
      const page = toPage(
        rows.map((row) => ({ ...row, createdAt: row.trippedAt })),
        args.first,
      );
      return page;
    }),
  }),
);
