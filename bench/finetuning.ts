// Rollback propagation between two instances on one PostgreSQL database and Redis: time from a rollback's
// response on one instance until `productionModel` on the other (whose response cache held the previous
// answer) names the restored version.
import { median } from './measure.js';
import { type Gateway, graphqlRequest, mintCaller, startGateway } from './servers.js';

export interface PropagationFigures {
  rollbacks: number;
  medianMs: number;
  worstMs: number;
}

const REGISTER = `mutation ($input: RegisterModelVersionInput!) { registerModelVersion(input: $input) { id } }`;
const PROMOTE = 'mutation ($id: ID!) { promoteModelVersion(id: $id) { id } }';
const ROLLBACK = `mutation ($tenantId: ID!, $baseModel: String!, $input: RollbackInput!) {
  rollbackModel(tenantId: $tenantId, baseModel: $baseModel, input: $input) { id }
}`;
const PRODUCTION = 'query ($baseModel: String!) { productionModel(baseModel: $baseModel) { id } }';

export async function measurePropagation(
  runDir: string,
  postgresUrl: string,
  redisUrl: string,
  rollbacks: number,
): Promise<PropagationFigures> {
  const a: Gateway = await startGateway({
    name: 'rollback-a',
    database: 'postgres',
    runDir,
    postgresUrl,
    redisUrl,
  });
  const b = await startGateway({
    name: 'rollback-b',
    database: 'postgres',
    runDir,
    postgresUrl,
    redisUrl,
    reuse: { databaseUrl: a.databaseUrl },
  });
  try {
    const caller = await mintCaller(['operator']);
    const baseModel = 'bench-model';
    for (let i = 0; i <= rollbacks; i++) {
      const { registerModelVersion } = await graphqlRequest<{ registerModelVersion: { id: string } }>(
        a,
        caller,
        REGISTER,
        {
          input: {
            baseModel,
            provider: 'openai',
            trainingDataHash: `h${i}`,
            hyperparameters: {},
            evaluationMetrics: {},
          },
        },
      );
      await graphqlRequest(a, caller, PROMOTE, { id: registerModelVersion.id });
    }
    const production = async () =>
      (await graphqlRequest<{ productionModel: { id: string } | null }>(b, caller, PRODUCTION, { baseModel }))
        .productionModel?.id;
    const samples: number[] = [];
    for (let i = 0; i < rollbacks; i++) {
      await production(); // b's cache now holds the current answer
      const { rollbackModel } = await graphqlRequest<{ rollbackModel: { id: string } }>(a, caller, ROLLBACK, {
        tenantId: caller.tenantId,
        baseModel,
        input: { reason: 'bench' },
      });
      const started = performance.now();
      while ((await production()) !== rollbackModel.id) {
        if (performance.now() - started > 10_000) throw new Error('a rollback did not propagate within 10 s');
      }
      samples.push(performance.now() - started);
    }
    return { rollbacks, medianMs: median(samples), worstMs: Math.max(...samples) };
  } finally {
    await a.stop();
    await b.stop();
  }
}
