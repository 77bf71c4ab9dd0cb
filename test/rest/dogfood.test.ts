import { describe, expect, it } from 'vitest';
import { graphql } from '../../src/generated/graphql/index.js';
import type { Caller, TestApp } from '../support/app.js';
import { withTestApp } from '../support/fixtures.js';

const SetLiveMode = graphql(`
  mutation SetLiveModeForTest($enabled: Boolean!) {
    setDogfoodLiveMode(enabled: $enabled) {
      id
      dogfoodLiveMode
    }
  }
`);

let t: TestApp;
let chairman: Caller;

withTestApp(async (app) => {
  t = app;
  chairman = await t.caller(['chairman']);
  await t.graphql(SetLiveMode, { enabled: true }, chairman);
});

describe('POST /api/v1/dogfood/agents/{role}/pause', () => {
  it('pauses a C-suite role and answers the PauseResponse', async () => {
    const response = await t.rest('POST', '/api/v1/dogfood/agents/CFO/pause', {
      caller: chairman,
      body: { actor_user_id: 'chair-1', reason: 'review' },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      role: 'cfo',
      paused: true,
      paused_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      event_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it('answers 422 with Pydantic items when actor_user_id is missing', async () => {
    const response = await t.rest('POST', '/api/v1/dogfood/agents/ceo/pause', {
      caller: chairman,
      body: { reason: 'x' },
    });
    expect(response.status).toBe(422);
    expect(response.body).toMatchInlineSnapshot(`
      {
        "detail": [
          {
            "input": {
              "reason": "x",
            },
            "loc": [
              "body",
              "actor_user_id",
            ],
            "msg": "Field required",
            "type": "missing",
          },
        ],
      }
    `);
  });

  it('answers 401 with WWW-Authenticate without a token', async () => {
    const response = await t.rest('POST', '/api/v1/dogfood/agents/ceo/pause', {
      body: { actor_user_id: 'x' },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    expect(response.body).toEqual({ detail: 'Not authenticated' });
  });

  it('answers 403 to an operator before looking at the body', async () => {
    const operator = await t.caller(['operator'], { tenantId: chairman.tenantId });
    const response = await t.rest('POST', '/api/v1/dogfood/agents/ceo/pause', { caller: operator, body: {} });
    expect(response.status).toBe(403);
  });
});

describe('REST core', () => {
  it('answers 404 Not Found for an unknown /api/v1 route', async () => {
    const response = await t.rest('GET', '/api/v1/nothing-here', { caller: chairman });
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ detail: 'Not Found' });
  });

  it('answers 405 with Allow for a wrong method', async () => {
    const response = await t.rest('GET', '/api/v1/dogfood/agents/ceo/pause', { caller: chairman });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('echoes a valid X-Request-ID', async () => {
    const response = await t.rest('GET', '/api/v1/nothing-here', { headers: { 'x-request-id': 'abc-123' } });
    expect(response.headers.get('x-request-id')).toBe('abc-123');
  });

  it('serves the OpenAPI document without a token', async () => {
    const response = await t.rest('GET', '/api/v1/openapi.json');
    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    expect(Object.keys(response.body.paths)).toContain('/api/v1/dogfood/agents/{role}/pause');
  });
});
