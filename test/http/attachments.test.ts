import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_ATTACHMENT_BYTES } from '../../src/domain/agents/attachments.js';
import {
  decodeStrictBase64,
  POOLED_DECODE_BUFFERS,
  pooledDecodeBytes,
  type ReceivedAttachment,
  receiveAttachment,
  releaseDecoded,
} from '../../src/http/attachments.js';
import { GIF87A, PDF, PNG } from '../domain/agents/attachment-samples.js';

const ALLOWED_LIST = 'image/png, image/jpeg, image/gif, image/webp, application/pdf';

function problemsOf(input: ReceivedAttachment) {
  const result = receiveAttachment(input);
  return result.ok ? [] : result.problems;
}

function inspected(input: ReceivedAttachment) {
  const result = receiveAttachment(input);
  if (!result.ok)
    throw new Error(`expected the attachment to be accepted: ${JSON.stringify(result.problems)}`);
  return result.value;
}

const png = PNG.toString('base64');

afterEach(() => {
  vi.restoreAllMocks();
});

describe('receiveAttachment base64', () => {
  const gif87a = GIF87A.toString('base64');

  it('accepts canonical padding', () => {
    expect(gif87a.endsWith('Ow==')).toBe(true);
    expect(inspected({ data: gif87a, mimeType: 'image/gif' }).content).toEqual(GIF87A);
  });

  it.each([
    { case: 'an empty string', data: '', message: 'data must not be empty' },
    {
      case: 'a data: URL',
      data: `data:image/png;base64,${png}`,
      message: 'data must be plain base64 without a data: URL prefix',
    },
    {
      case: 'an upper-case DATA: URL',
      data: `DATA:image/png;base64,${png}`,
      message: 'data must be plain base64 without a data: URL prefix',
    },
    {
      case: 'a line break',
      data: `${png.slice(0, 76)}\n${png.slice(76)}`,
      message: 'data is not valid base64: it must not contain whitespace or line breaks',
    },
    {
      case: 'a CRLF line ending',
      data: `${png.slice(0, 76)}\r\n${png.slice(76)}`,
      message: 'data is not valid base64: it must not contain whitespace or line breaks',
    },
    {
      case: 'a space',
      data: `${png.slice(0, 4)} ${png.slice(4)}`,
      message: 'data is not valid base64: it must not contain whitespace or line breaks',
    },
    {
      case: 'a leading space',
      data: ` ${png}`,
      message: 'data is not valid base64: it must not contain whitespace or line breaks',
    },
    {
      case: 'a trailing line break',
      data: `${png}\n`,
      message: 'data is not valid base64: it must not contain whitespace or line breaks',
    },
    {
      case: 'base64url characters',
      data: png.replaceAll('+', '-').replaceAll('/', '_'),
      message: 'data is not valid base64: use the standard alphabet (+ and /), not base64url (- and _)',
    },
    {
      case: 'missing padding',
      data: gif87a.replace(/=+$/, ''),
      message: 'data is not valid base64: its length must be a multiple of 4, padded with =',
    },
    {
      case: 'partial padding',
      data: gif87a.replace(/=$/, ''),
      message: 'data is not valid base64: its length must be a multiple of 4, padded with =',
    },
    {
      case: 'a stray trailing character',
      data: `${png}A`,
      message: 'data is not valid base64: its length must be a multiple of 4, padded with =',
    },
    {
      case: 'three padding characters',
      data: 'QQ===',
      message: 'data is not valid base64: = may only appear as padding at the end',
    },
    {
      case: 'padding in the middle',
      data: 'QQ==QQ==',
      message: 'data is not valid base64: = may only appear as padding at the end',
    },
    {
      case: 'only padding',
      data: '====',
      message: 'data is not valid base64: = may only appear as padding at the end',
    },
    {
      case: 'non-zero padding bits',
      data: gif87a.replace(/Ow==$/, 'Ox=='),
      message: 'data is not valid base64: its padding bits are not zero',
    },
    { case: 'punctuation', data: '****', message: 'data is not valid base64' },
    { case: 'non-ASCII letters', data: 'héllo===', message: 'data is not valid base64' },
    { case: 'a JSON value', data: '{"a":1}', message: 'data is not valid base64' },
  ])('refuses $case', ({ data, message }) => {
    expect(problemsOf({ data, mimeType: 'image/png' })).toEqual([{ field: 'data', message }]);
  });
});

/** The strict base64 rules checked one character at a time, as the decoder checked them before its fast path. */
function referenceDecode(data: string): Buffer | string {
  if (data.length === 0) return 'data must not be empty';
  if (/^data:/i.test(data)) return 'data must be plain base64 without a data: URL prefix';
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  const body = padding === 0 ? data : data.slice(0, -padding);
  const invalid = [...body].find((character) => !/^[A-Za-z0-9+/]$/.test(character));
  if (invalid !== undefined) {
    if (/\s/.test(invalid)) return 'data is not valid base64: it must not contain whitespace or line breaks';
    if (invalid === '-' || invalid === '_') {
      return 'data is not valid base64: use the standard alphabet (+ and /), not base64url (- and _)';
    }
    if (invalid === '=') return 'data is not valid base64: = may only appear as padding at the end';
    return 'data is not valid base64';
  }
  if (data.length % 4 !== 0) {
    return 'data is not valid base64: its length must be a multiple of 4, padded with =';
  }
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const last = alphabet.indexOf(body.charAt(body.length - 1));
  if ((last & (padding === 2 ? 0b1111 : padding === 1 ? 0b11 : 0)) !== 0) {
    return 'data is not valid base64: its padding bits are not zero';
  }
  return Buffer.from(data, 'base64');
}

describe('decodeStrictBase64', () => {
  // Characters Node's base64 decoder skips, stops at, takes from base64url, or reads by their low byte
  // (U+0141 as `A`, U+012B as `+`, U+013D as `=`), each of which strict base64 refuses.
  const intruders = [
    '-',
    '_',
    '=',
    ' ',
    '\n',
    '\t',
    '\u0000',
    '*',
    '.',
    'é',
    '\u00ff',
    'Ł',
    'ī',
    'į',
    'Ľ',
    '😀',
    '\ud800',
  ];

  it.each([
    ['Ł', 'QUJ\u0141'],
    ['ī (read as +)', 'QU\u012bD'],
    ['a lone surrogate', 'QUJ\ud800'],
    ['NUL', 'QUJ\u0000'],
  ])('refuses %s where the decoder would read a byte', (_case, data) => {
    expect(decodeStrictBase64(data)).toBe('data is not valid base64');
  });

  it('agrees with the character-by-character rules on valid, altered and truncated data', () => {
    let seed = 7;
    const random = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return (seed >>> 8) % below;
    };
    for (let round = 0; round < 3000; round++) {
      const bytes = Buffer.from(Array.from({ length: random(40) }, () => random(256)));
      let data = bytes.toString('base64');
      const edits = random(3);
      for (let edit = 0; edit < edits; edit++) {
        const at = random(data.length + 1);
        const kind = random(4);
        const intruder = intruders[random(intruders.length)] as string;
        if (kind === 0) data = data.slice(0, at) + intruder + data.slice(at);
        else if (kind === 1) data = data.slice(0, at) + intruder + data.slice(at + 1);
        else if (kind === 2) data = data.slice(0, at) + data.slice(at + 1);
        else data = data.slice(0, at) + String.fromCharCode(65 + random(58)) + data.slice(at + 1);
      }
      const expected = referenceDecode(data);
      const actual = decodeStrictBase64(data);
      expect({ data, actual }).toEqual({ data, actual: expected });
    }
  });
});

describe('receiveAttachment size limit', () => {
  // 3,495,254 four-character groups decode to 10,485,762 bytes before padding is subtracted.
  const groupsAtLimit = Math.ceil(MAX_ATTACHMENT_BYTES / 3);

  it('refuses a payload one byte over 10 MiB from its length, without decoding it', () => {
    const decode = vi.spyOn(Buffer, 'from');
    const data = `${'A'.repeat(4 * (groupsAtLimit - 1))}AAA=`;

    expect(problemsOf({ data, mimeType: 'application/pdf' })).toEqual([
      { field: 'data', message: 'attachment exceeds 10 MiB after decoding' },
    ]);
    expect(decode).not.toHaveBeenCalled();
  });

  it('refuses an oversized payload before scanning it for invalid characters', () => {
    const data = '!'.repeat(64 * 1024 * 1024);

    expect(problemsOf({ data, mimeType: 'application/pdf' })).toEqual([
      { field: 'data', message: 'attachment exceeds 10 MiB after decoding' },
    ]);
  });

  it('accepts a PDF of exactly 10 MiB', () => {
    const bytes = Buffer.alloc(MAX_ATTACHMENT_BYTES, 0x20);
    PDF.copy(bytes);
    const data = bytes.toString('base64');

    expect(data.length).toBe(4 * groupsAtLimit);
    expect(inspected({ data, mimeType: 'application/pdf' }).size).toBe(MAX_ATTACHMENT_BYTES);
  });
});

describe('receiveAttachment problems', () => {
  it('reports every invalid field together', () => {
    expect(problemsOf({ data: 'not base64', mimeType: 'text/html', filename: '../x.html' })).toEqual([
      { field: 'mime_type', message: `mime_type must be one of ${ALLOWED_LIST}` },
      { field: 'data', message: 'data is not valid base64: it must not contain whitespace or line breaks' },
      { field: 'filename', message: 'filename must not contain path separators' },
    ]);
  });
});

describe('large decoded attachments', () => {
  const MiB = 1024 * 1024;
  /** `size` bytes of a PDF: its signature, then `fill`. */
  const pdfOf = (size: number, fill: string) => Buffer.from(`%PDF-1.4\n${fill.repeat(size - 9)}`);
  const decoded = (bytes: Buffer) => {
    const result = decodeStrictBase64(bytes.toString('base64'));
    if (typeof result === 'string') throw new Error(`expected the data to decode: ${result}`);
    return result;
  };

  it('go into a kept buffer, handed to the next large attachment once given back, and only once', () => {
    const first = pdfOf(2 * MiB, 'a');
    const one = decoded(first);
    expect(one.equals(first)).toBe(true);
    releaseDecoded(one);
    const kept = pooledDecodeBytes();
    expect(kept).toBeGreaterThan(2 * MiB);

    const second = pdfOf(2 * MiB - 1, 'b');
    const two = decoded(second);
    expect(two.buffer).toBe(one.buffer);
    // Exactly the second attachment's bytes: nothing of the first shows past them.
    expect(two.equals(second)).toBe(true);
    expect(pooledDecodeBytes()).toBe(kept - two.buffer.byteLength);

    releaseDecoded(two);
    releaseDecoded(two);
    releaseDecoded(one);
    expect(pooledDecodeBytes()).toBe(kept);
  });

  it('give the buffer back when the data is refused, with the same message as before', () => {
    decoded(pdfOf(2 * MiB, 'c'));
    releaseDecoded(decoded(pdfOf(2 * MiB, 'c')));
    const kept = pooledDecodeBytes();
    const data = pdfOf(2 * MiB, 'd').toString('base64');
    // A character outside the alphabet in the middle: Node's decoder skips it, the strict check does not.
    const refused = `${data.slice(0, MiB)}!${data.slice(MiB + 1)}`;

    expect(decodeStrictBase64(refused)).toBe('data is not valid base64');
    expect(pooledDecodeBytes()).toBe(kept);
  });

  it('carry the SHA-256 of exactly their bytes, decoded a piece at a time, padded or not', () => {
    // Sizes across several pieces of the decoder, ending on each of the three padding cases.
    for (const size of [2 * MiB, 2 * MiB + 1, 2 * MiB + 2, 196_608, 196_609]) {
      const bytes = pdfOf(size, String(size % 7));
      const value = inspected({ data: bytes.toString('base64'), mimeType: 'application/pdf' });

      expect(Buffer.from(value.content as Uint8Array).equals(bytes)).toBe(true);
      expect(value.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(value.size).toBe(size);
      releaseDecoded(value.content);
    }
  });

  it('refuse a base64url character in any piece, giving the buffer back', () => {
    releaseDecoded(decoded(pdfOf(2 * MiB, 'e')));
    const kept = pooledDecodeBytes();
    const data = pdfOf(2 * MiB, 'f').toString('base64');
    for (const [at, character] of [
      [0, '-'],
      [MiB, '_'],
      [data.length - 5, '-'],
    ] as const) {
      const refused = `${data.slice(0, at)}${character}${data.slice(at + 1)}`;

      expect(decodeStrictBase64(refused)).toBe(
        'data is not valid base64: use the standard alphabet (+ and /), not base64url (- and _)',
      );
      expect(pooledDecodeBytes()).toBe(kept);
    }
  });

  it(`keep at most ${POOLED_DECODE_BUFFERS} buffers, and none for small attachments or other bytes`, () => {
    const all = Array.from({ length: POOLED_DECODE_BUFFERS + 2 }, (_, i) => decoded(pdfOf(3 * MiB, `${i}`)));
    for (const bytes of all) releaseDecoded(bytes);
    const kept = pooledDecodeBytes();
    expect(kept).toBeGreaterThanOrEqual(POOLED_DECODE_BUFFERS * 3 * MiB);

    releaseDecoded(decoded(PNG));
    releaseDecoded(Buffer.alloc(4 * MiB));
    releaseDecoded(inspected({ data: png, mimeType: 'image/png' }).content);

    expect(pooledDecodeBytes()).toBe(kept);
  });
});
