import { describe, expect, it } from 'vitest';
import { BufferPool } from '../../src/http/buffer-pool.js';

const MiB = 1024 * 1024;

describe('BufferPool', () => {
  it('lends a kept buffer that is large enough, else a new one of whole MiBs', () => {
    const pool = new BufferPool({ minBytes: MiB, maxBytes: 16 * MiB, buffers: 2 });
    const first = pool.take(3 * MiB - 1) as ArrayBuffer;
    expect(first.byteLength).toBe(3 * MiB);
    pool.give(first);

    expect(pool.take(2 * MiB)).toBe(first);
    expect(pool.take(2 * MiB)).not.toBe(first);
  });

  it('serves nothing outside its range and keeps nothing it did not lend, nor a buffer twice', () => {
    const pool = new BufferPool({ minBytes: MiB, maxBytes: 4 * MiB, buffers: 2 });
    expect(pool.take(MiB - 1)).toBeUndefined();
    expect(pool.take(4 * MiB + 1)).toBeUndefined();

    pool.give(new ArrayBuffer(2 * MiB));
    const lent = pool.take(MiB) as ArrayBuffer;
    pool.give(lent);
    pool.give(lent);

    expect(pool.keptBytes()).toBe(MiB);
  });

  it('keeps the larger buffers when full: small requests first do not shut out the large ones', () => {
    const pool = new BufferPool({ minBytes: 0, maxBytes: 16 * MiB, buffers: 1 });
    const small = pool.take(1) as ArrayBuffer;
    pool.give(small);
    // The kept buffer is too small for this one, so a new one is lent; it is kept in place of the small.
    const large = pool.take(5 * MiB) as ArrayBuffer;
    pool.give(large);

    expect(pool.keptBytes()).toBe(5 * MiB);
    expect(pool.take(4 * MiB)).toBe(large);

    // A smaller buffer given back to a full pool does not take a larger one's place.
    const other = pool.take(MiB) as ArrayBuffer;
    expect(other).not.toBe(large);
    pool.give(large);
    pool.give(other);
    expect(pool.keptBytes()).toBe(5 * MiB);
    expect(pool.take(MiB)).toBe(large);
  });
});
