import { performance } from 'node:perf_hooks';
import { compileTools } from '../mcp/index.js';
import { signToken } from '../src/auth/tokens.js';
import { BENCH_SECRET, withInProcessApp } from './in-process.js';
import { median } from './measure.js';

/** What the claim answers, as both faces return it. */
interface Claimed {
  claimNextTask: { task: { id: string } };
}

export interface McpCallFigures {
  rounds: number;
  pairsPerRound: number;
  /** Median time of one claim + complete pair. */
  graphqlMedianMs: number;
  mcpMedianMs: number;
  /** Median over rounds of (MCP time / GraphQL time) for the same number of pairs. */
  ratio: number;
}

const SECRET = BENCH_SECRET;
const TENANT = '5b0e2f6c-3d1a-4c8e-9f7b-2a1c0d9e8f7a';

/** The very documents the two tools run, so the GraphQL side does the same work minus the MCP face. */
const toolQuery = (name: string) => {
  const tool = compileTools().find((candidate) => candidate.tool.name === name);
  if (!tool) throw new Error(`no MCP tool ${name}`);
  return tool.compiled.query;
};
const CLAIM = toolQuery('claim_next_task');
const COMPLETE = toolQuery('complete_task');

export async function measureMcpCalls(rounds: number, pairsPerRound: number): Promise<McpCallFigures> {
  return withInProcessApp('mcp', {}, async (app) => {
    const chairman = await signToken(SECRET, {
      tenantId: TENANT,
      sub: 'bench-chairman',
      roles: ['chairman'],
    });
    const agent = await signToken(SECRET, { tenantId: TENANT, sub: 'bench-agent', roles: ['agent'] });
    const post = async (url: string, token: string, body: unknown) => {
      const response = await app.yoga.fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify(body),
      });
      return (await response.json()) as {
        data?: unknown;
        errors?: unknown[];
        error?: unknown;
        result?: { isError?: boolean; structuredContent?: unknown };
      };
    };
    const graphql = async (token: string, query: string, variables: Record<string, unknown>) => {
      const result = await post('http://bench/graphql', token, { query, variables });
      if (result.errors) throw new Error(JSON.stringify(result.errors));
      return result.data as Claimed;
    };
    let id = 0;
    const tool = async (name: string, args: Record<string, unknown>) => {
      id += 1;
      // A loopback host, as the endpoint asks of a server bound to loopback (mcp/origin.ts).
      const answer = await post('http://127.0.0.1/mcp', agent, {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name, arguments: args },
      });
      if (answer.error || answer.result?.isError) throw new Error(JSON.stringify(answer));
      return answer.result?.structuredContent as Claimed;
    };
    const usage = { tokensUsed: 1200, costUsd: 0.0123 };
    const viaGraphql = async () => {
      const { claimNextTask } = await graphql(agent, CLAIM, { role: 'cfo' });
      await graphql(agent, COMPLETE, { id: claimNextTask.task.id, input: { ...usage, output: 'done' } });
    };
    const viaMcp = async () => {
      const { claimNextTask } = await tool('claim_next_task', { role: 'cfo' });
      await tool('complete_task', { taskId: claimNextTask.task.id, ...usage, output: 'done' });
    };
    const queue = async (count: number) => {
      for (let index = 0; index < count; index += 1) {
        await graphql(
          chairman,
          'mutation { sendChatMessage(role: "cfo", input: { message: "Close the books" }) { taskId } }',
          {},
        );
      }
    };
    const timed = async (pair: () => Promise<void>) => {
      const times: number[] = [];
      for (let index = 0; index < pairsPerRound; index += 1) {
        const started = performance.now();
        await pair();
        times.push(performance.now() - started);
      }
      return times;
    };
    // Warm-up of both faces (statements, JIT), then rounds that alternate which face goes first.
    await queue(20);
    for (let index = 0; index < 10; index += 1) await (index % 2 ? viaMcp() : viaGraphql());
    const graphqlTimes: number[] = [];
    const mcpTimes: number[] = [];
    const ratios: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      await queue(2 * pairsPerRound);
      const first = round % 2 === 0 ? viaGraphql : viaMcp;
      const second = first === viaGraphql ? viaMcp : viaGraphql;
      const a = await timed(first);
      const b = await timed(second);
      const [g, m] = first === viaGraphql ? [a, b] : [b, a];
      graphqlTimes.push(...g);
      mcpTimes.push(...m);
      ratios.push(median(m) / median(g));
    }
    return {
      rounds,
      pairsPerRound,
      graphqlMedianMs: median(graphqlTimes),
      mcpMedianMs: median(mcpTimes),
      ratio: median(ratios),
    };
  });
}
