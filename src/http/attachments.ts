import { createHash } from 'node:crypto';
import {
  type AttachmentContent,
  attachmentSizeProblem,
  type DecodedData,
  type InspectedAttachment,
  type InspectionResult,
  inspectAttachment,
  MAX_ATTACHMENT_BYTES,
  type ReceivedFile,
} from '../domain/agents/attachments.js';
import { BufferPool } from './buffer-pool.js';

/**
 * The intake of attachment bytes sent as base64, for every transport (GraphQL's `sendChatMessage` field,
 * which REST and MCP run too): strict decoding, hashed as it decodes, into buffers kept for the next large
 * attachments. The domain (src/domain/agents/attachments.ts) gets the bytes and their digest to check and
 * store, and never touches the buffers: the transport gives them back once the message is stored or
 * failed (sendWithAttachments).
 */

/** An attachment as a transport receives it: base64 `data` (JSON bodies) or a `file` (multipart). */
export interface ReceivedAttachment {
  data?: string | null;
  file?: ReceivedFile | null;
  mimeType: string;
  filename?: string | null;
}

/** Decodes an attachment's base64 `data` (unless it came as a file) and checks it by the domain's rules. */
export function receiveAttachment(input: ReceivedAttachment): InspectionResult {
  return inspectAttachment({
    content: input.file ? input.file : decodeAttachmentData(input.data ?? ''),
    mimeType: input.mimeType,
    filename: input.filename ?? null,
  });
}

/**
 * Runs `send`, which stores a message's inspected attachments or fails, and then gives their decoded
 * buffers back for the next large attachments (releaseDecoded), whichever way it ended: nothing reads them
 * afterwards.
 */
export async function sendWithAttachments<Receipt>(
  attachments: readonly InspectedAttachment[],
  send: () => Promise<Receipt>,
): Promise<Receipt> {
  try {
    return await send();
  } finally {
    for (const attachment of attachments) releaseDecoded(attachment.content);
  }
}

/** Base64 `data` decoded and hashed, or why it is refused, as the domain takes it (DecodedData). */
export function decodeAttachmentData(data: string): DecodedData {
  const decoded = decodeWithDigest(data);
  return typeof decoded === 'string' ? { refused: decoded } : decoded;
}

const BASE64_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const NON_BASE64_CHARACTER = /[^A-Za-z0-9+/]/;
const ABOVE_LATIN1 = /[\u0100-\uffff]/;

/**
 * Returns the decoded bytes, or a message explaining why `data` is refused: strict RFC 4648 base64 (standard
 * alphabet, padded, zero padding bits), the only encoding of its bytes. Accepted data (the common case,
 * megabytes long) is read in one pass, a piece at a time, without a regular expression; only refused data is
 * scanned again, by the checks that word the refusal.
 */
export function decodeStrictBase64(data: string): Buffer | string {
  const decoded = decodeWithDigest(data);
  return typeof decoded === 'string' ? decoded : decoded.bytes;
}

/**
 * decodeStrictBase64's bytes with their lower-case hex SHA-256 (the blob's name), hashed as they are decoded
 * as a received file's bytes are hashed as they arrive, or why `data` is refused.
 */
function decodeWithDigest(data: string): { bytes: Buffer; sha256: string } | string {
  if (data.length === 0) return attachmentSizeProblem('data', 0) as string;
  if (/^data:/i.test(data)) return 'data must be plain base64 without a data: URL prefix';

  // Decide on the size from the length alone so an oversized payload is refused before it is scanned or decoded.
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  const promised = Math.floor((data.length * 3) / 4) - padding;
  if (promised > MAX_ATTACHMENT_BYTES) return attachmentSizeProblem('data', promised) as string;
  return decodeCanonical(data, padding) ?? whyNotBase64(data, padding);
}

/**
 * Characters of `data` checked, decoded and hashed at a time (192 KiB of bytes): each piece is still in the
 * processor's cache for the next step, where whole-string passes would each read megabytes from memory
 * (docs/decisions/0027-chat-attachments.md, "Chat attachments").
 */
const DECODED_PIECE_CHARACTERS = 256 * 1024;

/**
 * The bytes of `data` if it is their canonical encoding, with their digest, else null. Node's decoder skips
 * characters outside the alphabet (U+0080 to U+00FF among them) and stops at `=`, so any such character
 * leaves fewer bytes than the length promises; it also takes base64url's `-` and `_`, and reads a character
 * above U+00FF by its low byte (`Ł` as `A`), which the scans before it rule out (the second costs nothing on
 * a string V8 holds one byte per character, as JSON.parse makes of ASCII text).
 */
function decodeCanonical(data: string, padding: number): { bytes: Buffer; sha256: string } | null {
  if (data.length % 4 !== 0 || !paddingBitsZero(data, padding) || ABOVE_LATIN1.test(data)) return null;
  const length = (data.length / 4) * 3 - padding;
  // Room for more than `length`, so that exactly `length` bytes written means none was skipped or added.
  const bytes = decodeBuffer(length);
  const hash = createHash('sha256');
  let written = 0;
  for (let from = 0; from < data.length; from += DECODED_PIECE_CHARACTERS) {
    // A piece of a multiple of 4 characters decodes on its own, as it would within the whole.
    const piece = data.slice(from, from + DECODED_PIECE_CHARACTERS);
    if (piece.includes('-') || piece.includes('_')) break;
    const count = bytes.write(piece, written, 'base64');
    hash.update(bytes.subarray(written, written + count));
    written += count;
  }
  if (written === length) return { bytes: bytes.subarray(0, length), sha256: hash.digest('hex') };
  releaseDecoded(bytes);
  return null;
}

/** Decoded attachments of this size or more go into buffers kept for the next ones (see releaseDecoded). */
export const POOLED_DECODE_MIN_BYTES = 1024 * 1024;
/** How many such buffers are kept: 4 of at most 11 MiB, held only after large attachments. */
export const POOLED_DECODE_BUFFERS = 4;
const decodeBuffers = new BufferPool({
  minBytes: POOLED_DECODE_MIN_BYTES,
  maxBytes: MAX_ATTACHMENT_BYTES + 1,
  buffers: POOLED_DECODE_BUFFERS,
});

/**
 * A buffer for more than `length` decoded bytes: for a large attachment a kept one (BufferPool). A 4 MiB
 * attachment decoded into new memory each time costs that memory's first touch and, counted by V8 as
 * external memory until a full collection finds it dead, more full collections
 * (docs/decisions/0027-chat-attachments.md, "Chat attachments").
 */
function decodeBuffer(length: number): Buffer {
  const buffer = decodeBuffers.take(length + 1);
  return buffer ? Buffer.from(buffer) : Buffer.allocUnsafe(length + 1);
}

/**
 * Gives back the buffer of decoded bytes (an attachment's `content` from decodeStrictBase64 or
 * receiveAttachment) for the next large attachment, once nothing reads them any more: the next decode
 * overwrites them. Anything else (a received file, bytes not decoded here, bytes already given back) is
 * left alone. Decoded bytes never given back are collected as usual.
 */
export function releaseDecoded(content: AttachmentContent): void {
  if (content instanceof Uint8Array) decodeBuffers.give(content.buffer);
}

/** Total bytes of the buffers kept for the next large decoded attachments. */
export function pooledDecodeBytes(): number {
  return decodeBuffers.keptBytes();
}

/** RFC 4648 §3.5: the bits below the last encoded byte must be zero, so each byte string has one encoding. */
function paddingBitsZero(data: string, padding: number): boolean {
  const lastValue = BASE64_ALPHABET.indexOf(data.charAt(data.length - 1 - padding));
  const unusedBitsMask = padding === 2 ? 0b1111 : padding === 1 ? 0b11 : 0;
  return lastValue !== -1 && (lastValue & unusedBitsMask) === 0;
}

/** Why `data` (not empty, not too large) is not strict base64, in the order the checks have always run. */
function whyNotBase64(data: string, padding: number): string {
  const body = padding === 0 ? data : data.slice(0, -padding);
  const invalidAt = body.search(NON_BASE64_CHARACTER);
  if (invalidAt !== -1) return describeInvalidCharacter(body.charAt(invalidAt));
  if (data.length % 4 !== 0) {
    return 'data is not valid base64: its length must be a multiple of 4, padded with =';
  }
  if (!paddingBitsZero(data, padding)) return 'data is not valid base64: its padding bits are not zero';
  return 'data is not valid base64';
}

function describeInvalidCharacter(character: string): string {
  if (/\s/.test(character)) return 'data is not valid base64: it must not contain whitespace or line breaks';
  if (character === '-' || character === '_') {
    return 'data is not valid base64: use the standard alphabet (+ and /), not base64url (- and _)';
  }
  if (character === '=') return 'data is not valid base64: = may only appear as padding at the end';
  return 'data is not valid base64';
}
