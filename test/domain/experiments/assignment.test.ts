import { describe, expect, it } from 'vitest';
import {
  assignmentPoint,
  assignVariant,
  sampleRatioMismatch,
} from '../../../src/domain/experiments/index.js';
import { reference } from './reference.js';

const oneToThree = [
  { id: 'control', weight: 1 },
  { id: 'treatment', weight: 3 },
];

function countAssignments(
  testId: string,
  subjects: number,
  variants: typeof oneToThree,
): Map<string, number> {
  const tally = new Map<string, number>();
  for (let i = 0; i < subjects; i++) {
    const id = assignVariant(testId, `subject-${i}`, variants);
    tally.set(id, (tally.get(id) ?? 0) + 1);
  }
  return tally;
}

describe('assignmentPoint', () => {
  it.each(reference.assignment)('matches the reference point for "$subjectId" in $testId', (c) => {
    expect(assignmentPoint(c.testId, c.subjectId)).toBe(c.point);
  });

  it('lies in [0, 1)', () => {
    for (let i = 0; i < 1000; i++) {
      const point = assignmentPoint('t', String(i));
      expect(point >= 0 && point < 1).toBe(true);
    }
  });
});

describe('assignVariant', () => {
  it.each(reference.assignment)('matches the reference variant for "$subjectId" in $testId', (c) => {
    expect(assignVariant(c.testId, c.subjectId, c.variants)).toBe(c.variantId);
  });

  it('gives the same subject the same variant on every call', () => {
    const first = Array.from({ length: 200 }, (_, i) => assignVariant('sticky', `s${i}`, oneToThree));
    const second = Array.from({ length: 200 }, (_, i) => assignVariant('sticky', `s${i}`, oneToThree));
    expect(second).toEqual(first);
  });

  it('splits 20,000 subjects 1:3 within one percentage point', () => {
    const tally = countAssignments('split-check', 20_000, oneToThree);
    expect(Math.abs((tally.get('control') ?? 0) / 20_000 - 0.25)).toBeLessThan(0.01);
  });

  it('produces a 1:3 split that passes the sample-ratio-mismatch check', () => {
    const tally = countAssignments('split-check', 20_000, oneToThree);
    const observed = oneToThree.map((v) => tally.get(v.id) ?? 0);
    expect(sampleRatioMismatch(observed, [1, 3]).mismatch).toBe(false);
  });

  it('treats weights as relative', () => {
    const fractions = oneToThree.map((v) => ({ ...v, weight: v.weight / 4 }));
    const ids = Array.from({ length: 200 }, (_, i) => `s${i}`);
    expect(ids.map((s) => assignVariant('t', s, fractions))).toEqual(
      ids.map((s) => assignVariant('t', s, oneToThree)),
    );
  });

  it('depends on the test id', () => {
    const ids = Array.from({ length: 200 }, (_, i) => `s${i}`);
    const even = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 1 },
    ];
    expect(ids.map((s) => assignVariant('t1', s, even))).not.toEqual(
      ids.map((s) => assignVariant('t2', s, even)),
    );
  });

  it('always picks the only variant', () => {
    expect(assignVariant('t', 'anyone', [{ id: 'solo', weight: 7 }])).toBe('solo');
  });

  it('rejects an empty variant list', () => {
    expect(() => assignVariant('t', 's', [])).toThrow(RangeError);
  });

  it('rejects a weight that is not positive', () => {
    expect(() =>
      assignVariant('t', 's', [
        { id: 'a', weight: 1 },
        { id: 'b', weight: 0 },
      ]),
    ).toThrow(RangeError);
  });
});

describe('assignVariant with extreme weights', () => {
  const subjects = Array.from({ length: 2000 }, (_, index) => `subject-${index}`);
  const split = (weights: number[]) => {
    const variants = weights.map((weight, index) => ({ id: `v${index}`, weight }));
    const counts = new Map<string, number>();
    for (const subject of subjects) {
      const id = assignVariant('test-extreme', subject, variants);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return variants.map(({ id }) => counts.get(id) ?? 0);
  };

  it('splits huge equal weights as it splits equal ones', () => {
    expect(split([1e308, 1e308])).toEqual(split([1, 1]));
  });

  it('splits tiny equal weights as it splits equal ones', () => {
    expect(split([1e-300, 1e-300, 1e-300])).toEqual(split([1, 1, 1]));
  });
});
