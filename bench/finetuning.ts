import { Production, Promote, Register, Rollback } from '../test/schema/finetuning-support.js';
import { createTestApp } from '../test/support/app.js';
import { createTestDatabase } from '../test/support/database.js';

/**
 * Time from a rollback's response on one instance until `productionModel` on another instance answers the
 * restored version (median and worst of 20). Needs PostgreSQL and Redis: instances share events through Redis.
 */
export async function measurePropagation(): Promise<string> {
  if (process.env.TEST_DB !== 'postgres') {
    return 'model rollback propagation: skipped (run with TEST_DB=postgres TEST_DATABASE_URL=… TEST_REDIS_URL=… for two instances)';
  }
  const database = await createTestDatabase();
  const a = await createTestApp({ database });
  const b = await createTestApp({ database });
  try {
    const operator = await a.caller(['operator']);
    const onB = await b.caller(['operator'], { tenantId: operator.tenantId });
    const baseModel = 'bench-model';
    for (let i = 0; i < 21; i++) {
      const registered = await a.graphql(
        Register,
        {
          input: {
            baseModel,
            provider: 'openai',
            trainingDataHash: `h${i}`,
            hyperparameters: {},
            evaluationMetrics: {},
          },
        },
        operator,
      );
      await a.graphql(Promote, { id: registered.data?.registerModelVersion.id ?? '' }, operator);
    }
    const samples: number[] = [];
    for (let i = 0; i < 20; i++) {
      await b.graphql(Production, { baseModel }, onB); // warm b's cache with the current answer
      const rolled = await a.graphql(
        Rollback,
        { tenantId: operator.tenantId, baseModel, input: { reason: 'bench' } },
        operator,
      );
      const restored = rolled.data?.rollbackModel.id;
      const started = performance.now();
      for (;;) {
        const seen = await b.graphql(Production, { baseModel }, onB);
        if (seen.data?.productionModel?.id === restored) break;
        if (performance.now() - started > 10_000) throw new Error('rollback did not propagate within 10 s');
      }
      samples.push(performance.now() - started);
    }
    samples.sort((x, y) => x - y);
    const median = ((samples[9] ?? 0) + (samples[10] ?? 0)) / 2;
    return `model rollback propagation between two instances (20 rollbacks): median ${median.toFixed(1)} ms, worst ${(samples.at(-1) ?? 0).toFixed(1)} ms (target < 1000)`;
  } finally {
    await a.close();
    await b.close();
    await database.drop();
  }
}
