import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';

// Documents as strings: the response cache keys on the document text, and each test needs its own.
const meBesideVitals = `query MeBesideVitals($role: String!) {
  agentVitals(role: $role) { agentRole tasksCompleted }
  me { sub tenantId roles }
}`;
const vitalsOnly = `query VitalsOnly($role: String!) { agentVitals(role: $role) { agentRole tasksCompleted } }`;
const vitalsBesideAudit = `query VitalsBesideAudit($role: String!) {
  agentVitals(role: $role) { agentRole }
  auditLog(action: "agent_role.register") { nodes { action targetId details } }
}`;

interface Outcome {
  status: number;
  data?: unknown;
  codes: unknown[];
  etag: string | null;
}

const forge = (tenantId: string) =>
  new SignJWT({ tenant_id: tenantId, roles: ['chairman'] })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('forger')
    .setExpirationTime('5m')
    .sign(new TextEncoder().encode('a-different-secret-that-is-long-enough-to-sign'));

describe.each([
  ['development', 'test'],
  ['production', 'production'],
])('response cache keyed by the verified caller (%s mode)', (_mode, nodeEnv) => {
  let t: TestApp;
  let chairA: Caller;
  let memberA: Caller;
  let chairB: Caller;
  let forged: Caller;

  /** Sends `document` as `caller` (or with no token) and returns what the client sees. */
  async function send(
    document: string,
    variables: Record<string, unknown>,
    caller: Caller | null,
    headers: Record<string, string> = {},
  ): Promise<Outcome> {
    const response = await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json, application/json',
        ...(caller ? { authorization: `Bearer ${caller.token}` } : {}),
        ...headers,
      },
      body: JSON.stringify({ query: document, variables }),
    });
    const text = await response.text();
    const body = text
      ? (JSON.parse(text) as { data?: unknown; errors?: { extensions?: { code?: unknown } }[] })
      : {};
    return {
      status: response.status,
      data: body.data,
      codes: (body.errors ?? []).map((error) => error.extensions?.code),
      etag: response.headers.get('etag'),
    };
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { NODE_ENV: nodeEnv } });
    chairA = await t.caller(['chairman']);
    memberA = await t.caller(['member'], { tenantId: chairA.tenantId });
    chairB = await t.caller(['chairman']);
    forged = { ...chairA, token: await forge(chairA.tenantId) };
    // A role only tenant A has, and an audit row only tenant A's operators may read.
    const registered = await t.graphql(
      'mutation { registerAgentRole(input: { role: "research", displayName: "Secret research" }) { role } }',
      {},
      chairA,
    );
    expect(registered.errors).toBeUndefined();
  });
  afterAll(() => t.close());

  it('consults the cache only for documents it may answer from it', async () => {
    const lookups = vi.spyOn(t.app.services.responseCache, 'get');
    try {
      const role = { role: 'research' };
      // Documents without a cached root field, or with one beside another field, never reach the cache.
      for (const document of [
        '{ __typename }',
        'query OnlyMe { me { sub } }',
        meBesideVitals,
        vitalsBesideAudit,
      ]) {
        expect((await send(document, role, chairA)).status).toBe(200);
      }
      expect(await send('query Broken {', {}, chairA)).toMatchObject({ codes: ['GRAPHQL_PARSE_FAILED'] });
      expect(lookups).not.toHaveBeenCalled();
      // Selected through a fragment, a cached coordinate is looked up under this caller's session.
      const viaFragment = `query VitalsViaFragment($role: String!) { ...Vitals }
        fragment Vitals on Query { agentVitals(role: $role) { agentRole } }`;
      expect((await send(viaFragment, role, chairA)).status).toBe(200);
      const second = await send(viaFragment, role, chairA);
      expect(second.etag).toMatch(/^[\w-]{22}\./);
      expect(lookups).toHaveBeenCalled();
      expect(new Set(lookups.mock.calls.map(([key]) => key))).toEqual(new Set([second.etag]));
    } finally {
      lookups.mockRestore();
    }
  });

  it('answers me beside a cached coordinate with each caller’s own identity', async () => {
    const variables = { role: 'ceo' };
    const first = await send(meBesideVitals, variables, chairA);
    expect(first.data).toMatchObject({ me: { sub: chairA.sub, tenantId: chairA.tenantId } });
    expect((await send(meBesideVitals, variables, chairB)).data).toMatchObject({
      me: { sub: chairB.sub, tenantId: chairB.tenantId, roles: ['chairman'] },
    });
    expect((await send(meBesideVitals, variables, memberA)).data).toMatchObject({
      me: { sub: memberA.sub, tenantId: memberA.tenantId, roles: ['member'] },
    });
    const anonymous = await send(meBesideVitals, variables, null);
    expect([anonymous.status, anonymous.data ?? null, anonymous.codes]).toEqual([
      401,
      null,
      ['UNAUTHENTICATED'],
    ]);
    const forgery = await send(meBesideVitals, variables, forged);
    expect([forgery.status, forgery.data ?? null, forgery.codes]).toEqual([401, null, ['UNAUTHENTICATED']]);
  });

  it('answers agentVitals for a role only tenant A has with A’s vitals to A and not found to B', async () => {
    const variables = { role: 'research' };
    expect((await send(vitalsOnly, variables, chairA)).data).toEqual({
      agentVitals: { agentRole: 'research', tasksCompleted: 0 },
    });
    expect((await send(vitalsOnly, variables, chairA)).data).toEqual({
      agentVitals: { agentRole: 'research', tasksCompleted: 0 },
    });
    const other = await send(vitalsOnly, variables, chairB);
    expect([other.data ?? null, other.codes]).toEqual([null, ['NOT_FOUND']]);
    const anonymous = await send(vitalsOnly, variables, null);
    expect([anonymous.status, anonymous.data ?? null]).toEqual([401, null]);
    const forgery = await send(vitalsOnly, variables, forged);
    expect([forgery.status, forgery.data ?? null]).toEqual([401, null]);
  });

  it('never hands the audit log sent beside a cached coordinate to another tenant or a member', async () => {
    const variables = { role: 'ceo' };
    const own = await send(vitalsBesideAudit, variables, chairA);
    expect(own.data).toMatchObject({
      auditLog: { nodes: [{ action: 'agent_role.register', targetId: 'research' }] },
    });
    const other = await send(vitalsBesideAudit, variables, chairB);
    expect(other.data).toEqual({ agentVitals: { agentRole: 'ceo' }, auditLog: { nodes: [] } });
    const member = await send(vitalsBesideAudit, variables, memberA);
    expect([member.data ?? null, member.codes]).toEqual([null, ['FORBIDDEN']]);
    for (const stranger of [null, forged]) {
      const refused = await send(vitalsBesideAudit, variables, stranger);
      expect([refused.status, refused.data ?? null]).toEqual([401, null]);
    }
  });

  it('answers 304 to an If-None-Match only for the caller whose answer it names', async () => {
    const variables = { role: 'ceo' };
    const first = await send(vitalsOnly, variables, chairA);
    expect(first.etag).toEqual(expect.any(String));
    const etag = first.etag as string;
    expect((await send(vitalsOnly, variables, chairA, { 'if-none-match': etag })).status).toBe(304);
    for (const stranger of [chairB, memberA, forged, null]) {
      const answer = await send(vitalsOnly, variables, stranger, { 'if-none-match': etag });
      expect(answer.status).not.toBe(304);
      if (stranger === chairB || stranger === memberA) {
        expect(answer.status).toBe(200);
        expect(answer.etag).not.toBe(etag);
      } else expect(answer.status).toBe(401);
    }
  });

  it('keys REST’s inner requests by the same verified caller', async () => {
    const own = await t.rest('GET', '/api/v1/agents/research/vitals', { caller: chairA });
    expect(own.status).toBe(200);
    expect(own.body.data.agent_role).toBe('research');
    const other = await t.rest('GET', '/api/v1/agents/research/vitals', { caller: chairB });
    expect(other.status).toBe(404);
    const anonymous = await t.rest('GET', '/api/v1/agents/research/vitals', { caller: null });
    expect(anonymous.status).toBe(401);
  });
});
