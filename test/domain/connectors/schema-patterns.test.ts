import { describe, expect, it } from 'vitest';
import { checkAgainst, compileSchema } from '../../../src/domain/connectors/json-schema.js';
import { checkPattern, findRefusedPatterns } from '../../../src/domain/connectors/schema-patterns.js';

describe('checkPattern', () => {
  it.each(['^[a-z]+$', '^(a+)+$', '\\d{4}-\\d{2}', '^\\u00e9t\\u00e9$', '(?<year>\\d{4})', '\\p{L}+', 'a|b'])(
    'accepts %s',
    (pattern) => {
      expect(checkPattern(pattern)).toBeNull();
    },
  );

  it.each([
    ['(a)\\1', /linear time .*\\1 is a backreference/],
    ['\\k<x>(?<x>a)', /linear time .*\\k is a backreference/],
    ['[\\d](a)\\1', /backreference/],
    ['a(?=b)', /linear time .*unsupported Perl syntax/],
    ['(?<!a)b', /linear time/],
    ['(', /not a valid regular expression/],
    ['\\z', /not a valid regular expression/],
  ])('refuses %s', (pattern, why) => {
    expect(checkPattern(pattern)).toMatch(why);
  });
});

describe('what a pattern matches: ECMAScript’s meaning, on the linear-time engine', () => {
  const matches = (pattern: string, input: string) => {
    const validate = compileSchema({ pattern });
    if (typeof validate === 'string') throw new Error(validate);
    return checkAgainst(validate, input).valid;
  };

  it.each([
    ['^.$', '\r'],
    ['^.$', '\u2028'],
    ['^.$', '😀'],
    ['^\\s$', '\u00a0'],
    ['^\\s$', '\ufeff'],
    ['^[\\s]$', '\u3000'],
    ['^\\S$', '\u00a0'],
    ['^[[:a]$', 'a'],
    ['^[[:a]$', '['],
    ['^[[:a]$', 'b'],
    ['^\\u00e9$', 'é'],
    ['^\\u{1F600}$', '😀'],
    ['^\\d+$', '١٢'],
    ['^\\w+$', 'é'],
    ['a\\.b', 'a.b'],
    ['a\\.b', 'axb'],
    ['^[.]$', 'x'],
    ['^\\\\s$', '\\s'],
  ])('%s against %j as RegExp with the u flag answers', (pattern, input) => {
    expect(matches(pattern, input)).toBe(new RegExp(pattern, 'u').test(input));
  });
});

describe('compileSchema with the linear-time engine', () => {
  it('evaluates each pattern of a schema as its own, matching anywhere as RegExp#test does', () => {
    const validate = compileSchema({
      type: 'object',
      properties: { code: { pattern: '^[A-Z]{3}$' }, note: { pattern: 'ok' } },
      patternProperties: { '^x-': { type: 'string' } },
    });
    if (typeof validate === 'string') throw new Error(validate);
    expect(checkAgainst(validate, { code: 'EUR', note: 'is ok here', 'x-a': 'b' })).toEqual({ valid: true });
    expect(checkAgainst(validate, { code: 'eur', note: 'no', 'x-a': 1 })).toMatchObject({
      valid: false,
      problems: [
        { path: ['code'], keyword: 'pattern' },
        { path: ['note'], keyword: 'pattern' },
        { path: ['x-a'], keyword: 'type' },
      ],
    });
  });

  it('answers ^(a+)+$ against many a’s and a ! (no match), and against a’s alone (a match)', () => {
    const validate = compileSchema({ pattern: '^(a+)+$' });
    if (typeof validate === 'string') throw new Error(validate);
    expect(checkAgainst(validate, `${'a'.repeat(50_000)}!`).valid).toBe(false);
    expect(checkAgainst(validate, 'a'.repeat(50_000)).valid).toBe(true);
  });

  it('refuses to compile a schema holding a pattern the engine cannot evaluate', () => {
    expect(compileSchema({ properties: { a: { pattern: '(x)\\1' } } })).toMatch(
      /cannot be evaluated in linear time/,
    );
  });
});

describe('findRefusedPatterns', () => {
  it('walks subschemas only, and is empty for schemas without refused patterns', () => {
    expect(findRefusedPatterns({ properties: { a: { pattern: '^a+$' } } })).toEqual([]);
    expect(findRefusedPatterns(null)).toEqual([]);
    expect(
      findRefusedPatterns({
        examples: [{ pattern: '(?=x)' }],
        default: { pattern: '(?=x)' },
        dependencies: { a: ['b'], c: { pattern: '(?=c)' } },
        items: { patternProperties: { '(?=k)': {} } },
      }).map((problem) => problem.path),
    ).toEqual([
      ['items', 'patternProperties', '(?=k)'],
      ['dependencies', 'c', 'pattern'],
    ]);
  });
});
