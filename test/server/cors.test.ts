import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestAppAndCaller } from '../support/fixtures.js';

const corsHeaders = (response: Response) =>
  Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));

async function fromOrigin(t: TestApp, origin: string, caller: Caller) {
  const response = await t.app.yoga.fetch('http://yoga/graphql', {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', authorization: `Bearer ${caller.token}` },
    body: JSON.stringify({ query: '{ me { sub } }' }),
  });
  await response.text();
  return response;
}

async function preflight(t: TestApp, origin: string) {
  return t.app.yoga.fetch('http://yoga/api/v1/agents/ceo/chat', {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });
}

describe('CORS by default', () => {
  let t: TestApp;
  let member: Caller;
  withTestAppAndCaller(['member'], (made) => ({ t, caller: member } = made));

  it('grants no origin cross-origin access, and never credentials', async () => {
    const response = await fromOrigin(t, 'https://evil.example', member);
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual({});
    expect(corsHeaders(await preflight(t, 'https://evil.example'))).toEqual({});
  });
});

describe('CORS with CORS_ORIGINS', () => {
  let t: TestApp;
  let member: Caller;
  withTestAppAndCaller(['member'], (made) => ({ t, caller: member } = made), {
    env: { CORS_ORIGINS: 'https://app.example, https://admin.example' },
  });

  it('grants a listed origin access with credentials', async () => {
    const response = await fromOrigin(t, 'https://app.example', member);
    expect(corsHeaders(response)).toMatchObject({
      'access-control-allow-origin': 'https://app.example',
      'access-control-allow-credentials': 'true',
    });
    expect(response.headers.get('vary')).toContain('Origin');
    const allowed = await preflight(t, 'https://admin.example');
    expect(corsHeaders(allowed)).toMatchObject({
      'access-control-allow-origin': 'https://admin.example',
      'access-control-allow-credentials': 'true',
      'access-control-allow-methods': expect.stringContaining('POST'),
      'access-control-allow-headers': expect.stringContaining('authorization'),
    });
  });

  it('grants an unlisted origin nothing', async () => {
    for (const origin of ['https://evil.example', 'https://app.example.evil.example', 'null']) {
      expect(corsHeaders(await fromOrigin(t, origin, member))).toEqual({});
      expect(corsHeaders(await preflight(t, origin))).toEqual({});
    }
  });
});

describe('CORS_ORIGINS', () => {
  it('accepts only origins', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example,http://localhost:5173' }).corsOrigins).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
    expect(loadConfig({}).corsOrigins).toEqual([]);
    for (const wrong of ['*', 'https://a.example/', 'https://a.example/app', 'a.example'])
      expect(() => loadConfig({ CORS_ORIGINS: wrong })).toThrow(ConfigError);
  });
});
