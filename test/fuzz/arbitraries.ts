import fc from 'fast-check';

/** JSON text sent verbatim: numbers JSON.stringify cannot write (-0, 1e400) and whole malformed bodies. */
export class RawJson {
  constructor(readonly text: string) {}
  [fc.toStringMethod](): string {
    const text = this.text.length > 120 ? `${this.text.slice(0, 60)}…(${this.text.length} chars)` : this.text;
    return `raw(${JSON.stringify(text)})`;
  }
}

/** Serializes a generated value, writing RawJson parts as they are. */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value).map(
      ([key, member]) => `${JSON.stringify(key)}:${toJsonText(member)}`,
    );
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** Characters that trip up parsers, databases, logs and people. */
const ODD_CHARACTERS = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\u202e', // right-to-left override
  '\u200f', // right-to-left mark
  '\u200b', // zero-width space
  '\u200d', // zero-width joiner
  '\ufeff', // byte order mark
  '\u2028',
  '\u0301', // combining accent
  '\u00a0',
  '\u0085',
  '\u007f',
  '\u001b',
  '\t',
  '\r\n',
  '"',
  "'",
  '\\',
  '%',
  '%00',
  '../',
  '😀',
  '🏳️‍🌈',
  '𝕏',
  'ﷺ',
  '<script>',
  '$' + '{x}',
  '{{x}}',
];

const SUSPICIOUS_STRINGS = [
  '',
  ' ',
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '1e308',
  '1e400',
  '9007199254740993',
  '2147483648',
  'null',
  'undefined',
  'true',
  '[]',
  '{}',
  '0x10',
  'ceo',
  'CEO',
  '00000000-0000-0000-0000-000000000000',
  'x'.repeat(4097),
  'y'.repeat(100_000),
];

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...SUSPICIOUS_STRINGS),
  fc.string({ maxLength: 12 }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom(...ODD_CHARACTERS),
        fc.string({ maxLength: 4 }),
        fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)),
      ),
      { maxLength: 12 },
    )
    .map((parts) => parts.join('')),
);

const EDGE_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 32,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER,
  1e308,
  -1e308,
  Number.MIN_VALUE,
  1e-7,
];

/** Number tokens JSON.stringify cannot produce: they parse to -0, ±Infinity, 0 or a rounded value. */
const RAW_NUMBERS = [
  '-0',
  '-0.0',
  '1e400',
  '-1e400',
  '1E+308',
  '1e-400',
  '123456789012345678901234567890',
  '0.1e1',
];

export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...EDGE_NUMBERS),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(...RAW_NUMBERS).map((text) => new RawJson(text)),
);

/** Nesting from modest to deep enough to overflow naive recursion (10k and more). */
export const deepJson: fc.Arbitrary<RawJson> = fc
  .tuple(fc.oneof(fc.integer({ min: 2, max: 200 }), fc.constantFrom(10_000, 50_000)), fc.boolean())
  .map(
    ([depth, arrays]) =>
      new RawJson(
        arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
      ),
  );

const hostileKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'toString', 'extra', ''),
  hostileString,
);

const hostileScalar: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  fc.boolean(),
  fc.constant(null),
);

/** Any JSON value a careless or hostile client might send in place of another. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileScalar },
  { weight: 1, arbitrary: fc.constantFrom('list', 'object').map((kind) => (kind === 'list' ? [] : {})) },
  { weight: 1, arbitrary: fc.array(hostileScalar, { maxLength: 4 }) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 101, max: 1100 }).map((length) => Array.from({ length }, () => ({}))),
  },
  { weight: 1, arbitrary: fc.dictionary(hostileKey, hostileScalar, { maxKeys: 3 }) },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Whole bodies that are not the expected object at all. */
export const hostileBody: fc.Arbitrary<unknown> = fc.oneof(
  hostileValue,
  fc
    .constantFrom(
      '',
      'null',
      '{',
      '{"a":1}trailing',
      '\ufeff{}',
      '{"message":"a","message":5}',
      `{"n":${'9'.repeat(400)}}`,
      '[{}]',
      'NaN',
    )
    .map((text) => new RawJson(text)),
);

type Path = (string | number)[];

function pathsOf(value: unknown, prefix: Path = []): Path[] {
  const paths: Path[] = [prefix];
  if (value instanceof RawJson || value === null || typeof value !== 'object') return paths;
  for (const [key, member] of Object.entries(value)) {
    paths.push(...pathsOf(member, [...prefix, Array.isArray(value) ? Number(key) : key]));
  }
  return paths;
}

/** A deep copy that keeps RawJson parts (generated values are shared between runs and must not change). */
function copy(value: unknown): unknown {
  if (value instanceof RawJson || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copy);
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, copy(member)]));
}

function at(root: unknown, path: Path): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<string | number, unknown>)?.[key], root);
}

/** Replaces the value at `path` (the root when empty) and returns the new root. */
function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const parent = at(root, path.slice(0, -1)) as Record<string | number, unknown>;
  Object.defineProperty(parent, path[path.length - 1] as string | number, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return root;
}

function deleteAt(root: unknown, path: Path): unknown {
  if (path.length === 0) return undefined;
  const parent = at(root, path.slice(0, -1));
  const key = path[path.length - 1] as string | number;
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else delete (parent as Record<string, unknown>)[key as string];
  return root;
}

const MUTATIONS = [
  'odd-character',
  'odd-character',
  'replace',
  'replace',
  'replace',
  'delete',
  'extra',
  'wrap-in-array',
  'to-array',
  'stringify',
] as const;
type Mutation = (typeof MUTATIONS)[number];

function mutate(
  root: unknown,
  [pick, kind, generated, key, character]: [number, Mutation, unknown, string, string],
): unknown {
  const value = copy(generated);
  const paths = pathsOf(root);
  const path = paths[pick % paths.length] as Path;
  const current = at(root, path);
  switch (kind) {
    case 'odd-character': {
      // The same value with one odd character in it: still valid in every other way.
      const text = typeof current === 'string' ? current : '';
      const at = pick % (text.length + 1);
      return setAt(root, path, `${text.slice(0, at)}${character}${text.slice(at)}`);
    }
    case 'replace':
      return setAt(root, path, value);
    case 'delete':
      return deleteAt(root, path);
    case 'extra':
      if (current !== null && typeof current === 'object' && !(current instanceof RawJson)) {
        if (Array.isArray(current)) current.push(value);
        // defineProperty, so that a key named __proto__ becomes a member instead of the prototype
        else
          Object.defineProperty(current, key, {
            value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
      }
      return root;
    case 'wrap-in-array':
      return setAt(root, path, [current]);
    case 'to-array':
      return setAt(
        root,
        path,
        current !== null && typeof current === 'object' ? Object.values(current) : [current],
      );
    case 'stringify':
      return setAt(root, path, toJsonText(current));
  }
}

/** A valid-looking value damaged in one to three places: wrong types, missing and extra fields, odd values. */
export function damaged(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const change = fc.tuple(
    fc.nat(),
    fc.constantFrom(...MUTATIONS),
    hostileValue,
    hostileKey,
    fc.constantFrom(...ODD_CHARACTERS),
  );
  return fc
    .tuple(valid, fc.array(change, { minLength: 1, maxLength: 3 }))
    .map(([value, changes]) => changes.reduce(mutate, copy(value)));
}

/** Mostly damaged versions of `valid`, sometimes `valid` itself or something else entirely. */
export function bodies(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 1, arbitrary: valid },
    { weight: 6, arbitrary: damaged(valid) },
    { weight: 1, arbitrary: hostileBody.map((body) => copy(body)) },
  );
}

/** Path segment text as a client could put it on the wire: percent-encoded, or broken. */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  hostileString.map((text) => encodeURIComponent(text.replace(LONE_SURROGATE, '\ufffd')) || 'x'),
  fc.constantFrom('.', '..', '%2e%2e', '%2F', 'a;b', 'a%20b', '%C3%A9', '%E2%80%AE', 'x'.repeat(300)),
  fc.constantFrom('%00', 'a%00b'),
  // Invalid UTF-8 (an encoded lone surrogate, an overlong NUL) is broken encoding as much as a cut-off escape.
  fc.constantFrom('%', '%E0%A4%A', '%zz', '%C3', '%FF%FE', 'a%', '%%', '%ED%A0%80', '%C0%80'),
);

/** Pagination cursors: junk, plausible and forged (a valid time with a non-uuid id). */
export const hostileCursor: fc.Arbitrary<string> = fc.oneof(
  hostileString,
  fc.string({ maxLength: 40 }).map((text) => Buffer.from(text).toString('base64url')),
  fc.constantFrom(
    '',
    '=',
    '|',
    Buffer.from('|').toString('base64url'),
    Buffer.from('not-a-date|x').toString('base64url'),
  ),
  fc
    .tuple(
      fc.date({ noInvalidDate: true }),
      hostileString.filter((id) => id.length > 0 && !id.includes('|')),
    )
    .map(([date, id]) => Buffer.from(`${date.toISOString()}|${id}`).toString('base64url')),
);
