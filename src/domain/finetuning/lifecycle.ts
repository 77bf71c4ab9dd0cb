/** Where a fine-tuned model comes from. */
export const MODEL_PROVIDERS = [
  'openai',
  'anthropic',
  'google',
  'mistral',
  'together',
  'fireworks',
  'self_hosted',
] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

export const DEPLOYMENT_STATUSES = [
  'training',
  'ready',
  'canary',
  'production',
  'archived',
  'retired',
  'failed',
] as const;
export type DeploymentStatus = (typeof DEPLOYMENT_STATUSES)[number];

/** Statuses a version may be promoted from (to canary or to production). */
export const PROMOTABLE_STATUSES: readonly DeploymentStatus[] = ['ready', 'canary', 'archived'];

export const CANARY_MIN_PCT = 1;
export const CANARY_MAX_PCT = 99;

export interface VersionState {
  id: string;
  versionNumber: number;
  status: DeploymentStatus;
  canaryTrafficPct: number | null;
}

/** One recorded status change of a version of the same base model. */
export interface HistoryEntry {
  modelVersionId: string;
  toStatus: DeploymentStatus;
  at: Date;
}

export interface Transition {
  versionId: string;
  from: DeploymentStatus;
  to: DeploymentStatus;
  canaryTrafficPct: number | null;
}

export type Plan = { ok: true; transitions: Transition[]; result: string } | { ok: false; reason: string };

const refuse = (reason: string): Plan => ({ ok: false, reason });

/**
 * Promotion of one version: to canary with a traffic share (another canary of the same base model returns
 * to `ready`, so at most one canary runs), or to production (the production it replaces is `archived`).
 */
export function planPromotion(
  versions: readonly VersionState[],
  targetId: string,
  canaryTrafficPct: number | null,
): Plan {
  const target = versions.find((version) => version.id === targetId);
  if (!target) return refuse(`Model version ${targetId} not found`);
  if (!PROMOTABLE_STATUSES.includes(target.status)) {
    return refuse(
      `Version ${target.versionNumber} is ${target.status}; only ${PROMOTABLE_STATUSES.join(', ')} versions can be promoted`,
    );
  }
  if (canaryTrafficPct !== null) {
    const others = versions.filter((version) => version.status === 'canary' && version.id !== target.id);
    return {
      ok: true,
      result: target.id,
      transitions: [
        ...others.map((other) => ({
          versionId: other.id,
          from: other.status,
          to: 'ready' as const,
          canaryTrafficPct: null,
        })),
        { versionId: target.id, from: target.status, to: 'canary', canaryTrafficPct },
      ],
    };
  }
  const current = versions.filter((version) => version.status === 'production');
  return {
    ok: true,
    result: target.id,
    transitions: [
      ...current.map((old) => ({
        versionId: old.id,
        from: old.status,
        to: 'archived' as const,
        canaryTrafficPct: null,
      })),
      { versionId: target.id, from: target.status, to: 'production', canaryTrafficPct: null },
    ],
  };
}

/**
 * The version that was production before the current one: walking back through the times versions
 * entered production, the first one that is still `archived` (a retired version was rolled back and is
 * never restored; the current production is skipped).
 */
export function previousProduction(
  versions: readonly VersionState[],
  history: readonly HistoryEntry[],
): VersionState | undefined {
  const byId = new Map(versions.map((version) => [version.id, version]));
  const entries = history
    .filter((entry) => entry.toStatus === 'production')
    .sort((a, b) => b.at.getTime() - a.at.getTime());
  for (const entry of entries) {
    const version = byId.get(entry.modelVersionId);
    if (version?.status === 'archived') return version;
  }
  return undefined;
}

/** Rollback: the current production is retired and the version that was production before it restored. */
export function planRollback(versions: readonly VersionState[], history: readonly HistoryEntry[]): Plan {
  const current = versions.find((version) => version.status === 'production');
  if (!current) return refuse('No production version to roll back');
  const previous = previousProduction(versions, history);
  if (!previous)
    return refuse(`No previous production version to restore before version ${current.versionNumber}`);
  return {
    ok: true,
    result: previous.id,
    transitions: [
      { versionId: current.id, from: 'production', to: 'retired', canaryTrafficPct: null },
      { versionId: previous.id, from: 'archived', to: 'production', canaryTrafficPct: null },
    ],
  };
}

/** Statuses after a plan is applied; used to check that exactly one production remains. */
export function applyTransitions(
  versions: readonly VersionState[],
  transitions: readonly Transition[],
): VersionState[] {
  const next = new Map(versions.map((version) => [version.id, { ...version }]));
  for (const transition of transitions) {
    const version = next.get(transition.versionId);
    if (version) {
      version.status = transition.to;
      version.canaryTrafficPct = transition.canaryTrafficPct;
    }
  }
  return [...next.values()];
}

/**
 * Timestamps for the history rows of one change, strictly after the line's latest entry: the history's
 * order decides rollbacks, and serialized changes can share a millisecond or start before the previous
 * one commits.
 */
export function historyTimestamps(latest: Date | null, count: number, now: Date = new Date()): Date[] {
  let next = Math.max(now.getTime(), (latest?.getTime() ?? 0) + 1);
  return Array.from({ length: count }, () => new Date(next++));
}
