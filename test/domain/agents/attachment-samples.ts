/**
 * Real, decodable 1x1 images and a one-page PDF, small enough to read byte by byte.
 */

const hex = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'hex');

// 1x1 red RGB PNG: signature, IHDR, zlib-compressed IDAT, IEND.
export const PNG = hex(`
  89504e470d0a1a0a 0000000d49484452 0000000100000001 0802000000907753 de
  0000000c49444154 789c63f8cfc00000 03010100c9fe92ef
  0000000049454e44 ae426082
`);

// 1x1 grey baseline JPEG: SOI, a quantisation table of ones, SOF0 (one component), one-code DC and AC Huffman
// tables, SOS, a single block (DC difference 0, end of block), EOI.
export const JPEG = hex(`
  ffd8
  ffdb0043 00 ${'01'.repeat(64)}
  ffc0000b 08 0001 0001 01 01 11 00
  ffc40014 00 01 ${'00'.repeat(15)} 00
  ffc40014 10 01 ${'00'.repeat(15)} 00
  ffda0008 01 01 00 00 3f 00
  3f
  ffd9
`);

// 1x1 red GIF87a with a two-colour global palette.
export const GIF87A = hex(`
  474946383761 0100 0100 81 00 00
  ff0000 000000 000000 000000
  2c 0000 0000 0100 0100 00
  08 04 00010404 00
  3b
`);

// 1x1 transparent GIF89a with a graphic control extension.
export const GIF89A = hex(`
  474946383961 0100 0100 80 00 00
  000000 ffffff
  21f904 01 0000 00 00
  2c 0000 0000 0100 0100 00
  02 01 44 00
  3b
`);

// 1x1 red lossless WebP: RIFF header, WEBP, one VP8L chunk.
export const WEBP = hex(`
  52494646 1c000000 57454250
  5650384c 0f000000 2f000000000710fd8ffe0722a2ff0100
`);

/** A one-page `%PDF-1.4` document with a correct cross-reference table. */
export const PDF = minimalPdf();

function minimalPdf(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 72] >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(body.length);
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xrefOffset = body.length;
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xrefOffset}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

export const SAMPLES = [
  { name: 'PNG', mimeType: 'image/png', bytes: PNG },
  { name: 'JPEG', mimeType: 'image/jpeg', bytes: JPEG },
  { name: 'GIF87a', mimeType: 'image/gif', bytes: GIF87A },
  { name: 'GIF89a', mimeType: 'image/gif', bytes: GIF89A },
  { name: 'WebP', mimeType: 'image/webp', bytes: WEBP },
  { name: 'PDF', mimeType: 'application/pdf', bytes: PDF },
] as const;
