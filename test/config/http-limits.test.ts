import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('HTTP client limits in the configuration', () => {
  it('defaults to 10 s for headers, 30 s for the whole request and 20 unauthenticated requests per address', () => {
    expect(loadConfig({}).http).toEqual({
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 30_000,
      maxAnonymousPerAddress: 20,
    });
  });

  it('refuses a headers timeout longer than the whole request’s', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_BODY_TIMEOUT_MS: '4000' })).toThrow(
      ConfigError,
    );
  });
});
