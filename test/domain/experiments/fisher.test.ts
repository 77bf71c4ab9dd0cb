import { describe, expect, it } from 'vitest';
import { fisherExactPValue } from '../../../src/domain/experiments/fisher.js';
import { counts, expectClose, reference } from './reference.js';

const label = (c: (typeof reference.fisherExact)[number]) =>
  `${c.control.successes}/${c.control.observations} against ${c.treatment.successes}/${c.treatment.observations}`;

describe('fisherExactPValue against SciPy', () => {
  it.each(reference.fisherExact.map((c) => [label(c), c] as const))(
    'matches the two-sided p-value for %s',
    (_name, c) => {
      expectClose(fisherExactPValue(c.control, c.treatment), c.pValue);
    },
  );
});

describe('fisherExactPValue', () => {
  it('is 1 for identical variants', () => {
    expect(fisherExactPValue(counts(20, 10), counts(20, 10))).toBe(1);
  });

  it('does not depend on which variant is the control', () => {
    expect(fisherExactPValue(counts(20, 0), counts(20, 5))).toBe(
      fisherExactPValue(counts(20, 5), counts(20, 0)),
    );
  });

  it('is null when the table has an empty margin', () => {
    expect(fisherExactPValue(counts(20, 0), counts(10, 0))).toBeNull();
    expect(fisherExactPValue(counts(0, 0), counts(10, 3))).toBeNull();
  });
});
