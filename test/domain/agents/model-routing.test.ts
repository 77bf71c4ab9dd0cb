import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canaryPoint,
  chooseModelVersion,
  type LiveVersion,
} from '../../../src/domain/agents/model-routing.js';

const production: LiveVersion = { id: 'prod', status: 'production', canaryTrafficPct: null };
const canaryAt = (pct: number): LiveVersion => ({ id: 'canary', status: 'canary', canaryTrafficPct: pct });
const subjects = Array.from({ length: 10_000 }, (_, index) => `thread-${index}`);

describe('canaryPoint', () => {
  it('is the first 52 bits of SHA-256 of "<canary id>:<subject>" over 2^52', () => {
    const digest = createHash('sha256').update('v-1:thread-7').digest('hex');
    expect(canaryPoint('v-1', 'thread-7')).toBe(Number.parseInt(digest.slice(0, 13), 16) / 2 ** 52);
  });

  it('samples a different set of threads for each canary', () => {
    const a = subjects.filter((subject) => canaryPoint('canary-a', subject) < 0.1);
    const b = new Set(subjects.filter((subject) => canaryPoint('canary-b', subject) < 0.1));
    expect(a.filter((subject) => b.has(subject)).length).toBeLessThan(a.length / 2);
  });
});

describe('chooseModelVersion', () => {
  it('routes nothing for a role bound to no base model', () => {
    expect(chooseModelVersion({ baseModel: null, live: [production], kept: null, subject: 's' })).toEqual({
      choice: 'unbound',
      baseModel: null,
      modelVersionId: null,
      sticky: false,
    });
  });

  it('routes nothing, not even to a canary, when the base model has no production version', () => {
    expect(
      chooseModelVersion({ baseModel: 'm', live: [canaryAt(99)], kept: 'canary', subject: 's' }),
    ).toEqual({
      choice: 'no_production',
      baseModel: 'm',
      modelVersionId: null,
      sticky: false,
    });
  });

  it('sends canary_traffic_pct % of threads to the canary (10,000 fixed thread ids)', () => {
    for (const pct of [1, 10, 50, 99]) {
      const toCanary = subjects.filter(
        (subject) =>
          chooseModelVersion({ baseModel: 'm', live: [production, canaryAt(pct)], kept: null, subject })
            .modelVersionId === 'canary',
      ).length;
      // Binomial standard deviation at 10,000 draws is at most 50 (0.5 %); 4 of them either side.
      expect(Math.abs(toCanary - pct * 100)).toBeLessThan(200);
    }
  });

  it('only adds threads to the canary when its share grows', () => {
    const at = (pct: number) =>
      new Set(
        subjects.filter(
          (subject) =>
            chooseModelVersion({ baseModel: 'm', live: [production, canaryAt(pct)], kept: null, subject })
              .modelVersionId === 'canary',
        ),
      );
    const small = at(10);
    const large = at(30);
    expect([...small].every((subject) => large.has(subject))).toBe(true);
  });

  it('keeps the version the thread had while it is production or canary', () => {
    const live = [production, canaryAt(1)];
    expect(chooseModelVersion({ baseModel: 'm', live, kept: 'canary', subject: 's' })).toMatchObject({
      choice: 'canary',
      sticky: true,
    });
    expect(
      chooseModelVersion({ baseModel: 'm', live: [production, canaryAt(99)], kept: 'prod', subject: 's' }),
    ).toMatchObject({ choice: 'production', modelVersionId: 'prod', sticky: true });
  });

  it('chooses afresh when the thread’s version left production and canary', () => {
    expect(
      chooseModelVersion({ baseModel: 'm', live: [production], kept: 'archived-version', subject: 's' }),
    ).toEqual({ choice: 'production', baseModel: 'm', modelVersionId: 'prod', sticky: false });
  });
});
