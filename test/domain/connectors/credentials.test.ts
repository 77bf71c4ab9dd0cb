import { describe, expect, it } from 'vitest';
import {
  oauth2TokenRequest,
  readTokenResponse,
  staticRequestParts,
} from '../../../src/domain/connectors/credentials.js';

describe('request parts of a stored secret', () => {
  it('puts an api key in the named header or query parameter', () => {
    expect(staticRequestParts({ authType: 'api_key', key: 'k', in: 'header', name: 'X-Api-Token' })).toEqual({
      headers: { 'X-Api-Token': 'k' },
      query: {},
      secrets: ['k'],
    });
    expect(staticRequestParts({ authType: 'api_key', key: 'k', in: 'query', name: 'api_key' })).toEqual({
      headers: {},
      query: { api_key: 'k' },
      secrets: ['k'],
    });
  });

  it('names the secret values to redact: the token, the password and the base64 pair', () => {
    expect(staticRequestParts({ authType: 'bearer', token: 't0k' }).secrets).toEqual(['t0k']);
    expect(staticRequestParts({ authType: 'basic', username: 'ana', password: 'pw' }).secrets).toEqual([
      'pw',
      Buffer.from('ana:pw').toString('base64'),
    ]);
  });

  it('sends a bearer token and basic credentials in Authorization', () => {
    expect(staticRequestParts({ authType: 'bearer', token: 't0k' }).headers).toEqual({
      authorization: 'Bearer t0k',
    });
    expect(staticRequestParts({ authType: 'basic', username: 'ana', password: 'pä ss' }).headers).toEqual({
      authorization: `Basic ${Buffer.from('ana:pä ss').toString('base64')}`,
    });
  });
});

describe('the client credentials grant', () => {
  it('posts the grant with the client authenticated by Basic, form-encoded first', () => {
    const request = oauth2TokenRequest({
      authType: 'oauth2_client_credentials',
      tokenUrl: 'https://auth.example.com/token',
      clientId: 'app:1',
      clientSecret: 's e/c',
      scope: 'read write',
    });
    expect(request).toEqual({
      url: 'https://auth.example.com/token',
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from('app%3A1:s+e%2Fc').toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: 'grant_type=client_credentials&scope=read+write',
    });
  });

  it('reads a token, reused until 30 s before it expires', () => {
    expect(
      readTokenResponse(
        { status: 200, body: { access_token: 'at', token_type: 'Bearer', expires_in: 3600 } },
        0,
      ),
    ).toEqual({ token: 'at', reuseUntil: 3_570_000 });
    expect(readTokenResponse({ status: 200, body: { access_token: 'at' } }, 0)).toEqual({
      token: 'at',
      reuseUntil: null,
    });
  });

  it.each([
    [{ status: 401, body: { error: 'invalid_client' } }, 'the token endpoint answered 401'],
    [{ status: 200, body: { token_type: 'bearer' } }, 'the token endpoint answered no access_token'],
    [{ status: 200, body: 'at' }, 'the token endpoint answered no access_token'],
    [{ status: 200, body: { access_token: 'at', token_type: 'mac' } }, 'token_type mac, not bearer'],
  ])('refuses a response that is not a bearer token: %j', (response, reason) => {
    expect(readTokenResponse(response, 0)).toContain(reason);
  });
});
