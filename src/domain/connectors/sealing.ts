import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/** One AES-256 key of CONNECTOR_SECRETS_KEY and the id stored beside every secret it seals. */
export interface SealingKey {
  id: string;
  key: Buffer;
}

/** The configured keys, current first; every key opens what it sealed, only the first seals. */
export type Keyring = readonly SealingKey[];

const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Parses CONNECTOR_SECRETS_KEY: comma-separated `id:base64` entries, each key exactly 32 bytes, ids
 * unique (letters, digits, `_`, `-`, at most 32). The first entry is the current key. Answers the keyring,
 * or the reason the value is refused (which never echoes a key).
 */
export function parseKeyring(value: string): Keyring | string {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) return 'must hold at least one id:base64key entry';
  const keys: SealingKey[] = [];
  for (const [index, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const id = colon === -1 ? '' : entry.slice(0, colon);
    if (!KEY_ID.test(id)) {
      return `entry ${index + 1} must be id:base64key, the id of letters, digits, _ or - (at most 32)`;
    }
    const encoded = entry.slice(colon + 1);
    const key = Buffer.from(encoded, 'base64');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || key.length !== KEY_BYTES) {
      return `key '${id}' must be ${KEY_BYTES} bytes in base64 (e.g. openssl rand -base64 32)`;
    }
    if (keys.some((known) => known.id === id)) return `key id '${id}' is given twice`;
    keys.push({ id, key });
  }
  return keys;
}

/** A sealed secret as stored: the id of the key that sealed it and nonce ‖ tag ‖ ciphertext. */
export interface SealedSecret {
  keyId: string;
  sealed: Uint8Array<ArrayBuffer>;
}

/** Why a sealed secret cannot be opened: its key is not configured, or it fails authentication. */
export class UnsealError extends Error {
  override name = 'UnsealError';
  constructor(
    readonly reason: 'unknown_key' | 'tampered',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Seals `plaintext` with AES-256-GCM under the current key and a fresh random nonce. `context` is bound
 * as additional authenticated data: a sealed value copied to another row (another connector, tenant or
 * auth type) no longer opens.
 */
export function seal(keyring: Keyring, plaintext: string, context: string): SealedSecret {
  const current = keyring[0];
  if (!current) throw new Error('no sealing key configured');
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', current.key, nonce);
  cipher.setAAD(Buffer.from(`${current.id}\n${context}`));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const sealed = new Uint8Array(NONCE_BYTES + TAG_BYTES + ciphertext.length);
  sealed.set(nonce, 0);
  sealed.set(cipher.getAuthTag(), NONCE_BYTES);
  sealed.set(ciphertext, NONCE_BYTES + TAG_BYTES);
  return { keyId: current.id, sealed };
}

/** Opens what `seal` sealed with the same `context`; throws UnsealError, never answers altered text. */
export function unseal(keyring: Keyring, secret: SealedSecret, context: string): string {
  const key = keyring.find((candidate) => candidate.id === secret.keyId);
  if (!key) {
    throw new UnsealError(
      'unknown_key',
      `sealed under key '${secret.keyId}', which CONNECTOR_SECRETS_KEY does not hold`,
    );
  }
  const bytes = Buffer.from(secret.sealed);
  if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new UnsealError('tampered', 'sealed value is truncated');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, bytes.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(`${key.id}\n${context}`));
    decipher.setAuthTag(bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
    return Buffer.concat([
      decipher.update(bytes.subarray(NONCE_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    throw new UnsealError('tampered', `sealed value fails authentication under key '${key.id}'`);
  }
}

/**
 * First 8 bytes (hex) of an HMAC-SHA256 of the secret under a key derived from the current sealing key,
 * prefixed `hmac:`. Without the key it cannot be recomputed, so even a short password cannot be guessed
 * from it. `context` (the connector) keeps equal secrets of two connectors from sharing a fingerprint.
 */
export function fingerprintOf(keyring: Keyring, plaintext: string, context: string): string {
  const current = keyring[0];
  if (!current) throw new Error('no sealing key configured');
  const fingerprintKey = Buffer.from(
    hkdfSync('sha256', current.key, Buffer.alloc(0), 'boardroom connector credential fingerprint', 32),
  );
  const digest = createHmac('sha256', fingerprintKey).update(`${context}\n${plaintext}`).digest('hex');
  return `hmac:${digest.slice(0, 16)}`;
}
