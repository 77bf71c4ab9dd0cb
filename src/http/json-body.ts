import { isAscii } from 'node:buffer';
import { BufferPool } from './buffer-pool.js';

/**
 * Request bodies as text and as JSON. A JSON body that carries a long plain string (a base64 attachment of
 * megabytes) is parsed without JSON.parse scanning that string: JSON.parse reads the rest of the body, and
 * the string is copied out of the bytes as they are, once a check shows it needs no parsing. The answer is
 * always exactly `JSON.parse(bodyText(bytes))`, its value or its error.
 */

/** Strings shorter than this are left to JSON.parse: lifting them out would cost more than it saves. */
export const MIN_LIFTED_STRING_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
/** What a lifted string reads as while the rest is parsed: `HOLE` and its index. */
const HOLE = '\uE000lifted-string:';

const isJsonWhitespace = (byte: number | undefined) =>
  byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;

/**
 * A body as text: UTF-8, a leading byte order mark dropped, a malformed sequence read as U+FFFD (TextDecoder's
 * rules); an all-ASCII body (the usual JSON, base64 attachments included) copied into a string as it is.
 */
export function bodyText(bytes: Uint8Array): string {
  if (isAscii(bytes)) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return new TextDecoder().decode(bytes);
}

/** `JSON.parse(bodyText(bytes))`: the same value, or the same SyntaxError. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (body.byteLength >= MIN_LIFTED_STRING_BYTES) {
    const lifted = parseLifted(body, longStrings(body));
    if (lifted) return lifted.value;
  }
  return JSON.parse(bodyText(body));
}

/**
 * The content ranges (between the quotes) of the string values of at least MIN_LIFTED_STRING_BYTES. One
 * pass of `indexOf` finds each quote; a quote preceded by an odd run of backslashes is escaped (each
 * backslash is counted at most once). A string followed by `:` is an object key and stays. Nothing here
 * decides whether the body is valid JSON or a string holds an escape: see liftedText and parseLifted.
 */
function longStrings(body: Buffer): [number, number][] {
  const ranges: [number, number][] = [];
  let at = 0;
  for (;;) {
    const open = body.indexOf(QUOTE, at);
    if (open === -1) return ranges;
    let close = open;
    for (;;) {
      close = body.indexOf(QUOTE, close + 1);
      if (close === -1) return ranges;
      let backslashes = 0;
      while (body[close - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) break;
    }
    if (close - open - 1 >= MIN_LIFTED_STRING_BYTES) {
      let after = close + 1;
      while (isJsonWhitespace(body[after])) after++;
      if (body[after] !== COLON) ranges.push([open + 1, close]);
    }
    at = close + 1;
  }
}

/** Refused: the range holds a raw control character, which JSON allows in no string. */
const INVALID = Symbol('invalid');

/**
 * The string a content range stands for, when it can be made from the bytes as they are: plain (no
 * escape) and ASCII, copied with `toString('latin1')`, which makes a string of over 1 MB outside V8's heap
 * in one copy (docs/decisions/0027-chat-attachments.md). Undefined when the range is not plain ASCII
 * (JSON.parse reads it); INVALID when it holds a raw control character.
 *
 * A long string is most often base64 (an attachment), and Node's base64 decoder, native and vectorised,
 * then answers every question in one pass: it skips any byte outside its alphabet (`A-Z a-z 0-9 + / - _`;
 * `=` ends it), so a string of 4n bytes that decodes to exactly the bytes its length promises holds nothing
 * else: no backslash, quote, control character or byte above 0x7f. Any other string takes the checks one by
 * one.
 */
function liftedText(body: Buffer, start: number, end: number): string | undefined | typeof INVALID {
  const copied = (end - start) % 4 === 0 ? body.toString('latin1', start, end) : undefined;
  if (copied !== undefined && decodesInFull(copied)) return copied;
  const range = body.subarray(start, end);
  if (range.indexOf(BACKSLASH) !== -1 || !isAscii(range)) return undefined;
  if (hasControlCharacter(body, start, end)) return INVALID;
  return copied ?? body.toString('latin1', start, end);
}

/** Decoded bytes of lifted strings, written and dropped within one call: one buffer kept, up to 16 MiB. */
const decodeScratch = new BufferPool({ minBytes: 0, maxBytes: 16 * 1024 * 1024, buffers: 1 });

/** Whether Node's base64 decoder reads every character of `text` (a multiple of 4 long): see liftedText. */
function decodesInFull(text: string): boolean {
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const promised = (text.length / 4) * 3 - padding;
  const kept = decodeScratch.take(promised + 1);
  // Room for more than promised, so that exactly `promised` bytes written means none was skipped or added.
  const scratch = kept ? Buffer.from(kept) : Buffer.allocUnsafe(promised + 1);
  try {
    return scratch.write(text, 'base64') === promised;
  } finally {
    decodeScratch.give(scratch.buffer);
  }
}

/**
 * Parses `body` with each plain ASCII range of `ranges` replaced by a placeholder, then puts the range's
 * text in its place. Undefined (and the caller parses the whole text) when nothing was lifted, when the rest
 * does not parse, when a lifted string holds a raw control character, or when the placeholders found are
 * not exactly the ones written (a client that sent such a string itself): then the whole text decides. A
 * body parses with its strings lifted exactly when it parses whole, since only valid string tokens are
 * swapped.
 */
function parseLifted(body: Buffer, ranges: [number, number][]): { value: unknown } | undefined {
  const strings: string[] = [];
  const pieces: string[] = [];
  let from = 0;
  for (const [start, end] of ranges) {
    const text = liftedText(body, start, end);
    if (text === undefined) continue;
    // JSON allows no raw control character inside a string: the full parse refuses such a body.
    if (text === INVALID) return undefined;
    pieces.push(bodyText(body.subarray(from, start)), `${HOLE}${strings.length}`);
    strings.push(text);
    from = end;
  }
  if (strings.length === 0) return undefined;
  pieces.push(bodyText(body.subarray(from)));
  let value: unknown;
  try {
    value = JSON.parse(pieces.join(''));
  } catch {
    return undefined;
  }
  const root = [value];
  return fillHoles(root, strings) ? { value: root[0] } : undefined;
}

/**
 * Whether an ASCII range holds a byte below 0x20, four words of four bytes at a time: adding 0x60 to an
 * ASCII byte sets its top bit exactly when the byte is 0x20 or more (0x7f + 0x60 stays below 0x100, so no
 * carry reaches the next byte), and AND-ing the sums keeps a top bit only where every word had it. Several
 * times faster than a regular expression over the same text. Only for ASCII: a byte of 0xa0 or more sums
 * past 0xff.
 */
function hasControlCharacter(body: Buffer, start: number, end: number): boolean {
  let at = start;
  for (; at < end && (body.byteOffset + at) % 4 !== 0; at++) if ((body[at] as number) < 0x20) return true;
  const words = new Int32Array(body.buffer, body.byteOffset + at, (end - at) >>> 2);
  const unrolled = words.length & ~3;
  let all = -1;
  let i = 0;
  for (; i < unrolled; i += 4) {
    all &=
      ((words[i] as number) + 0x60606060) &
      ((words[i + 1] as number) + 0x60606060) &
      ((words[i + 2] as number) + 0x60606060) &
      ((words[i + 3] as number) + 0x60606060);
  }
  for (; i < words.length; i++) all &= (words[i] as number) + 0x60606060;
  if ((all & TOP_BITS) !== TOP_BITS) return true;
  for (at += words.length * 4; at < end; at++) if ((body[at] as number) < 0x20) return true;
  return false;
}

/** The top bit of each byte of a word, as the signed 32-bit value `&` yields. */
const TOP_BITS = 0x80808080 | 0;

/** Replaces each placeholder value under `root` by its string; false unless each was found exactly once. */
function fillHoles(root: unknown[], strings: string[]): boolean {
  const filled = new Array<boolean>(strings.length).fill(false);
  let count = 0;
  const pending: (Record<string, unknown> | unknown[])[] = [root];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    const keys = Array.isArray(node) ? undefined : Object.keys(node);
    const length = keys ? keys.length : (node as unknown[]).length;
    for (let i = 0; i < length; i++) {
      const key = keys ? (keys[i] as string) : i;
      const value = (node as Record<string | number, unknown>)[key];
      if (typeof value === 'string') {
        if (!value.startsWith(HOLE)) continue;
        const index = Number(value.slice(HOLE.length));
        if (`${HOLE}${index}` !== value || filled[index] !== false) return false;
        filled[index] = true;
        count++;
        // A JSON object's keys are its own data properties (`__proto__` too): this sets the value only.
        Object.defineProperty(node, key, {
          value: strings[index],
          writable: true,
          enumerable: true,
          configurable: true,
        });
      } else if (value !== null && typeof value === 'object') {
        pending.push(value as Record<string, unknown> | unknown[]);
      }
    }
  }
  return count === strings.length;
}
