/**
 * Pure validation of chat-message attachments. Nothing here touches the file system or decodes anything: the
 * intake (src/http/attachments.ts) decodes base64 data and hashes it, the upload parser spools files, and the
 * caller inspects every attachment of a request first and writes blobs only once the whole request is known
 * to be valid.
 */

export const MAX_ATTACHMENTS_PER_MESSAGE = 5;
export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
export const MAX_FILENAME_LENGTH = 255;
/** Bytes of a received file kept for its signature check (the longest signature ends at byte 12). */
export const SIGNATURE_BYTES = 16;

interface FileSignature {
  mimeType: string;
  label: string;
  matches(bytes: Uint8Array): boolean;
}

const SIGNATURES: readonly FileSignature[] = [
  {
    mimeType: 'image/png',
    label: 'PNG',
    matches: (bytes) => startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  },
  { mimeType: 'image/jpeg', label: 'JPEG', matches: (bytes) => startsWith(bytes, [0xff, 0xd8, 0xff]) },
  {
    mimeType: 'image/gif',
    label: 'GIF',
    matches: (bytes) => startsWithAscii(bytes, 'GIF87a') || startsWithAscii(bytes, 'GIF89a'),
  },
  {
    mimeType: 'image/webp',
    label: 'WebP',
    matches: (bytes) => startsWithAscii(bytes, 'RIFF') && startsWithAscii(bytes, 'WEBP', 8),
  },
  { mimeType: 'application/pdf', label: 'PDF', matches: (bytes) => startsWithAscii(bytes, '%PDF-') },
];

export const ALLOWED_ATTACHMENT_TYPES: readonly string[] = SIGNATURES.map((signature) => signature.mimeType);

/**
 * Executable or active-content extensions, refused anywhere in a filename's dotted suffix chain because a
 * downloader may save or open the attachment under its stated name. Lower-case, without the dot.
 */
export const EXECUTABLE_EXTENSIONS: ReadonlySet<string> = new Set([
  // Windows programs, installers and shell-handled files
  'exe',
  'com',
  'bat',
  'cmd',
  'msi',
  'msp',
  'scr',
  'pif',
  'cpl',
  'dll',
  'ocx',
  'sys',
  'hta',
  'reg',
  'lnk',
  'inf',
  'scf',
  'url',
  'msc',
  'gadget',
  'application',
  'appx',
  'msix',
  // Windows Script Host and PowerShell
  'ps1',
  'psm1',
  'psd1',
  'vbs',
  'vbe',
  'js',
  'jse',
  'mjs',
  'cjs',
  'wsf',
  'wsh',
  'wsc',
  // macOS and Linux
  'app',
  'pkg',
  'dmg',
  'command',
  'sh',
  'bash',
  'zsh',
  'csh',
  'ksh',
  'appimage',
  'deb',
  'rpm',
  // disk images, which Windows mounts without carrying over the downloaded-file warning
  'iso',
  'vhd',
  'vhdx',
  // interpreters and server-side scripts
  'jar',
  'class',
  'py',
  'pyc',
  'pyw',
  'pl',
  'rb',
  'php',
  'phtml',
  'phar',
  'cgi',
  'asp',
  'aspx',
  'jsp',
  'lua',
  // documents a browser renders with scripts enabled
  'html',
  'htm',
  'xhtml',
  'xht',
  'shtml',
  'mht',
  'mhtml',
  'svg',
  'svgz',
  'swf',
]);

export interface AttachmentProblem {
  field: 'data' | 'file' | 'mime_type' | 'filename';
  message: string;
}

/**
 * An attachment's bytes as received in a file part of a GraphQL multipart request: written to a spool file as
 * they arrived, hashed and counted on the way, so they are never held in memory. Only the upload parser makes
 * one (a JSON value with the same keys is not an instance, and is never taken for a file). When `size` is over
 * MAX_ATTACHMENT_BYTES the spool file holds only the first bytes and the digest is theirs: such a file is
 * refused before either is used.
 */
export class ReceivedFile {
  constructor(
    /** The spool file, removed when its request ends. */
    readonly path: string,
    /** Bytes the part carried. */
    readonly size: number,
    /** Lower-case hex SHA-256 of the spooled bytes. */
    readonly sha256: string,
    /** The first bytes, for the signature check. */
    readonly head: Uint8Array,
  ) {}
}

/** What the blob store keeps for an attachment: decoded bytes, or the file they were received in. */
export type AttachmentContent = Uint8Array | ReceivedFile;

export interface InspectedAttachment {
  content: AttachmentContent;
  /** Lower-case hex SHA-256 of the content. */
  sha256: string;
  /** The normalised (lower-case) MIME type, one of ALLOWED_ATTACHMENT_TYPES. */
  mimeType: string;
  /** The filename with personal data redacted, or null when none was given. */
  filename: string | null;
  size: number;
}

/**
 * Base64 `data` as the intake decoded it (src/http/attachments.ts): its bytes with their lower-case hex
 * SHA-256, hashed as they were decoded, or why the data is not an attachment's bytes. The domain only reads
 * the bytes, and only until the message that carries them is stored or failed: the intake reuses their
 * memory afterwards.
 */
export type DecodedData =
  | { readonly bytes: Uint8Array; readonly sha256: string }
  | { readonly refused: string };

/** An attachment as the intake hands it over: decoded base64 `data` (JSON bodies) or a `file` (multipart). */
export interface AttachmentInput {
  content: DecodedData | ReceivedFile;
  mimeType: string;
  filename?: string | null;
}

export type InspectionResult =
  | { ok: true; value: InspectedAttachment }
  | { ok: false; problems: AttachmentProblem[] };

/** The content of an attachment before its type is checked, or why it cannot be one. */
type Received =
  | { field: 'data' | 'file'; content: AttachmentContent; head: Uint8Array; sha256: string }
  | { field: 'data' | 'file'; problem: string };

/**
 * Why an attachment of `size` bytes is refused for its size, or null. Base64 `data` is measured after
 * decoding; the intake asks this of the size its length promises, before decoding it.
 */
export function attachmentSizeProblem(field: 'data' | 'file', size: number): string | null {
  if (size === 0) return `${field} must not be empty`;
  if (size > MAX_ATTACHMENT_BYTES) {
    const limit = `attachment exceeds ${MAX_ATTACHMENT_BYTES / (1024 * 1024)} MiB`;
    return field === 'data' ? `${limit} after decoding` : limit;
  }
  return null;
}

function receivedOf(content: DecodedData | ReceivedFile): Received {
  if (content instanceof ReceivedFile) {
    const problem = attachmentSizeProblem('file', content.size);
    if (problem) return { field: 'file', problem };
    return { field: 'file', content, head: content.head, sha256: content.sha256 };
  }
  if ('refused' in content) return { field: 'data', problem: content.refused };
  const problem = attachmentSizeProblem('data', content.bytes.byteLength);
  if (problem) return { field: 'data', problem };
  return { field: 'data', content: content.bytes, head: content.bytes, sha256: content.sha256 };
}

/**
 * The one set of rules of an attachment, whichever way its bytes came: type, size, signature (the bytes must
 * be of the declared type), filename.
 */
export function inspectAttachment(input: AttachmentInput): InspectionResult {
  const problems: AttachmentProblem[] = [];

  const mimeType = normaliseMimeType(input.mimeType);
  const signature = SIGNATURES.find((candidate) => candidate.mimeType === mimeType);
  if (!signature) {
    problems.push({
      field: 'mime_type',
      message: `mime_type must be one of ${ALLOWED_ATTACHMENT_TYPES.join(', ')}`,
    });
  }

  const received = receivedOf(input.content);
  if ('problem' in received) {
    problems.push({ field: received.field, message: received.problem });
  } else if (signature && !signature.matches(received.head)) {
    problems.push({
      field: received.field,
      message: signatureMismatchMessage(received.field, signature, received.head),
    });
  }

  let filename: string | null = null;
  if (input.filename !== undefined && input.filename !== null) {
    const reason = checkFilename(input.filename);
    if (reason) problems.push({ field: 'filename', message: reason });
    else filename = redactFilename(input.filename);
  }

  if (problems.length > 0 || 'problem' in received || !signature) return { ok: false, problems };
  const { content, sha256 } = received;
  return {
    ok: true,
    value: {
      content,
      sha256,
      mimeType: signature.mimeType,
      filename,
      size: content instanceof ReceivedFile ? content.size : content.byteLength,
    },
  };
}

/**
 * MIME types are compared exactly after trimming surrounding whitespace and lower-casing (RFC 2045 makes type
 * and subtype case-insensitive). Parameters such as `; charset=binary` are not stripped: none of the allowed
 * types takes parameters, so their presence means the client sent something other than a plain type.
 */
function normaliseMimeType(mimeType: string): string {
  return mimeType.trim().toLowerCase();
}

function signatureMismatchMessage(
  field: 'data' | 'file',
  expected: FileSignature,
  bytes: Uint8Array,
): string {
  const actual = SIGNATURES.find((candidate) => candidate.matches(bytes));
  const base = `${field} does not look like a ${expected.label} file`;
  return actual ? `${base} (it looks like a ${actual.label} file)` : base;
}

// C0 and C1 controls and DEL (\p{Cc}), the Unicode line and paragraph separators, and the bidirectional
// overrides and isolates that can make `fdp.exe` display as `exe.pdf`.
const FORBIDDEN_FILENAME_CHARACTERS = /[\p{Cc}\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Returns why `name` is refused as an attachment filename, or null when it is acceptable. A filename is a bare
 * name of at most 255 characters (Unicode code points) with no executable extension anywhere after its first dot.
 */
export function checkFilename(name: string): string | null {
  if (name.trim().length === 0) return 'filename must not be empty';
  if (codePointLength(name) > MAX_FILENAME_LENGTH) {
    return `filename must be at most ${MAX_FILENAME_LENGTH} characters`;
  }
  if (LONE_SURROGATE.test(name)) return 'filename must be valid Unicode text';
  if (FORBIDDEN_FILENAME_CHARACTERS.test(name)) return 'filename must not contain control characters';
  if (name.includes('/') || name.includes('\\')) return 'filename must not contain path separators';
  if (name === '.' || name === '..') return 'filename must not be . or ..';
  if (/^[. ]+$/.test(name)) return 'filename must not consist only of dots and spaces';

  const extension = findExecutableExtension(name);
  if (extension) return `filename has an executable extension (.${extension})`;
  return null;
}

function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

function findExecutableExtension(name: string): string | null {
  // Windows drops trailing dots and spaces, so `a.exe.` and `a.exe ` are saved as `a.exe`.
  const segments = name
    .replace(/[. ]+$/, '')
    .split('.')
    .slice(1);
  for (const segment of segments) {
    const extension = segment.trim().toLowerCase();
    if (EXECUTABLE_EXTENSIONS.has(extension)) return extension;
  }
  return null;
}

const EMAIL = /(?<![\w.%+-])[\w.%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const DIGIT_RUN = /\d(?:[ -]?\d)*/g;
const SSN = /(?<!\d)\d{3}-\d{2}-\d{4}(?!\d)/g;
const INTERNATIONAL_PHONE = /(?<!\d)\+\d(?:[ .-]?\(?\d+\)?)*/g;
const NORTH_AMERICAN_PHONE = /(?<![\d+])(?:1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[ .-])\d{3}[ .-]\d{4}(?!\d)/g;
const FILE_EXTENSION = /\.(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{1,10}$/;
const MAX_PHONE_DIGITS = 15;
const MIN_PHONE_DIGITS = 7;

/**
 * Replaces personal data in a filename with `[email]`, `[card]`, `[ssn]` or `[phone]`, keeping the extension.
 * Card numbers are 13–19 digits, optionally grouped by single spaces or dashes, that pass the Luhn check. Phone
 * numbers are either international (`+` then 7–15 digits in groups) or North American (`555-123-4567`,
 * `(555) 123-4567`); bare digit strings are left alone because dates and timestamps look the same.
 */
export function redactFilename(name: string): string {
  const extension = FILE_EXTENSION.exec(name);
  const stem = extension && extension.index > 0 ? name.slice(0, extension.index) : name;
  const suffix = stem === name ? '' : name.slice(stem.length);
  // The second e-mail pass catches an address whose top-level domain was taken for the extension: `jo@example.com`.
  return redactEmails(redactNumbers(redactEmails(stem)) + suffix);
}

function redactEmails(text: string): string {
  return text.replace(EMAIL, '[email]');
}

function redactNumbers(text: string): string {
  // A leading + marks a phone number more reliably than the Luhn check marks a card, so it goes first.
  return text
    .replace(INTERNATIONAL_PHONE, redactInternationalPhone)
    .replace(DIGIT_RUN, redactCardsInRun)
    .replace(SSN, '[ssn]')
    .replace(NORTH_AMERICAN_PHONE, '[phone]');
}

/**
 * Scanning from the left, redacts the longest Luhn-valid span of 13–19 digits that starts and ends on a group
 * boundary, so a card number next to other digits (`2024 4111 1111 1111 1111`) is still found.
 */
function redactCardsInRun(run: string): string {
  const parts = run.split(/([ -])/);
  const groupCount = (parts.length + 1) / 2;
  let output = '';
  let start = 0;
  while (start < groupCount) {
    const end = longestCardFrom(parts, start);
    if (end === -1) {
      output += `${parts[2 * start] ?? ''}${parts[2 * start + 1] ?? ''}`;
      start += 1;
    } else {
      output += `[card]${parts[2 * end + 1] ?? ''}`;
      start = end + 1;
    }
  }
  return output;
}

/** `parts` alternates digit groups and separators; returns the index of the last group of the card, or -1. */
function longestCardFrom(parts: readonly string[], start: number): number {
  let digits = '';
  let last = -1;
  for (let group = start; 2 * group < parts.length; group += 1) {
    digits += parts[2 * group] ?? '';
    if (digits.length > 19) break;
    if (digits.length >= 13 && isLuhnValid(digits)) last = group;
  }
  return last;
}

function isLuhnValid(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

/** Keeps the leading groups up to 15 digits (the E.164 maximum) so a date after the number survives. */
function redactInternationalPhone(match: string): string {
  let digits = 0;
  let end = 0;
  for (const group of match.matchAll(/\(?(\d+)\)?/g)) {
    const count = group[1]?.length ?? 0;
    if (digits + count > MAX_PHONE_DIGITS) break;
    digits += count;
    end = group.index + group[0].length;
  }
  return digits >= MIN_PHONE_DIGITS ? `[phone]${match.slice(end)}` : match;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[], offset = 0): boolean {
  if (bytes.length < offset + prefix.length) return false;
  return prefix.every((byte, index) => bytes[offset + index] === byte);
}

function startsWithAscii(bytes: Uint8Array, prefix: string, offset = 0): boolean {
  return startsWith(
    bytes,
    Array.from(prefix, (character) => character.charCodeAt(0)),
    offset,
  );
}
