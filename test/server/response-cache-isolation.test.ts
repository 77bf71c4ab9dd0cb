import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheTtlPerCoordinate } from '../../src/app.js';
import { signToken } from '../../src/auth/tokens.js';
import { type Caller, createTestApp, type TestApp } from '../support/app.js';
import { createTestDatabase, databaseKind, type TestDatabase } from '../support/database.js';
import { type SeededTenant, seedTenant } from '../support/seed.js';

/**
 * A document per cached coordinate, plus `me` and a field sent beside a cached one: tenant A's chairman asks
 * first (filling the cache), then another caller asks the same and must get what it gets uncached.
 */
const probes: Record<string, { query: string; variables: (a: SeededTenant) => Record<string, unknown> }> = {
  'Query.productionModel': {
    query:
      'query Probe($baseModel: String!) { productionModel(baseModel: $baseModel) { id tenantId versionNumber } }',
    variables: (a) => ({ baseModel: a.baseModel }),
  },
  'Query.modelVersions': {
    query:
      'query Probe($baseModel: String!) { modelVersions(baseModel: $baseModel) { id tenantId versionNumber } }',
    variables: (a) => ({ baseModel: a.baseModel }),
  },
  'Query.agentVitals': {
    query: 'query Probe { agentVitals(role: "ceo") { agentRole tasksCompleted tokensUsed costUsd } }',
    variables: () => ({}),
  },
  'Query.me': {
    query: 'query Probe { me { sub tenantId roles } }',
    variables: () => ({}),
  },
  'Query.me beside Query.agentVitals': {
    query: 'query Probe { me { sub tenantId roles } agentVitals(role: "ceo") { agentRole } }',
    variables: () => ({}),
  },
  'Query.auditLog beside Query.productionModel': {
    query: `query Probe($baseModel: String!) {
      productionModel(baseModel: $baseModel) { id }
      auditLog { nodes { action targetId details } }
    }`,
    variables: (a) => ({ baseModel: a.baseModel }),
  },
};

interface Instance {
  t: TestApp;
  /** Where the other callers ask: the same instance, or a second one on the same database and Redis. */
  other: TestApp;
}

type Asker = 'tenant B’s chairman' | 'a member of tenant A' | 'no token' | 'a forged token with A’s claims';

async function askerFor(t: TestApp, a: SeededTenant, asker: Asker): Promise<Caller | null> {
  switch (asker) {
    case 'tenant B’s chairman':
      return t.caller(['chairman']);
    case 'a member of tenant A':
      return a.callers.member;
    case 'no token':
      return null;
    case 'a forged token with A’s claims': {
      const { tenantId, sub, roles } = a.callers.chairman;
      const token = await signToken('not-the-secret-but-long-enough-for-hs256-signing', {
        tenantId,
        sub,
        roles,
      });
      return { tenantId, sub, roles, token };
    }
  }
}

/** What an answer amounts to: status, data and error codes (messages may carry request ids). */
function normalize(result: {
  status: number;
  data?: unknown;
  errors?: readonly { extensions?: Record<string, unknown> }[];
}) {
  return {
    status: result.status,
    data: result.data ?? null,
    codes: (result.errors ?? []).map((error) => error.extensions?.code),
  };
}

const ASKERS: Asker[] = [
  'tenant B’s chairman',
  'a member of tenant A',
  'no token',
  'a forged token with A’s claims',
];

function probeSuite(label: string, setup: () => Promise<Instance & { close(): Promise<void> }>) {
  describe(label, () => {
    let instance: Instance & { close(): Promise<void> };
    let a: SeededTenant;
    beforeAll(async () => {
      instance = await setup();
      a = await seedTenant(instance.t);
    });
    afterAll(() => instance.close());

    it('has a probe for every cached coordinate', () => {
      // A coordinate with a lifetime of 0 is one that keeps a response out of the cache.
      for (const [coordinate, ttl] of Object.entries(cacheTtlPerCoordinate))
        if (ttl > 0) expect(Object.keys(probes)).toContain(coordinate);
    });

    for (const [name, probe] of Object.entries(probes)) {
      for (const asker of ASKERS) {
        const title = `${name}: ${asker} asking after tenant A’s chairman gets what it gets uncached`;
        it(title, async () => {
          const { t, other } = instance;
          const variables = probe.variables(a);
          // A document of its own per test, so that only tenant A's chairman can have filled its cache entry.
          const rename = (name: string) =>
            probe.query.replace('query Probe', `query ${name}_${randomUUID().replaceAll('-', '')}`);
          const query = rename('Probe');
          const first = await t.graphql(query, variables, a.callers.chairman);
          expect(first.errors).toBeUndefined();
          const caller = await askerFor(other, a, asker);
          const cached = await other.graphql(query, variables, caller);
          const uncached = await other.graphql(rename('Fresh'), variables, caller);
          expect(normalize(cached)).toEqual(normalize(uncached));
        });
      }
    }
  });
}

probeSuite('the response cache on one instance', async () => {
  const t = await createTestApp();
  return { t, other: t, close: () => t.close() };
});

if (databaseKind === 'postgresql') {
  probeSuite('the response cache across two instances on one database and Redis', async () => {
    const database: TestDatabase = await createTestDatabase();
    const t = await createTestApp({ database });
    const other = await createTestApp({ database });
    return {
      t,
      other,
      async close() {
        await t.close();
        await other.close();
        await database.drop();
      },
    };
  });
}
