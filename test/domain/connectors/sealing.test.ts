import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config.js';
import {
  fingerprintOf,
  type Keyring,
  parseKeyring,
  seal,
  UnsealError,
  unseal,
} from '../../../src/domain/connectors/sealing.js';

const keyOf = () => randomBytes(32).toString('base64');
const keyring = (value: string): Keyring => {
  const parsed = parseKeyring(value);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
};

describe('CONNECTOR_SECRETS_KEY', () => {
  it('is a list of id:base64 keys, the first current', () => {
    const parsed = keyring(` k2026:${keyOf()} , k2025:${keyOf()}`);
    expect(parsed.map((key) => [key.id, key.key.length])).toEqual([
      ['k2026', 32],
      ['k2025', 32],
    ]);
  });

  it.each([
    ['a key without an id', keyOf(), 'entry 1 must be id:base64key'],
    ['an id with a space', `my key:${keyOf()}`, 'entry 1 must be id:base64key'],
    ['a 16-byte key', `k1:${randomBytes(16).toString('base64')}`, "key 'k1' must be 32 bytes"],
    ['text that is not base64', `k1:${'!'.repeat(44)}`, "key 'k1' must be 32 bytes"],
    ['an id given twice', `k1:${keyOf()},k1:${keyOf()}`, "key id 'k1' is given twice"],
    ['only commas', ',,', 'must hold at least one'],
  ])('refuses %s', (_name, value, reason) => {
    expect(parseKeyring(value)).toContain(reason);
  });

  it('refuses a bad value at start without echoing it', () => {
    const secret = randomBytes(16).toString('base64');
    let error: unknown;
    try {
      loadConfig({ CONNECTOR_SECRETS_KEY: `k1:${secret}` });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain("CONNECTOR_SECRETS_KEY: key 'k1' must be 32 bytes");
    expect((error as Error).message).not.toContain(secret);
  });

  it('is optional: unset, no key is configured', () => {
    expect(loadConfig({}).connectorSecretsKeys).toEqual([]);
    expect(loadConfig({ CONNECTOR_SECRETS_KEY: '  ' }).connectorSecretsKeys).toEqual([]);
  });
});

describe('sealing', () => {
  const one = keyring(`k1:${keyOf()}`);

  it('opens what it sealed, and seals the same text differently each time', () => {
    const first = seal(one, 'sk_live_abc', 'connector A');
    const second = seal(one, 'sk_live_abc', 'connector A');
    expect(first.keyId).toBe('k1');
    expect(Buffer.from(first.sealed).equals(Buffer.from(second.sealed))).toBe(false);
    expect(Buffer.from(first.sealed).includes('sk_live_abc')).toBe(false);
    expect(unseal(one, first, 'connector A')).toBe('sk_live_abc');
  });

  it('seals under the new key after a rotation and still opens what the old key sealed', () => {
    const old = seal(one, 'old secret', 'c');
    const rotated = keyring(`k2:${keyOf()},k1:${one[0]?.key.toString('base64')}`);
    expect(unseal(rotated, old, 'c')).toBe('old secret');
    const fresh = seal(rotated, 'new secret', 'c');
    expect(fresh.keyId).toBe('k2');
    expect(unseal(rotated, fresh, 'c')).toBe('new secret');
  });

  it('refuses a value sealed under a key that is no longer configured', () => {
    const sealed = seal(one, 'secret', 'c');
    const other = keyring(`k2:${keyOf()}`);
    expect(() => unseal(other, sealed, 'c')).toThrow(
      expect.objectContaining({ reason: 'unknown_key', message: expect.stringContaining("'k1'") }),
    );
  });

  const flip = (index: (bytes: Uint8Array) => number) => (bytes: Uint8Array) => {
    const at = index(bytes);
    bytes[at] = (bytes[at] ?? 0) ^ 1;
  };

  it.each([
    ['a flipped ciphertext bit', flip((bytes) => bytes.length - 1)],
    ['a flipped tag bit', flip(() => 12)],
    ['a flipped nonce bit', flip(() => 0)],
  ])('refuses a value with %s', (_name, tamper) => {
    const sealed = seal(one, 'secret', 'c');
    tamper(sealed.sealed);
    expect(() => unseal(one, sealed, 'c')).toThrow(UnsealError);
    expect(() => unseal(one, sealed, 'c')).toThrow(expect.objectContaining({ reason: 'tampered' }));
  });

  it('refuses a value opened for another row, or truncated', () => {
    const sealed = seal(one, 'secret', 'connector A');
    expect(() => unseal(one, sealed, 'connector B')).toThrow(expect.objectContaining({ reason: 'tampered' }));
    const truncated = { keyId: 'k1', sealed: sealed.sealed.slice(0, 20) };
    expect(() => unseal(one, truncated, 'connector A')).toThrow(
      expect.objectContaining({ reason: 'tampered' }),
    );
  });

  it('refuses a value sealed under another key with the same id', () => {
    const sealed = seal(one, 'secret', 'c');
    expect(() => unseal(keyring(`k1:${keyOf()}`), sealed, 'c')).toThrow(
      expect.objectContaining({ reason: 'tampered' }),
    );
  });
});

describe('fingerprints', () => {
  const one = keyring(`k1:${keyOf()}`);

  it('are stable for one secret of one connector and differ otherwise', () => {
    const fingerprint = fingerprintOf(one, 'hunter2', 'connector A');
    expect(fingerprint).toMatch(/^hmac:[0-9a-f]{16}$/);
    expect(fingerprintOf(one, 'hunter2', 'connector A')).toBe(fingerprint);
    expect(fingerprintOf(one, 'hunter3', 'connector A')).not.toBe(fingerprint);
    expect(fingerprintOf(one, 'hunter2', 'connector B')).not.toBe(fingerprint);
  });

  it('depend on the key, so that they cannot be recomputed from a guess without it', () => {
    expect(fingerprintOf(keyring(`k1:${keyOf()}`), 'hunter2', 'c')).not.toBe(
      fingerprintOf(one, 'hunter2', 'c'),
    );
  });
});
