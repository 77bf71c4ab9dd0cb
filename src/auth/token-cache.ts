import type { Viewer } from './viewer.js';

export interface TokenCacheOptions {
  /** Most tokens remembered; the least recently used one is forgotten first. Default 5000. */
  maxEntries?: number;
}

/**
 * Verified tokens by their exact text, each until its `exp` and never beyond: a hit skips the signature
 * check, nothing else. Only tokens that passed verification are stored. There is no revocation list: a
 * token stays valid until it expires, cached or not.
 */
export class TokenCache {
  readonly #entries = new Map<string, { viewer: Viewer; expiresAt: number }>();
  readonly #maxEntries: number;

  constructor({ maxEntries = 5000 }: TokenCacheOptions = {}) {
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The viewer of a token verified before, while its `exp` has not passed. */
  get(token: string): Viewer | undefined {
    const entry = this.#entries.get(token);
    if (!entry) return undefined;
    this.#entries.delete(token);
    if (Date.now() >= entry.expiresAt) return undefined;
    this.#entries.set(token, entry); // most recently used last
    return entry.viewer;
  }

  /** Remembers a verified token until `exp` (seconds since the epoch, as in the claim). */
  set(token: string, viewer: Viewer, exp: number): void {
    const expiresAt = exp * 1000;
    if (!Number.isFinite(expiresAt) || Date.now() >= expiresAt) return;
    this.#entries.delete(token);
    this.#entries.set(token, { viewer, expiresAt });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }
}
