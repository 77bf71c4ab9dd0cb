import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BlobStore, isSha256Hex } from '../../../src/domain/agents/blob-store.js';
import { createBlobStore } from '../../../src/infra/blob-store.js';
import { PDF, PNG } from './attachment-samples.js';

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

let root: string;
let store: BlobStore;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'blob-store-'));
  store = createBlobStore(root);
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}

describe('createBlobStore', () => {
  it('stores content under <root>/<sha[0..2]>/<sha[2..4]>/<sha>', async () => {
    const digest = sha256(PNG);

    const stored = await store.put(PNG);

    expect(stored).toEqual({
      sha256: digest,
      path: join(root, digest.slice(0, 2), digest.slice(2, 4), digest),
      size: PNG.length,
    });
    expect((await readFile(stored.path)).equals(PNG)).toBe(true);
  });

  it('stores bytes under the digest their caller gives, without computing it again', async () => {
    // Another content's digest shows which one names the file: the caller's, as for a received file.
    const given = sha256(PDF);

    const stored = await store.put(PNG, given.toUpperCase());

    expect(stored).toEqual({
      sha256: given,
      path: join(root, given.slice(0, 2), given.slice(2, 4), given),
      size: PNG.length,
    });
    expect((await readFile(stored.path)).equals(PNG)).toBe(true);
  });

  it('refuses a given digest that is not 64 hexadecimal characters', async () => {
    await expect(store.put(PNG, '../../etc')).rejects.toThrow(TypeError);
    expect(await filesUnder(root)).toEqual([]);
  });

  it('returns the stored bytes from get', async () => {
    const { sha256: digest } = await store.put(PDF);

    expect((await store.get(digest))?.equals(PDF)).toBe(true);
  });

  it('reports stored content through has', async () => {
    const { sha256: digest } = await store.put(PNG);

    expect(await store.has(digest)).toBe(true);
  });

  it.each([
    { method: 'get', expected: null },
    { method: 'has', expected: false },
  ] as const)('answers $expected from $method for content never stored', async ({ method, expected }) => {
    expect(await store[method](sha256(Buffer.from('never stored')))).toBe(expected);
  });

  it('accepts an upper-case digest', async () => {
    const { sha256: digest } = await store.put(PNG);

    expect((await store.get(digest.toUpperCase()))?.equals(PNG)).toBe(true);
  });

  it('accepts a Uint8Array that is not a Buffer', async () => {
    const bytes = new Uint8Array(PNG);

    const stored = await store.put(bytes);

    expect(stored.sha256).toBe(sha256(PNG));
    expect((await store.get(stored.sha256))?.equals(PNG)).toBe(true);
  });

  it('creates the root directory when it does not exist yet', async () => {
    const nested = createBlobStore(join(root, 'not', 'yet', 'there'));

    const stored = await nested.put(PNG);

    expect(await nested.has(stored.sha256)).toBe(true);
  });

  it('returns the same result when the same content is stored twice', async () => {
    const first = await store.put(PNG);
    const second = await store.put(Buffer.from(PNG));

    expect(second).toEqual(first);
  });

  it('keeps a single file when the same content is stored twice', async () => {
    await store.put(PNG);
    await store.put(PNG);

    expect(await filesUnder(root)).toHaveLength(1);
  });

  it('leaves the existing file untouched when the same content is stored again', async () => {
    const { path } = await store.put(PNG);
    const before = await stat(path);

    await store.put(PNG);

    expect((await stat(path)).ino).toBe(before.ino);
  });

  it('stores the same content concurrently without leaving anything else behind', async () => {
    const results = await Promise.all(Array.from({ length: 8 }, () => store.put(PDF)));

    expect(new Set(results.map((result) => result.path)).size).toBe(1);
    expect(await filesUnder(root)).toEqual([
      relative(root, results[0]?.path ?? '')
        .split(sep)
        .join('/'),
    ]);
  });

  it('rewrites a blob whose file has the wrong size', async () => {
    const { path } = await store.put(PNG);
    await writeFile(path, PNG.subarray(0, 10));

    await store.put(PNG);

    expect((await readFile(path)).equals(PNG)).toBe(true);
  });

  it('leaves only the final file behind after a write', async () => {
    const { sha256: digest } = await store.put(PNG);

    expect(await filesUnder(root)).toEqual([`${digest.slice(0, 2)}/${digest.slice(2, 4)}/${digest}`]);
  });

  it('removes the temporary file when the final rename fails', async () => {
    const digest = sha256(PNG);
    const blocked = join(root, digest.slice(0, 2), digest.slice(2, 4), digest);
    await mkdir(join(blocked, 'occupied'), { recursive: true });

    await expect(store.put(PNG)).rejects.toThrow();

    expect(await filesUnder(root)).toEqual([]);
  });

  it('does not create a file for an unknown digest that is looked up', async () => {
    await store.get(sha256(Buffer.from('absent')));
    await store.has(sha256(Buffer.from('absent')));

    expect(await readdir(root)).toEqual([]);
  });

  const traversals = [
    '../../../../../../etc/passwd',
    `../${'a'.repeat(61)}`,
    `${'a'.repeat(62)}/.`,
    `/${'a'.repeat(63)}`,
    `${'a'.repeat(63)}\0`,
    `${'a'.repeat(64)}\n`,
    'a'.repeat(63),
    'a'.repeat(65),
    'g'.repeat(64),
    '',
  ];

  it.each(traversals)('refuses the digest %j in get', async (digest) => {
    await expect(store.get(digest)).rejects.toThrow(
      new TypeError('sha256 must be 64 hexadecimal characters'),
    );
  });

  it.each(traversals)('refuses the digest %j in has', async (digest) => {
    await expect(store.has(digest)).rejects.toThrow(
      new TypeError('sha256 must be 64 hexadecimal characters'),
    );
  });

  it.each(traversals)('refuses the digest %j in remove', async (digest) => {
    await expect(store.remove(digest)).rejects.toThrow(
      new TypeError('sha256 must be 64 hexadecimal characters'),
    );
  });

  it('deletes stored content through remove', async () => {
    const { sha256: digest } = await store.put(PNG);

    await store.remove(digest);

    expect(await store.has(digest)).toBe(false);
    expect(await filesUnder(root)).toEqual([]);
  });

  it('leaves other content in place when one blob is removed', async () => {
    const png = await store.put(PNG);
    const pdf = await store.put(PDF);

    await store.remove(png.sha256);

    expect((await store.get(pdf.sha256))?.equals(PDF)).toBe(true);
  });

  it('removes content that was never stored without an error', async () => {
    await expect(store.remove(sha256(Buffer.from('never stored')))).resolves.toBeUndefined();
  });
});

describe('isSha256Hex', () => {
  it.each([
    { value: 'a'.repeat(64), expected: true },
    { value: 'ABCDEF0123456789'.repeat(4), expected: true },
    { value: 'a'.repeat(63), expected: false },
    { value: `${'a'.repeat(64)}\n`, expected: false },
    { value: 'z'.repeat(64), expected: false },
  ])('answers $expected for $value', ({ value, expected }) => {
    expect(isSha256Hex(value)).toBe(expected);
  });
});
