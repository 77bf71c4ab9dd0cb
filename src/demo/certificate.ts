import { createHash, generateKeyPairSync, randomBytes, sign } from 'node:crypto';

/**
 * A self-signed certificate for the demo upstream, made with node:crypto alone (no openssl on PATH needed):
 * an EC P-256 key and an X.509 v3 certificate for one DNS name, valid from an hour ago for `days` days.
 * Only the demo's own gateway trusts it (its egress client is given it as an extra authority).
 */
export function selfSignedCertificate(host: string, days = 7): { cert: string; key: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const name = sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from(host, 'utf8')))));
  const now = Date.now();
  const extensions = sequence(
    // basicConstraints, critical: CA (it is its own trust anchor)
    sequence(
      oid('2.5.29.19'),
      tlv(0x01, Buffer.from([0xff])),
      octets(sequence(tlv(0x01, Buffer.from([0xff])))),
    ),
    // subjectAltName: dNSName
    sequence(oid('2.5.29.17'), octets(sequence(tlv(0x82, Buffer.from(host, 'ascii'))))),
    // subjectKeyIdentifier
    sequence(oid('2.5.29.14'), octets(octets(createHash('sha1').update(spki).digest()))),
  );
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  const serial = randomBytes(16);
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    name,
    sequence(utcTime(new Date(now - 3_600_000)), utcTime(new Date(now + days * 86_400_000))),
    name,
    spki,
    tlv(0xa3, extensions),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, ecdsaWithSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const base64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return {
    cert: `-----BEGIN CERTIFICATE-----\n${base64.trimEnd()}\n-----END CERTIFICATE-----\n`,
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** One DER element: tag, definite length, content. */
function tlv(tag: number, content: Buffer): Buffer {
  const length = content.length;
  let header: number[];
  if (length < 0x80) header = [length];
  else {
    const bytes: number[] = [];
    for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
    header = [0x80 | bytes.length, ...bytes];
  }
  return Buffer.concat([Buffer.from([tag, ...header]), content]);
}

const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const octets = (content: Buffer) => tlv(0x04, content);

/**
 * A non-negative INTEGER from big-endian bytes, in DER's one encoding: the fewest bytes, a leading zero only
 * to keep the sign bit clear (a redundant one is refused by parsers as "illegal padding").
 */
export function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start += 1;
  const value = bytes.subarray(start);
  if (value.length === 0) return tlv(0x02, Buffer.from([0]));
  return tlv(0x02, (value[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [first * 40 + second];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let value = arc >> 7; value > 0; value >>= 7) groups.unshift((value & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime (YYMMDDHHMMSSZ), valid for dates before 2050. */
function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(2, 14);
  return tlv(0x17, Buffer.from(`${text}Z`, 'ascii'));
}
