import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import {
  History,
  Promote,
  productionGenerations,
  productionId,
  promote,
  Register,
  Rollback,
  register,
  Versions,
  versionInput,
} from './finetuning-support.js';

describe('model registry', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('registers a version as ready with the next version number of its base model', async () => {
    const operator = await t.caller(['operator']);
    const first = await t.graphql(
      Register,
      { input: versionInput('claude-haiku', { trainingDataHash: 'sha256:abc' }) },
      operator,
    );
    expect(first.data?.registerModelVersion).toEqual({
      id: expect.any(String),
      tenantId: operator.tenantId,
      baseModel: 'claude-haiku',
      provider: 'anthropic',
      versionNumber: 1,
      deploymentStatus: 'ready',
      canaryTrafficPct: null,
      trainingDataHash: 'sha256:abc',
      hyperparameters: { epochs: 2 },
      evaluationMetrics: { win_rate: 0.6 },
    });
    const second = await t.graphql(Register, { input: versionInput('claude-haiku') }, operator);
    expect(second.data?.registerModelVersion.versionNumber).toBe(2);
    const otherModel = await t.graphql(Register, { input: versionInput('claude-sonnet') }, operator);
    expect(otherModel.data?.registerModelVersion.versionNumber).toBe(1);
  });

  it('numbers versions per tenant', async () => {
    const a = await t.caller(['operator']);
    const b = await t.caller(['operator']);
    await register(t, a, 'numbered');
    await register(t, a, 'numbered');
    const result = await t.graphql(Register, { input: versionInput('numbered') }, b);
    expect(result.data?.registerModelVersion.versionNumber).toBe(1);
  });

  it('gives concurrent registrations distinct consecutive version numbers', async () => {
    const operator = await t.caller(['operator']);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => t.graphql(Register, { input: versionInput('burst') }, operator)),
    );
    expect(results.map((result) => result.data?.registerModelVersion.versionNumber).sort()).toEqual([
      1, 2, 3, 4, 5,
    ]);
  });

  it('answers 422 enum for an unknown provider, naming the allowed values', async () => {
    const operator = await t.caller(['operator']);
    const result = await t.graphql(
      Register,
      { input: versionInput('x', { provider: 'openrouter' }) },
      operator,
    );
    expect(result.errors?.[0]?.extensions).toMatchObject({
      code: 'BAD_USER_INPUT',
      detail: [
        {
          type: 'enum',
          loc: ['input', 'provider'],
          msg: "Input should be 'openai', 'anthropic', 'google', 'mistral', 'together', 'fireworks' or 'self_hosted'",
          input: 'openrouter',
        },
      ],
    });
    expect(await t.db.prisma.modelVersion.count({ where: { tenantId: operator.tenantId } })).toBe(0);
  });

  it('answers 422 dict_type when hyperparameters or evaluation metrics are not objects', async () => {
    const operator = await t.caller(['operator']);
    const result = await t.graphql(
      Register,
      { input: versionInput('x', { hyperparameters: [1], evaluationMetrics: 'good' }) },
      operator,
    );
    expect(result.errors?.[0]?.extensions?.detail).toEqual([
      {
        type: 'dict_type',
        loc: ['input', 'hyperparameters'],
        msg: 'Input should be a valid dictionary',
        input: [1],
      },
      {
        type: 'dict_type',
        loc: ['input', 'evaluationMetrics'],
        msg: 'Input should be a valid dictionary',
        input: 'good',
      },
    ]);
  });

  it('answers 422 for a base model name with spaces or an empty training data hash', async () => {
    const operator = await t.caller(['operator']);
    const result = await t.graphql(
      Register,
      { input: versionInput('my model', { trainingDataHash: '' }) },
      operator,
    );
    expect(result.errors?.[0]?.extensions?.detail).toMatchObject([
      { type: 'string_pattern_mismatch', loc: ['input', 'baseModel'], input: 'my model' },
      { type: 'string_too_short', loc: ['input', 'trainingDataHash'], input: '' },
    ]);
  });

  it('lets only operators and chairmen register, promote and roll back', async () => {
    const owner = await t.caller(['operator']);
    const id = await register(t, owner, 'guarded');
    for (const role of ['member', 'agent'] as const) {
      const caller = await t.caller([role], { tenantId: owner.tenantId });
      const results = await Promise.all([
        t.graphql(Register, { input: versionInput('guarded') }, caller),
        t.graphql(Promote, { id, canaryTrafficPct: null }, caller),
        t.graphql(
          Rollback,
          { tenantId: owner.tenantId, baseModel: 'guarded', input: { reason: 'x' } },
          caller,
        ),
      ]);
      expect(results.map((result) => result.errors?.[0]?.extensions?.code)).toEqual([
        'FORBIDDEN',
        'FORBIDDEN',
        'FORBIDDEN',
      ]);
    }
    const chairman = await t.caller(['chairman'], { tenantId: owner.tenantId });
    expect(
      (await t.graphql(Promote, { id, canaryTrafficPct: null }, chairman)).data?.promoteModelVersion
        .deploymentStatus,
    ).toBe('production');
  });

  it('lets any role of the tenant read versions and the production model', async () => {
    const operator = await t.caller(['operator']);
    const [id] = await productionGenerations(t, operator, 'readable', 1);
    const member = await t.caller(['member'], { tenantId: operator.tenantId });
    expect(await productionId(t, member, 'readable')).toBe(id);
    expect((await t.graphql(Versions, { baseModel: 'readable' }, member)).data?.modelVersions).toHaveLength(
      1,
    );
  });

  it('promotes to canary with a traffic share, replacing an earlier canary', async () => {
    const operator = await t.caller(['operator']);
    const v1 = await register(t, operator, 'canaried');
    const v2 = await register(t, operator, 'canaried');
    expect(await promote(t, operator, v1, 10)).toMatchObject({
      deploymentStatus: 'canary',
      canaryTrafficPct: 10,
    });
    expect(await promote(t, operator, v2, 20)).toMatchObject({
      deploymentStatus: 'canary',
      canaryTrafficPct: 20,
    });
    const versions = await t.graphql(Versions, { baseModel: 'canaried' }, operator);
    expect(versions.data?.modelVersions).toEqual([
      { id: v2, versionNumber: 2, deploymentStatus: 'canary', canaryTrafficPct: 20 },
      { id: v1, versionNumber: 1, deploymentStatus: 'ready', canaryTrafficPct: null },
    ]);
    expect(await productionId(t, operator, 'canaried')).toBeNull();
  });

  it('promotes to production, archiving the production it replaces', async () => {
    const operator = await t.caller(['operator']);
    const [v1, v2] = await productionGenerations(t, operator, 'replaced', 2);
    const versions = await t.graphql(Versions, { baseModel: 'replaced' }, operator);
    expect(versions.data?.modelVersions.map((version) => [version.id, version.deploymentStatus])).toEqual([
      [v2, 'production'],
      [v1, 'archived'],
    ]);
    expect(await productionId(t, operator, 'replaced')).toBe(v2);
  });

  it('answers 422 for a canary share outside 1–99 and for a malformed id', async () => {
    const operator = await t.caller(['operator']);
    const id = await register(t, operator, 'bounded');
    const tooMuch = await t.graphql(Promote, { id, canaryTrafficPct: 100 }, operator);
    expect(tooMuch.errors?.[0]?.extensions?.detail).toEqual([
      {
        type: 'less_than_equal',
        loc: ['canaryTrafficPct'],
        msg: 'Input should be less than or equal to 99',
        input: 100,
        ctx: { le: 99 },
      },
    ]);
    const none = await t.graphql(Promote, { id, canaryTrafficPct: 0 }, operator);
    expect(none.errors?.[0]?.extensions?.detail).toMatchObject([
      { type: 'greater_than_equal', loc: ['canaryTrafficPct'] },
    ]);
    const malformed = await t.graphql(Promote, { id: 'v1', canaryTrafficPct: null }, operator);
    expect(malformed.errors?.[0]?.extensions?.detail).toMatchObject([{ type: 'uuid_parsing', loc: ['id'] }]);
  });

  it('answers 404 when promoting another tenant’s version', async () => {
    const owner = await t.caller(['operator']);
    const id = await register(t, owner, 'private');
    const outsider = await t.caller(['chairman']);
    const result = await t.graphql(Promote, { id, canaryTrafficPct: null }, outsider);
    expect(result.errors?.[0]).toMatchObject({
      message: `Model version ${id} not found`,
      extensions: { code: 'NOT_FOUND' },
    });
    const versions = await t.graphql(Versions, { baseModel: 'private' }, outsider);
    expect(versions.data?.modelVersions).toEqual([]);
  });

  it('answers 409 when promoting the production version or a retired one', async () => {
    const operator = await t.caller(['operator']);
    const [v1, v2] = await productionGenerations(t, operator, 'final', 2);
    const again = await t.graphql(Promote, { id: v2 as string, canaryTrafficPct: null }, operator);
    expect(again.errors?.[0]?.extensions?.code).toBe('CONFLICT');
    await t.graphql(
      Rollback,
      { tenantId: operator.tenantId, baseModel: 'final', input: { reason: 'bad' } },
      operator,
    );
    const retired = await t.graphql(Promote, { id: v2 as string, canaryTrafficPct: 5 }, operator);
    expect(retired.errors?.[0]?.message).toBe(
      'Version 2 is retired; only ready, canary, archived versions can be promoted',
    );
    expect(await productionId(t, operator, 'final')).toBe(v1);
  });

  it('rolls back through GraphQL', async () => {
    const operator = await t.caller(['operator']);
    const [v1] = await productionGenerations(t, operator, 'graphql-rollback', 2);
    const result = await t.graphql(
      Rollback,
      { tenantId: operator.tenantId, baseModel: 'graphql-rollback', input: { reason: 'drift' } },
      operator,
    );
    expect(result.data?.rollbackModel).toEqual({ id: v1, versionNumber: 1, deploymentStatus: 'production' });
  });

  it('keeps every status change of a version as deployment history, oldest first', async () => {
    const operator = await t.caller(['operator'], { sub: 'op-history' });
    await productionGenerations(t, operator, 'historic', 1);
    const v2 = await register(t, operator, 'historic');
    await promote(t, operator, v2, 15);
    await promote(t, operator, v2);
    await t.graphql(
      Rollback,
      {
        tenantId: operator.tenantId,
        baseModel: 'historic',
        input: { reason: 'regression', performedBy: 'sre' },
      },
      operator,
    );
    const result = await t.graphql(History, { baseModel: 'historic' }, operator);
    const entry = (fromStatus: string | null, toStatus: string, extra: Record<string, unknown> = {}) => ({
      fromStatus,
      toStatus,
      canaryTrafficPct: null,
      reason: null,
      performedBy: null,
      actor: 'op-history',
      ...extra,
    });
    const rolledBack = { reason: 'regression', performedBy: 'sre' };
    expect(result.data?.modelVersions).toEqual([
      {
        versionNumber: 2,
        deployments: [
          entry(null, 'ready'),
          entry('ready', 'canary', { canaryTrafficPct: 15 }),
          entry('canary', 'production'),
          entry('production', 'retired', rolledBack),
        ],
      },
      {
        versionNumber: 1,
        deployments: [
          entry(null, 'ready'),
          entry('ready', 'production'),
          entry('production', 'archived'),
          entry('archived', 'production', rolledBack),
        ],
      },
    ]);
  });

  it('serializes concurrent promotions: exactly one production remains and the others are archived', async () => {
    const operator = await t.caller(['operator']);
    const ids = await Promise.all(Array.from({ length: 4 }, () => register(t, operator, 'race')));
    const results = await Promise.all(
      ids.map((id) => t.graphql(Promote, { id, canaryTrafficPct: null }, operator)),
    );
    expect(
      results.every((result) => result.data?.promoteModelVersion.deploymentStatus === 'production'),
    ).toBe(true);
    const versions = (await t.graphql(Versions, { baseModel: 'race' }, operator)).data?.modelVersions ?? [];
    expect(versions.filter((version) => version.deploymentStatus === 'production')).toHaveLength(1);
    expect(versions.filter((version) => version.deploymentStatus === 'archived')).toHaveLength(3);
  });

  it('records model.register and model.promote in the audit log', async () => {
    const operator = await t.caller(['operator']);
    const [id] = await productionGenerations(t, operator, 'audited', 1);
    const entries = await t.db.prisma.auditEntry.findMany({
      where: { tenantId: operator.tenantId },
      orderBy: { createdAt: 'asc' },
    });
    expect(entries.map(({ action, targetId, outcome }) => ({ action, targetId, outcome }))).toEqual([
      { action: 'model.register', targetId: id, outcome: 'ready' },
      { action: 'model.promote', targetId: id, outcome: 'production' },
    ]);
  });
});
