import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TokenCache } from '../../src/auth/token-cache.js';
import { AuthenticationError, createTokenVerifier, signToken } from '../../src/auth/tokens.js';
import { TEST_SECRET } from '../support/app.js';

const auth = { jwtSecret: TEST_SECRET, jwksUrl: undefined, issuer: undefined, audience: undefined };
const viewer = { sub: 'alice', tenantId: randomUUID(), roles: ['member' as const] };
const inSeconds = (seconds: number) => Math.floor(Date.now() / 1000) + seconds;

afterEach(() => {
  vi.useRealTimers();
});

/** A member's token for the viewer's tenant, living `ttl` (the signer's default without one). */
const aliceToken = (ttl?: string) =>
  signToken(TEST_SECRET, {
    tenantId: viewer.tenantId,
    sub: 'alice',
    roles: ['member'],
    ...(ttl ? { ttl } : {}),
  });

describe('token cache', () => {
  it('remembers a verified token and answers it without verifying again', async () => {
    const cache = new TokenCache();
    const verifier = createTokenVerifier(auth, { cache });
    const token = await aliceToken();
    const first = await verifier.verify(`Bearer ${token}`);
    expect(cache.size).toBe(1);
    expect(cache.get(token)).toBe(first);
    // Same token, another spelling of the scheme: the same cached viewer.
    expect(await verifier.verify(`bearer   ${token}`)).toBe(first);
  });

  it('refuses a cached token once its exp has passed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const cache = new TokenCache();
    const verifier = createTokenVerifier(auth, { cache });
    const token = await aliceToken('30s');
    await verifier.verify(`Bearer ${token}`);
    expect(cache.size).toBe(1);
    vi.setSystemTime(Date.now() + 30_000);
    await expect(verifier.verify(`Bearer ${token}`)).rejects.toThrow(
      new AuthenticationError('Token has expired'),
    );
    expect(cache.size).toBe(0);
  });

  it('never caches a token with a bad signature', async () => {
    const cache = new TokenCache();
    const verifier = createTokenVerifier(auth, { cache });
    const forged = await new SignJWT({ tenant_id: viewer.tenantId, roles: ['chairman'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('mallory')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a-different-secret-that-is-long-enough-to-sign'));
    for (let i = 0; i < 2; i++) {
      await expect(verifier.verify(`Bearer ${forged}`)).rejects.toThrow(AuthenticationError);
    }
    expect(cache.size).toBe(0);
  });

  it('never caches a token whose claims are refused', async () => {
    const cache = new TokenCache();
    const verifier = createTokenVerifier(auth, { cache });
    const token = await signToken(TEST_SECRET, { tenantId: 'not-a-uuid', sub: 'alice', roles: [] });
    await expect(verifier.verify(`Bearer ${token}`)).rejects.toThrow(AuthenticationError);
    expect(cache.size).toBe(0);
  });

  it('forgets the least recently used token beyond its bound', () => {
    const cache = new TokenCache({ maxEntries: 2 });
    cache.set('a', viewer, inSeconds(60));
    cache.set('b', viewer, inSeconds(60));
    cache.get('a');
    cache.set('c', viewer, inSeconds(60));
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([viewer, undefined, viewer]);
    expect(cache.size).toBe(2);
  });

  it('does not store a token that has already expired', () => {
    const cache = new TokenCache();
    cache.set('old', viewer, inSeconds(-1));
    expect(cache.size).toBe(0);
  });
});
