import { recordAudit } from '../../audit.js';
import { Prisma } from '../../generated/prisma/client.js';
import type { Actor } from '../actor.js';
import { Refusal } from '../errors.js';
import { MAX_ATTEMPTS } from './queue.js';
import { normalizeRole } from './roles.js';

/** The breakers, by the name trips, audit entries and events give them. */
export const BREAKER_KINDS = [
  'consecutive_failures',
  'spend',
  'attempts_exceeded',
  'duration_exceeded',
  'repeated_call',
  'delegation_cycle',
] as const;
export type BreakerKind = (typeof BREAKER_KINDS)[number];

/** A role's breakers as they apply: its row's values, or these defaults (docs/breakers.md). */
export interface BreakerPolicy {
  /** Off: none of the role's breakers trips. */
  enabled: boolean;
  /** Failed tasks in a row (no completion between, since the last resume) that trip. */
  consecutiveFailures: number;
  /** The sliding window spend is summed over, minutes. */
  spendWindowMinutes: number;
  /** Spend in the window above this trips; null: no absolute limit. */
  spendLimitUsd: number | null;
  /**
   * Spend in the window above this multiple of the role's trailing rate (the 7 days before the window, scaled
   * to one window) trips; null: off. Applies only when the role has a trailing rate.
   */
  spendMultiple: number | null;
  /** A lease lapsing on this attempt or later trips; null: the task's own limit (MAX_ATTEMPTS). */
  maxAttempts: number | null;
  /** A task running (since its claim) longer than this trips, minutes. */
  maxDurationMinutes: number;
  /** The same connector call (endpoint and arguments) made this many times within one task trips. */
  repeatedCallLimit: number;
  /** A delegation refused as a cycle trips. */
  onDelegationCycle: boolean;
}

export const BREAKER_DEFAULTS: Readonly<BreakerPolicy> = Object.freeze({
  enabled: true,
  consecutiveFailures: 5,
  spendWindowMinutes: 60,
  spendLimitUsd: null,
  spendMultiple: 5,
  maxAttempts: null,
  maxDurationMinutes: 120,
  repeatedCallLimit: 5,
  onDelegationCycle: true,
});

/**
 * The bounds setBreakerPolicy checks: a value outside them is refused with the field and the bound. A
 * function, as queue.ts (MAX_ATTEMPTS) imports the breakers in turn.
 */
export const breakerBounds = () => ({
  consecutiveFailures: { min: 1, max: 1000 },
  spendWindowMinutes: { min: 1, max: 7 * 24 * 60 },
  spendLimitUsd: { min: 0.000001, max: 1_000_000_000 },
  spendMultiple: { min: 1, max: 10_000 },
  maxAttempts: { min: 1, max: MAX_ATTEMPTS },
  maxDurationMinutes: { min: 1, max: 30 * 24 * 60 },
  repeatedCallLimit: { min: 2, max: 10_000 },
});

/** The policy of a role and whether the role has a row of its own, with the role's pause state. */
export interface RolePolicy extends BreakerPolicy {
  custom: boolean;
}

interface PolicyRow {
  enabled: boolean;
  consecutive_failures: number;
  spend_window_minutes: number;
  spend_limit_usd: string | null;
  spend_multiple: string | null;
  max_attempts: number | null;
  max_duration_minutes: number;
  repeated_call_limit: number;
  on_delegation_cycle: boolean;
}

const policyOf = (row: PolicyRow | undefined): RolePolicy =>
  row
    ? {
        custom: true,
        enabled: row.enabled,
        consecutiveFailures: row.consecutive_failures,
        spendWindowMinutes: row.spend_window_minutes,
        spendLimitUsd: row.spend_limit_usd === null ? null : Number(row.spend_limit_usd),
        spendMultiple: row.spend_multiple === null ? null : Number(row.spend_multiple),
        maxAttempts: row.max_attempts,
        maxDurationMinutes: row.max_duration_minutes,
        repeatedCallLimit: row.repeated_call_limit,
        onDelegationCycle: row.on_delegation_cycle,
      }
    : { custom: false, ...BREAKER_DEFAULTS };

const POLICY_COLUMNS = Prisma.sql`enabled, consecutive_failures, spend_window_minutes, spend_limit_usd::text,
  spend_multiple::text, max_attempts, max_duration_minutes, repeated_call_limit, on_delegation_cycle`;

/** The policy that applies to a role: its row, or the defaults. */
export async function readBreakerPolicy(
  db: Prisma.TransactionClient,
  tenantId: string,
  role: string,
): Promise<RolePolicy> {
  const [row] = await db.$queryRaw<PolicyRow[]>`
    SELECT ${POLICY_COLUMNS} FROM breaker_policies WHERE tenant_id = ${tenantId}::uuid AND role = ${role}`;
  return policyOf(row);
}

/** What a breaker check reads first: the role's policy, and whether the role is paused already. */
export async function readRoleForCheck(
  db: Prisma.TransactionClient,
  tenantId: string,
  role: string,
): Promise<(RolePolicy & { paused: boolean; resumedAt: Date | null }) | null> {
  const [row] = await db.$queryRaw<
    (PolicyRow & { role_paused: boolean; role_resumed_at: Date | null; has_policy: boolean })[]
  >`
    SELECT r.paused AS role_paused, r.resumed_at AS role_resumed_at, p.tenant_id IS NOT NULL AS has_policy,
      p.enabled, p.consecutive_failures, p.spend_window_minutes, p.spend_limit_usd::text, p.spend_multiple::text,
      p.max_attempts, p.max_duration_minutes, p.repeated_call_limit, p.on_delegation_cycle
    FROM agent_roles r
    LEFT JOIN breaker_policies p ON p.tenant_id = r.tenant_id AND p.role = r.role
    WHERE r.tenant_id = ${tenantId}::uuid AND r.role = ${role}`;
  if (!row) return null;
  return {
    ...policyOf(row.has_policy ? row : undefined),
    paused: row.role_paused,
    resumedAt: row.role_resumed_at,
  };
}

/** A change of a role's policy: an omitted field keeps its value (or default); null clears a nullable one. */
export type BreakerPolicyChange = { [Key in keyof BreakerPolicy]?: BreakerPolicy[Key] | undefined };

/** A value out of its bounds: BAD_USER_INPUT with the field, the bound and reason `out_of_range`. */
function checkBounds(change: BreakerPolicyChange) {
  for (const [field, bounds] of Object.entries(breakerBounds())) {
    const value = change[field as keyof ReturnType<typeof breakerBounds>];
    if (value === null || value === undefined) continue;
    if (value < bounds.min || value > bounds.max || !Number.isFinite(value)) {
      throw new Refusal(
        'BAD_USER_INPUT',
        `${field} must be between ${bounds.min} and ${bounds.max}; it was ${value}`,
        {
          reason: 'out_of_range',
          facts: {
            field,
            min: bounds.min,
            max: bounds.max,
            detail: [
              {
                type: 'out_of_range',
                loc: ['input', field],
                msg: `${field} must be between ${bounds.min} and ${bounds.max}`,
                input: value,
              },
            ],
          },
        },
      );
    }
  }
}

/**
 * Sets a role's breaker policy (the chairman): the fields given change, the others keep their values (the
 * defaults for a role without a row). Refused, and nothing written, for a role the tenant does not have
 * (NOT_FOUND, `unknown_role`) or a value out of bounds (BAD_USER_INPUT, `out_of_range`). Audited as
 * `breaker_policy.set` with the policy before and after.
 */
export async function setBreakerPolicy(
  context: Actor,
  rawRole: string,
  change: BreakerPolicyChange,
): Promise<RolePolicy & { role: string }> {
  checkBounds(change);
  const role = normalizeRole(rawRole);
  const { tenantId, sub } = context.viewer;
  return context.prisma.$transaction(async (tx) => {
    const [known] = await tx.$queryRaw<{ role: string }[]>`
      SELECT role FROM agent_roles WHERE tenant_id = ${tenantId}::uuid AND role = ${role} FOR SHARE`;
    if (!known) {
      throw new Refusal('NOT_FOUND', `Unknown agent role '${role}'`, {
        reason: 'unknown_role',
        facts: { role },
      });
    }
    const before = await readBreakerPolicy(tx, tenantId, role);
    const { custom: _custom, ...current } = before;
    const defined = Object.fromEntries(
      Object.entries(change).filter(([, value]) => value !== undefined),
    ) as Partial<BreakerPolicy>;
    const next: BreakerPolicy = { ...current, ...defined };
    const values = {
      enabled: next.enabled,
      consecutiveFailures: next.consecutiveFailures,
      spendWindowMinutes: next.spendWindowMinutes,
      spendLimitUsd: next.spendLimitUsd === null ? null : new Prisma.Decimal(next.spendLimitUsd.toFixed(6)),
      spendMultiple: next.spendMultiple === null ? null : new Prisma.Decimal(next.spendMultiple.toFixed(3)),
      maxAttempts: next.maxAttempts,
      maxDurationMinutes: next.maxDurationMinutes,
      repeatedCallLimit: next.repeatedCallLimit,
      onDelegationCycle: next.onDelegationCycle,
      updatedBy: sub,
    };
    await tx.breakerPolicy.upsert({
      where: { tenantId_role: { tenantId, role } },
      create: { tenantId, role, ...values },
      update: values,
    });
    const after = await readBreakerPolicy(tx, tenantId, role);
    await recordAudit(tx, context, {
      action: 'breaker_policy.set',
      targetType: 'agent_role',
      targetId: role,
      outcome: 'set',
      details: { before: current, after: { ...next } },
    });
    return { role, ...after };
  });
}
