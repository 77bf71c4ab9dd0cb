import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('HTTP client limits in the configuration', () => {
  it('defaults to 10 s for headers, 30 s for the whole request, 20 unauthenticated requests per address and a lingering close of 5 s and 4 MiB', () => {
    expect(loadConfig({}).http).toEqual({
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 30_000,
      maxAnonymousPerAddress: 20,
      lingerMs: 5000,
      lingerBytes: 4 * 1024 * 1024,
    });
  });

  it('refuses a headers timeout longer than the whole request’s', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_BODY_TIMEOUT_MS: '4000' })).toThrow(
      ConfigError,
    );
  });
});
