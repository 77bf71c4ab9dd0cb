import { describe, expect, it } from 'vitest';
import {
  applyTransitions,
  type HistoryEntry,
  historyTimestamps,
  planPromotion,
  planRollback,
  previousProduction,
  type VersionState,
} from '../../../src/domain/finetuning/lifecycle.js';

const version = (
  n: number,
  status: VersionState['status'],
  canaryTrafficPct: number | null = null,
): VersionState => ({
  id: `v${n}`,
  versionNumber: n,
  status,
  canaryTrafficPct,
});
const entered = (n: number, toStatus: HistoryEntry['toStatus'], second: number): HistoryEntry => ({
  modelVersionId: `v${n}`,
  toStatus,
  at: new Date(Date.UTC(2026, 0, 1, 0, 0, second)),
});

describe('planPromotion', () => {
  it('archives the production it replaces', () => {
    const plan = planPromotion([version(1, 'production'), version(2, 'ready')], 'v2', null);
    expect(plan).toEqual({
      ok: true,
      result: 'v2',
      transitions: [
        { versionId: 'v1', from: 'production', to: 'archived', canaryTrafficPct: null },
        { versionId: 'v2', from: 'ready', to: 'production', canaryTrafficPct: null },
      ],
    });
  });

  it('makes the first production without archiving anything', () => {
    const plan = planPromotion([version(1, 'ready')], 'v1', null);
    expect(plan.ok && plan.transitions).toEqual([
      { versionId: 'v1', from: 'ready', to: 'production', canaryTrafficPct: null },
    ]);
  });

  it('puts a version on canary and returns the previous canary to ready, leaving production alone', () => {
    const plan = planPromotion(
      [version(1, 'production'), version(2, 'canary', 10), version(3, 'ready')],
      'v3',
      25,
    );
    expect(plan.ok && plan.transitions).toEqual([
      { versionId: 'v2', from: 'canary', to: 'ready', canaryTrafficPct: null },
      { versionId: 'v3', from: 'ready', to: 'canary', canaryTrafficPct: 25 },
    ]);
  });

  it('changes the traffic share of the current canary', () => {
    const plan = planPromotion([version(1, 'canary', 5)], 'v1', 50);
    expect(plan.ok && plan.transitions).toEqual([
      { versionId: 'v1', from: 'canary', to: 'canary', canaryTrafficPct: 50 },
    ]);
  });

  it('promotes a canary to production and clears its traffic share', () => {
    const plan = planPromotion([version(1, 'production'), version(2, 'canary', 10)], 'v2', null);
    expect(plan.ok && plan.transitions.at(-1)).toEqual({
      versionId: 'v2',
      from: 'canary',
      to: 'production',
      canaryTrafficPct: null,
    });
  });

  it.each(['training', 'failed', 'retired', 'production'] as const)(
    'refuses to promote a %s version',
    (status) => {
      const plan = planPromotion([version(1, status)], 'v1', null);
      expect(plan).toEqual({
        ok: false,
        reason: `Version 1 is ${status}; only ready, canary, archived versions can be promoted`,
      });
    },
  );
});

describe('previousProduction', () => {
  it('is the latest version that entered production before the current one and is still archived', () => {
    const versions = [version(1, 'archived'), version(2, 'archived'), version(3, 'production')];
    const history = [entered(1, 'production', 1), entered(2, 'production', 2), entered(3, 'production', 3)];
    expect(previousProduction(versions, history)?.id).toBe('v2');
  });

  it('skips a retired version and finds the one before it', () => {
    const versions = [version(1, 'archived'), version(2, 'production'), version(3, 'retired')];
    const history = [
      entered(1, 'production', 1),
      entered(2, 'production', 2),
      entered(3, 'production', 3),
      entered(2, 'production', 4),
    ];
    expect(previousProduction(versions, history)?.id).toBe('v1');
  });

  it('ignores versions that never were production', () => {
    const versions = [version(1, 'production'), version(2, 'ready'), version(3, 'canary', 5)];
    expect(previousProduction(versions, [entered(1, 'production', 1)])).toBeUndefined();
  });

  it('follows the history, not the version numbers', () => {
    const versions = [version(1, 'production'), version(2, 'archived'), version(3, 'archived')];
    const history = [entered(3, 'production', 1), entered(2, 'production', 2), entered(1, 'production', 3)];
    expect(previousProduction(versions, history)?.id).toBe('v2');
  });
});

describe('planRollback', () => {
  it('retires the production and restores the previous one', () => {
    const versions = [version(1, 'archived'), version(2, 'production')];
    const plan = planRollback(versions, [entered(1, 'production', 1), entered(2, 'production', 2)]);
    expect(plan).toEqual({
      ok: true,
      result: 'v1',
      transitions: [
        { versionId: 'v2', from: 'production', to: 'retired', canaryTrafficPct: null },
        { versionId: 'v1', from: 'archived', to: 'production', canaryTrafficPct: null },
      ],
    });
  });

  it('refuses when nothing is in production', () => {
    expect(planRollback([version(1, 'ready')], [])).toEqual({
      ok: false,
      reason: 'No production version to roll back',
    });
  });

  it('refuses when the production has no predecessor', () => {
    const plan = planRollback(
      [version(1, 'production'), version(2, 'retired')],
      [entered(1, 'production', 1), entered(2, 'production', 2)],
    );
    expect(plan).toEqual({ ok: false, reason: 'No previous production version to restore before version 1' });
  });
});

describe('applyTransitions', () => {
  it('leaves exactly one production after a promotion', () => {
    const versions = [version(1, 'production'), version(2, 'ready')];
    const plan = planPromotion(versions, 'v2', null);
    const after = plan.ok ? applyTransitions(versions, plan.transitions) : [];
    expect(after.map((state) => state.status)).toEqual(['archived', 'production']);
  });
});

describe('historyTimestamps', () => {
  it('uses the clock when it is past the latest entry', () => {
    const now = new Date('2026-01-01T00:00:10.000Z');
    expect(historyTimestamps(new Date('2026-01-01T00:00:00.000Z'), 2, now)).toEqual([
      new Date('2026-01-01T00:00:10.000Z'),
      new Date('2026-01-01T00:00:10.001Z'),
    ]);
  });

  it('stays strictly after the latest entry when the clock is not', () => {
    const latest = new Date('2026-01-01T00:00:10.000Z');
    expect(historyTimestamps(latest, 1, new Date('2026-01-01T00:00:09.000Z'))).toEqual([
      new Date('2026-01-01T00:00:10.001Z'),
    ]);
  });
});
