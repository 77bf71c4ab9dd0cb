import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bodyText, MIN_LIFTED_STRING_BYTES, parseJsonBody } from '../../src/http/json-body.js';

const LONG = MIN_LIFTED_STRING_BYTES;
const utf8 = (text: string) => new TextEncoder().encode(text);

/** What JSON.parse makes of the body's text: its value, or its error's message. */
function reference(bytes: Uint8Array): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(bodyText(bytes)) };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

function outcome(bytes: Uint8Array): { value: unknown } | { error: string } {
  try {
    return { value: parseJsonBody(bytes) };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

const expectSameAsJsonParse = (bytes: Uint8Array) => expect(outcome(bytes)).toStrictEqual(reference(bytes));

/**
 * The exhaustive checks below parse thousands of 64 KiB bodies twice each: seconds of CPU and nothing
 * awaited, so their deadline is the work's, not a wait's (two such files on a busy 2-core machine).
 */
const CPU_BOUND_MS = 120_000;

const base64 = Buffer.from(`%PDF-1.4\n${'x'.repeat(LONG)}`).toString('base64');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('parseJsonBody', () => {
  it('reads a chat body with a long base64 attachment without parsing the attachment', () => {
    const body = utf8(
      JSON.stringify({ message: 'hi', attachments: [{ data: base64, mime_type: 'application/pdf' }] }),
    );
    const parse = vi.spyOn(JSON, 'parse');

    const value = parseJsonBody(body);

    expect(value).toStrictEqual(JSON.parse(bodyText(body)));
    // The first call is this module's: it saw the body without the attachment.
    expect(String(parse.mock.calls[0]?.[0]).length).toBeLessThan(200);
  });

  it('finds a long string after escaped quotes and backslashes', () => {
    const body = utf8(`["\\"", "\\\\", "${'a'.repeat(LONG)}"]`);
    const parse = vi.spyOn(JSON, 'parse');

    expect(parseJsonBody(body)).toStrictEqual(['"', '\\', 'a'.repeat(LONG)]);
    expect(String(parse.mock.calls[0]?.[0]).length).toBeLessThan(200);
  });

  it.each([
    ['a long string as the whole body', `"${'a'.repeat(LONG)}"`],
    ['a long key', `{"${'k'.repeat(LONG)}": 1, "b": "${'v'.repeat(LONG)}"}`],
    ['a long key before whitespace', `{"${'k'.repeat(LONG)}" \r\n\t : "${'v'.repeat(LONG)}"}`],
    ['an escaped quote inside', `["${'a'.repeat(LONG)}\\"${'b'.repeat(LONG)}"]`],
    ['escaped solidi (as some encoders write base64)', `{"data": "${base64.replaceAll('/', '\\/')}"}`],
    ['an escaped backslash at the end', `["${'a'.repeat(LONG)}\\\\", 1]`],
    ['an escape in a short string before it', `["\\u0041", "${'a'.repeat(LONG)}", "\\n"]`],
    ['non-ASCII inside', `["${'é'.repeat(LONG)}", "${'a'.repeat(LONG)}"]`],
    ['a byte order mark before the body', `\uFEFF{"a": "${'a'.repeat(LONG)}"}`],
    [
      'several long strings',
      `[${Array.from({ length: 5 }, (_, i) => `"${String(i).repeat(LONG)}"`).join(',')}]`,
    ],
    [
      '`__proto__` holding a long string',
      `{"__proto__": "${'p'.repeat(LONG)}", "x": {"__proto__": ["${'q'.repeat(LONG)}"]}}`,
    ],
    ['a client string that reads as a placeholder', `["\uE000lifted-string:0", "${'a'.repeat(LONG)}"]`],
    ['an escaped placeholder', `["\\uE000lifted-string:1", "${'a'.repeat(LONG)}"]`],
    ['a placeholder of another index', `{"a": "${'a'.repeat(LONG)}", "b": "\uE000lifted-string:7"}`],
    ['deep nesting around a long string', `${'['.repeat(500)}"${'a'.repeat(LONG)}"${']'.repeat(500)}`],
  ])('answers as JSON.parse does for %s', (_, text) => {
    const bytes = utf8(text);
    expectSameAsJsonParse(bytes);
    expect('value' in outcome(bytes)).toBe(true);
  });

  it('keeps `__proto__` an own property without touching the prototype', () => {
    const value = parseJsonBody(utf8(`{"__proto__": "${'p'.repeat(LONG)}"}`)) as Record<string, unknown>;

    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toBe('p'.repeat(LONG));
  });

  it.each([
    ['a raw control character in a long string', `{"a": "${'a'.repeat(LONG)}\u0001"}`],
    ['a raw line break in a long string', `{"a": "${'a'.repeat(LONG)}\n${'b'.repeat(10)}"}`],
    ['a missing comma after a long string', `{"a": "${'a'.repeat(LONG)}" "b": 1}`],
    ['garbage after the body', `{"a": "${'a'.repeat(LONG)}"} x`],
    ['an unterminated long string', `{"a": "${'a'.repeat(LONG)}`],
    ['an odd run of backslashes before the last quote', `{"a": "${'a'.repeat(LONG)}\\\\\\"}`],
    ['a long string where a key belongs', `{"${'k'.repeat(LONG)}"}`],
    ['invalid UTF-8 in a long string', `["${'a'.repeat(LONG)}\u00ff"]`],
    ['only whitespace', ' '.repeat(LONG + 10)],
  ])('refuses %s with JSON.parse’s own error', (_, text) => {
    const bytes = text.includes('\u00ff') ? Buffer.from(text, 'latin1') : utf8(text);
    expectSameAsJsonParse(bytes);
  });

  it('refuses every control character wherever it stands in a long string', () => {
    const content = 'a'.repeat(LONG + 7);
    // Every place in a run of 20 at the start, in the middle and at the end: every lane of the check's
    // unrolled words, the bytes before its first aligned word and after its last.
    const run = (from: number) => Array.from({ length: 20 }, (_, i) => from + i);
    for (const at of [...run(0), ...run(1_000), ...run(LONG - 13)]) {
      for (let code = 0; code < 0x20; code++) {
        const text = `{"a": "${content.slice(0, at)}${String.fromCharCode(code)}${content.slice(at + 1)}"}`;
        const bytes = utf8(text);
        expectSameAsJsonParse(bytes);
        expect('error' in outcome(bytes)).toBe(true);
      }
    }
  });

  it(
    'answers as JSON.parse does for every byte anywhere in a long base64 string, padded or not',
    () => {
      // Long strings of 4n bytes are checked by decoding them as base64 first: every byte value in every
      // place of a 4-byte group, at the start, in the middle and in the padding, must still get JSON.parse's
      // answer (a value when the byte may stand in a JSON string, its error otherwise).
      for (const padding of ['', '=', '==']) {
        const data = `${'QUJD'.repeat(LONG / 4)}${padding === '' ? 'QUJD' : padding === '=' ? 'QUI=' : 'QQ=='}`;
        const run = (from: number) => Array.from({ length: 4 }, (_, i) => from + i);
        for (const at of [...run(0), ...run(LONG / 2), ...run(data.length - 4)]) {
          for (let byte = 0; byte < 0x100; byte++) {
            const changed = Buffer.from(`{"data": "${data}"}`, 'latin1');
            changed[at + 10] = byte;
            expectSameAsJsonParse(changed);
          }
        }
      }
    },
    CPU_BOUND_MS,
  );

  it('lifts a long base64 string with or without padding', () => {
    for (const data of [base64, `${base64.slice(0, -4)}QUI=`, `${base64.slice(0, -4)}QQ==`]) {
      const body = utf8(JSON.stringify({ data }));
      const parse = vi.spyOn(JSON, 'parse');

      expect(parseJsonBody(body)).toStrictEqual({ data });
      expect(String(parse.mock.calls[0]?.[0]).length).toBeLessThan(100);
      parse.mockRestore();
    }
  });

  it('answers as JSON.parse does for any JSON value with long strings among short ones', () => {
    const long = fc
      .tuple(fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 64 }))
      .map(([unit, extra]) => unit.repeat(Math.ceil(LONG / unit.length)) + 'x'.repeat(extra));
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.oneof(
          fc.string(),
          long,
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.boolean(),
          fc.constant(null),
        ),
        fc.array(tie('tree'), { maxLength: 4 }),
        fc.dictionary(fc.oneof(fc.string(), fc.constant('__proto__')), tie('tree'), { maxKeys: 4 }),
      ),
    }));
    fc.assert(
      fc.property(tree, fc.constantFrom(undefined, 1, '\t'), (value, space) => {
        expectSameAsJsonParse(utf8(JSON.stringify(value, null, space)));
      }),
      { numRuns: 300 },
    );
  });

  it(
    'answers as JSON.parse does for any single-byte change of a body with long strings',
    () => {
      const body = utf8(
        `{"message": "hi \\"there\\"", "attachments": [{"data": "${base64.slice(0, LONG + 12)}", "n": 1}], ` +
          `"${'k'.repeat(LONG)}": ["${'é'.repeat(8)}", "${'b'.repeat(LONG)}\\\\"]}`,
      );
      const interesting = [...utf8('"\\:,{}[] \n\tau0'), 0x01, 0x7f, 0xc3, 0xff];
      // Positions near the structure (where a change can move a string's bounds), and anywhere else.
      const structural = [...body.keys()].filter(
        (i) => body[i] !== 0x61 && body[i] !== 0x62 && body[i] !== 0x6b,
      );
      const position = fc.oneof(fc.constantFrom(...structural), fc.nat({ max: body.length - 1 }));
      fc.assert(
        fc.property(
          position,
          fc.constantFrom(...interesting),
          fc.constantFrom('replace', 'insert', 'delete'),
          (at, byte, how) => {
            const changed =
              how === 'delete'
                ? Buffer.concat([body.subarray(0, at), body.subarray(at + 1)])
                : Buffer.concat([
                    body.subarray(0, at),
                    Uint8Array.of(byte),
                    body.subarray(how === 'insert' ? at : at + 1),
                  ]);
            expectSameAsJsonParse(changed);
          },
        ),
        { numRuns: 2_000 },
      );
    },
    CPU_BOUND_MS,
  );
});
