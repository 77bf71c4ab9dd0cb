import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ALLOWED_ATTACHMENT_TYPES,
  type AttachmentInput,
  attachmentSizeProblem,
  checkFilename,
  EXECUTABLE_EXTENSIONS,
  inspectAttachment,
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS_PER_MESSAGE,
  redactFilename,
} from '../../../src/domain/agents/attachments.js';
import { PNG, SAMPLES } from './attachment-samples.js';

const LABELS: Record<string, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/gif': 'GIF',
  'image/webp': 'WebP',
  'application/pdf': 'PDF',
};

const ALLOWED_LIST = 'image/png, image/jpeg, image/gif, image/webp, application/pdf';

/**
 * An attachment with valid base64 `data`, as the intake hands it over: decoded, with its digest. The strict
 * decoding itself is the intake's (test/http/attachments.test.ts).
 */
interface SentAttachment {
  data: string;
  mimeType: string;
  filename?: string | null | undefined;
}

function inputOf({ data, mimeType, filename }: SentAttachment): AttachmentInput {
  const bytes = Buffer.from(data, 'base64');
  const content = { bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
  return filename === undefined ? { content, mimeType } : { content, mimeType, filename };
}

function problemsOf(input: SentAttachment) {
  const result = inspectAttachment(inputOf(input));
  return result.ok ? [] : result.problems;
}

function inspected(input: SentAttachment) {
  const result = inspectAttachment(inputOf(input));
  if (!result.ok)
    throw new Error(`expected the attachment to be accepted: ${JSON.stringify(result.problems)}`);
  return result.value;
}

const png = PNG.toString('base64');

describe('attachment limits', () => {
  it('allows exactly PNG, JPEG, GIF, WebP and PDF', () => {
    expect(ALLOWED_ATTACHMENT_TYPES).toEqual([
      'image/png',
      'image/jpeg',
      'image/gif',
      'image/webp',
      'application/pdf',
    ]);
  });

  it('caps a decoded attachment at 10 MiB', () => {
    expect(MAX_ATTACHMENT_BYTES).toBe(10 * 1024 * 1024);
  });

  it('allows at most 5 attachments per message', () => {
    expect(MAX_ATTACHMENTS_PER_MESSAGE).toBe(5);
  });
});

describe('inspectAttachment with real files', () => {
  it.each(SAMPLES)('accepts a real $name file declared as $mimeType', ({ mimeType, bytes }) => {
    const value = inspected({ data: bytes.toString('base64'), mimeType });

    expect(value.mimeType).toBe(mimeType);
    expect(value.content).toEqual(bytes);
    expect(value.size).toBe(bytes.length);
  });

  it.each(SAMPLES)('returns the SHA-256 of the decoded $name bytes', ({ mimeType, bytes }) => {
    const value = inspected({ data: bytes.toString('base64'), mimeType });

    expect(value.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
  });

  const mismatches = SAMPLES.flatMap((sample) =>
    ALLOWED_ATTACHMENT_TYPES.filter((mimeType) => mimeType !== sample.mimeType).map((mimeType) => ({
      ...sample,
      declared: mimeType,
      message: `data does not look like a ${LABELS[mimeType]} file (it looks like a ${LABELS[sample.mimeType]} file)`,
    })),
  );

  it.each(mismatches)('refuses a real $name file declared as $declared', ({ bytes, declared, message }) => {
    expect(problemsOf({ data: bytes.toString('base64'), mimeType: declared })).toEqual([
      { field: 'data', message },
    ]);
  });

  it.each([
    { case: 'plain text', bytes: Buffer.from('hello, world'), mimeType: 'image/png', label: 'PNG' },
    { case: 'a truncated PNG signature', bytes: PNG.subarray(0, 7), mimeType: 'image/png', label: 'PNG' },
    { case: 'a RIFF file that is not WebP', bytes: riffWave(), mimeType: 'image/webp', label: 'WebP' },
    {
      case: 'a GIF with an unknown version',
      bytes: Buffer.from('GIF88a\x01\x00'),
      mimeType: 'image/gif',
      label: 'GIF',
    },
    {
      case: 'a PDF without the version dash',
      bytes: Buffer.from('%PDF1.4\n'),
      mimeType: 'application/pdf',
      label: 'PDF',
    },
  ])('refuses $case declared as $mimeType', ({ bytes, mimeType, label }) => {
    expect(problemsOf({ data: bytes.toString('base64'), mimeType })).toEqual([
      { field: 'data', message: `data does not look like a ${label} file` },
    ]);
  });
});

describe('inspectAttachment mime_type', () => {
  it.each(['IMAGE/PNG', 'Image/Png', ' image/png ', '\timage/png\n'])(
    'accepts %j as image/png after trimming and lower-casing',
    (mimeType) => {
      expect(inspected({ data: png, mimeType }).mimeType).toBe('image/png');
    },
  );

  it.each([
    'image/jpg',
    'image/svg+xml',
    'image/bmp',
    'text/plain',
    'application/octet-stream',
    'image/png; charset=binary',
    'image/png;',
    'image/*',
    '',
  ])('refuses %j, listing the allowed types', (mimeType) => {
    expect(problemsOf({ data: png, mimeType })).toEqual([
      { field: 'mime_type', message: `mime_type must be one of ${ALLOWED_LIST}` },
    ]);
  });
});

describe('inspectAttachment of refused or oversized data', () => {
  it('reports why the intake refused the data, at the data field', () => {
    const result = inspectAttachment({
      content: { refused: 'data is not valid base64' },
      mimeType: 'image/png',
    });

    expect(result).toEqual({ ok: false, problems: [{ field: 'data', message: 'data is not valid base64' }] });
  });

  it('words the size rule for data after decoding and for files as they are', () => {
    expect(attachmentSizeProblem('data', 0)).toBe('data must not be empty');
    expect(attachmentSizeProblem('file', 0)).toBe('file must not be empty');
    expect(attachmentSizeProblem('data', MAX_ATTACHMENT_BYTES)).toBeNull();
    expect(attachmentSizeProblem('data', MAX_ATTACHMENT_BYTES + 1)).toBe(
      'attachment exceeds 10 MiB after decoding',
    );
    expect(attachmentSizeProblem('file', MAX_ATTACHMENT_BYTES + 1)).toBe('attachment exceeds 10 MiB');
  });
});

describe('inspectAttachment filename', () => {
  it.each([
    { case: 'missing', filename: undefined },
    { case: 'null', filename: null },
  ])('returns a null filename when it is $case', ({ filename }) => {
    expect(inspected({ data: png, mimeType: 'image/png', filename }).filename).toBeNull();
  });

  it('returns an acceptable filename unchanged', () => {
    expect(inspected({ data: png, mimeType: 'image/png', filename: 'Q3 board deck.png' }).filename).toBe(
      'Q3 board deck.png',
    );
  });

  it('returns the filename with personal data redacted', () => {
    const filename = 'scan for jane.doe@example.com 555-123-4567.png';

    expect(inspected({ data: png, mimeType: 'image/png', filename }).filename).toBe(
      'scan for [email] [phone].png',
    );
  });

  it('refuses a filename that fails a rule', () => {
    expect(problemsOf({ data: png, mimeType: 'image/png', filename: 'a.png.exe' })).toEqual([
      { field: 'filename', message: 'filename has an executable extension (.exe)' },
    ]);
  });
});

describe('checkFilename', () => {
  it.each([
    'report.pdf',
    'Q3 board deck (final).png',
    'résumé.pdf',
    '会議メモ.pdf',
    'photo 2024-01-15.jpg',
    'archive.tar.gz',
    'v1.2.3.pdf',
    '.hidden.png',
    'no-extension',
    'exe.pdf',
    'js.png',
    'executive summary.pdf',
    'a.jsx.pdf',
    'notes.pdf.',
    `${'a'.repeat(251)}.pdf`,
    `${'😀'.repeat(251)}.png`,
  ])('accepts %j', (name) => {
    expect(checkFilename(name)).toBeNull();
  });

  it.each([
    { case: 'an empty name', name: '', reason: 'filename must not be empty' },
    { case: 'a blank name', name: '   ', reason: 'filename must not be empty' },
    { case: 'a forward slash', name: 'a/b.pdf', reason: 'filename must not contain path separators' },
    { case: 'a backslash', name: 'a\\b.pdf', reason: 'filename must not contain path separators' },
    {
      case: 'a relative path',
      name: '../../etc/passwd',
      reason: 'filename must not contain path separators',
    },
    { case: 'an absolute path', name: '/etc/passwd', reason: 'filename must not contain path separators' },
    { case: 'a Windows path', name: 'C:\\Users\\a.pdf', reason: 'filename must not contain path separators' },
    { case: 'a single dot', name: '.', reason: 'filename must not be . or ..' },
    { case: 'two dots', name: '..', reason: 'filename must not be . or ..' },
    { case: 'three dots', name: '...', reason: 'filename must not consist only of dots and spaces' },
    { case: 'dots and spaces', name: '. .', reason: 'filename must not consist only of dots and spaces' },
    { case: 'a NUL byte', name: 'a\u0000.pdf', reason: 'filename must not contain control characters' },
    { case: 'a tab', name: 'a\tb.pdf', reason: 'filename must not contain control characters' },
    { case: 'a line feed', name: 'a\nb.pdf', reason: 'filename must not contain control characters' },
    { case: 'a carriage return', name: 'a\rb.pdf', reason: 'filename must not contain control characters' },
    { case: 'an escape', name: 'a\u001b[31m.pdf', reason: 'filename must not contain control characters' },
    { case: 'DEL', name: 'a\u007f.pdf', reason: 'filename must not contain control characters' },
    { case: 'a C1 control', name: 'a\u0085.pdf', reason: 'filename must not contain control characters' },
    {
      case: 'a line separator',
      name: 'a\u2028b.pdf',
      reason: 'filename must not contain control characters',
    },
    {
      case: 'a paragraph separator',
      name: 'a\u2029b.pdf',
      reason: 'filename must not contain control characters',
    },
    {
      case: 'a right-to-left override',
      name: 'invoice\u202egpj.pdf',
      reason: 'filename must not contain control characters',
    },
    {
      case: 'a bidirectional isolate',
      name: 'invoice\u2067x.pdf',
      reason: 'filename must not contain control characters',
    },
    { case: 'a lone surrogate', name: 'a\ud800.pdf', reason: 'filename must be valid Unicode text' },
    {
      case: '256 characters',
      name: `${'a'.repeat(252)}.pdf`,
      reason: 'filename must be at most 255 characters',
    },
    {
      case: '256 astral characters',
      name: `${'😀'.repeat(252)}.png`,
      reason: 'filename must be at most 255 characters',
    },
  ])('refuses $case', ({ name, reason }) => {
    expect(checkFilename(name)).toBe(reason);
  });

  it.each([
    ...['exe', 'js', 'sh', 'bat', 'cmd', 'com', 'msi', 'scr', 'ps1', 'vbs', 'jar', 'app', 'dll', 'py', 'php'],
    ...['html', 'htm', 'svg'],
  ])('refuses the executable extension .%s', (extension) => {
    expect(checkFilename(`file.${extension}`)).toBe(`filename has an executable extension (.${extension})`);
  });

  it.each([...EXECUTABLE_EXTENSIONS])('refuses every listed extension, here .%s', (extension) => {
    expect(checkFilename(`file.${extension}`)).toBe(`filename has an executable extension (.${extension})`);
  });

  it.each([
    { case: 'doubled after a harmless one', name: 'a.pdf.exe', extension: 'exe' },
    { case: 'in upper case', name: 'A.PDF.EXE', extension: 'exe' },
    { case: 'in mixed case', name: 'a.Exe', extension: 'exe' },
    { case: 'followed by a trailing dot', name: 'a.exe.', extension: 'exe' },
    { case: 'followed by trailing dots and spaces', name: 'a.exe. . ', extension: 'exe' },
    { case: 'followed by a trailing space', name: 'a.exe ', extension: 'exe' },
    { case: 'before a harmless one', name: 'a.exe.pdf', extension: 'exe' },
    { case: 'padded with spaces inside the chain', name: 'a.exe .pdf', extension: 'exe' },
    { case: 'deep in a long chain', name: 'a.tar.js.gz.png', extension: 'js' },
    { case: 'as a dotfile', name: '.sh', extension: 'sh' },
  ])('refuses an executable extension $case', ({ name, extension }) => {
    expect(checkFilename(name)).toBe(`filename has an executable extension (.${extension})`);
  });
});

describe('redactFilename', () => {
  it.each([
    { case: 'an e-mail address', name: 'invoice jane.doe@example.com.pdf', expected: 'invoice [email].pdf' },
    {
      case: 'an e-mail address with a tag and a subdomain',
      name: 'from john+billing@mail.example.co.uk.png',
      expected: 'from [email].png',
    },
    { case: 'an e-mail address that ends the name', name: 'jane@example.com', expected: '[email]' },
    {
      case: 'two e-mail addresses',
      name: 'a@example.com to b@example.org.pdf',
      expected: '[email] to [email].pdf',
    },
  ])('redacts $case', ({ name, expected }) => {
    expect(redactFilename(name)).toBe(expected);
  });

  it.each([
    { case: 'dashes', name: 'call 555-123-4567.pdf', expected: 'call [phone].pdf' },
    { case: 'dots', name: '555.123.4567.png', expected: '[phone].png' },
    { case: 'spaces', name: 'tel 555 123 4567.jpg', expected: 'tel [phone].jpg' },
    { case: 'an area code in parentheses', name: '(555) 123-4567 notes.pdf', expected: '[phone] notes.pdf' },
    { case: 'a leading 1', name: '1-555-123-4567.gif', expected: '[phone].gif' },
    { case: 'a country code', name: 'contact +44 20 7946 0958.pdf', expected: 'contact [phone].pdf' },
    { case: 'a compact country code', name: '+15551234567.webp', expected: '[phone].webp' },
    { case: 'a trunk prefix', name: '+44 (0)20 7946 0958.pdf', expected: '[phone].pdf' },
    {
      case: 'a country code followed by a compact date',
      name: '+44 20 7946 0958 20240115.pdf',
      expected: '[phone] 20240115.pdf',
    },
    {
      case: 'a country code followed by a dashed date',
      name: '+1 (555) 123-4567 - 2024-01-15.pdf',
      expected: '[phone] - 2024-01-15.pdf',
    },
  ])('redacts a phone number written with $case', ({ name, expected }) => {
    expect(redactFilename(name)).toBe(expected);
  });

  it.each([
    { case: '16 bare digits', name: '4111111111111111.png', expected: '[card].png' },
    {
      case: '16 digits in groups of four',
      name: 'card 4111 1111 1111 1111.pdf',
      expected: 'card [card].pdf',
    },
    { case: 'dashes', name: '4111-1111-1111-1111 receipt.pdf', expected: '[card] receipt.pdf' },
    { case: '15 digits in Amex groups', name: 'amex 3782 822463 10005.pdf', expected: 'amex [card].pdf' },
    { case: '13 digits', name: 'old visa 4222222222222.jpg', expected: 'old visa [card].jpg' },
    { case: '19 digits', name: '4111111111111111110.pdf', expected: '[card].pdf' },
    { case: 'a year in front', name: '2024 4111 1111 1111 1111.pdf', expected: '2024 [card].pdf' },
    {
      case: 'two cards',
      name: '4111111111111111 and 6011000990139424.pdf',
      expected: '[card] and [card].pdf',
    },
  ])('redacts a Luhn-valid card number written as $case', ({ name, expected }) => {
    expect(redactFilename(name)).toBe(expected);
  });

  it.each([
    { case: 'on its own', name: 'ssn 123-45-6789.pdf', expected: 'ssn [ssn].pdf' },
    { case: 'before the extension', name: '123-45-6789.png', expected: '[ssn].png' },
  ])('redacts an SSN-like number $case', ({ name, expected }) => {
    expect(redactFilename(name)).toBe(expected);
  });

  it('redacts every kind in one name and keeps the extension', () => {
    expect(redactFilename('jane@example.com 555-123-4567 4111111111111111 123-45-6789.pdf')).toBe(
      '[email] [phone] [card] [ssn].pdf',
    );
  });

  it.each([
    { case: 'a 16-digit number that fails the Luhn check', name: '4111111111111112.pdf' },
    { case: 'grouped digits that fail the Luhn check', name: 'order 4111 1111 1111 1112.pdf' },
    { case: 'a 12-digit number', name: 'ref 411111111116.pdf' },
    { case: 'a 20-digit number', name: 'ref 41111111111111110000.pdf' },
    { case: 'a date', name: 'scan 2024-01-15.pdf' },
    { case: 'a camera file name', name: 'IMG_20240115_123456.jpg' },
    { case: 'a screenshot time', name: 'Screenshot 2024-01-15 at 10.30.00.png' },
    { case: 'a unix timestamp', name: 'export 1700000000.png' },
    { case: 'a version number', name: 'spec v1.2.3.pdf' },
    { case: 'a short number after a plus', name: 'C++ 17.pdf' },
    { case: 'an at sign without a domain', name: 'meet @ noon.png' },
  ])('leaves $case alone', ({ name }) => {
    expect(redactFilename(name)).toBe(name);
  });
});

function riffWave(): Buffer {
  return Buffer.concat([Buffer.from('RIFF'), Buffer.from([4, 0, 0, 0]), Buffer.from('WAVEfmt ')]);
}
