import { randomUUID } from 'node:crypto';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { signToken } from '../src/auth/tokens.js';
import { BENCH_SECRET, withInProcessApp } from './in-process.js';

export interface ToolListFigures {
  endpointsPerConnector: number;
  rows: {
    connectors: number;
    /** Tools in tools/list and its o200k_base tokens (the tools as JSON). */
    tools: number;
    tokens: number;
    /** Tokens of one search answer (10 endpoints) and of one describe answer (10 endpoints). */
    searchTokens: number;
    describeTokens: number;
  }[];
}

/** What the bench reads of a JSON-RPC result: the tool list, or a tool's structured answer. */
interface RpcResult {
  tools?: unknown[];
  isError?: boolean;
  structuredContent?: { endpoints: { name: string }[] };
}

/** A connector of `count` endpoints with query parameters, half of them with a body, as a tenant writes one. */
const template = (name: string, count: number) => ({
  name,
  base_url: 'https://api.example.com/v1',
  auth_type: 'none',
  description: `The ${name} system: records, documents and their history.`,
  endpoints: Array.from({ length: count }, (_, index) => ({
    method: index % 2 === 0 ? 'GET' : 'POST',
    path: `/records/group${index}/{id}`,
    query_params: {
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      status: { enum: ['open', 'closed', 'void'] },
    },
    ...(index % 2 === 1
      ? {
          body_schema: {
            type: 'object',
            required: ['title'],
            properties: { title: { type: 'string' }, amount: { type: 'number' } },
          },
        }
      : {}),
  })),
});

/**
 * tools/list for an agent of tenants with 1, 10 and 100 connectors of `endpointsPerConnector` endpoints, in
 * o200k_base tokens: flat, since connector endpoints are searched rather than listed (ADR 0052).
 */
export async function measureToolList(
  counts: number[],
  endpointsPerConnector: number,
): Promise<ToolListFigures> {
  return withInProcessApp('tool-list', {}, async (app) => {
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
      if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
      return (await response.json()) as { result?: RpcResult; error?: unknown };
    };
    const rpc = async (token: string, method: string, params: Record<string, unknown>) => {
      // A loopback host, as the endpoint asks of a server bound to loopback (mcp/origin.ts).
      const answer = await post('http://127.0.0.1/mcp', token, { jsonrpc: '2.0', id: 1, method, params });
      if (answer.error || !answer.result || answer.result.isError) throw new Error(JSON.stringify(answer));
      return answer.result;
    };
    const rows: ToolListFigures['rows'] = [];
    for (const connectors of counts) {
      const tenantId = randomUUID();
      const chairman = await signToken(BENCH_SECRET, {
        tenantId,
        sub: 'bench-chairman',
        roles: ['chairman'],
      });
      const agent = await signToken(BENCH_SECRET, { tenantId, sub: 'bench-agent', roles: ['agent'] });
      for (let index = 0; index < connectors; index += 1) {
        await post('http://bench/api/v1/forge/connectors', chairman, {
          template: template(`System ${index}`, endpointsPerConnector),
        });
      }
      const tools = (await rpc(agent, 'tools/list', {})).tools ?? [];
      const search = await rpc(agent, 'tools/call', {
        name: 'search_connector_endpoints',
        arguments: { query: 'records group', limit: 10 },
      });
      const names = search.structuredContent?.endpoints.map((endpoint) => endpoint.name);
      const describe = await rpc(agent, 'tools/call', {
        name: 'describe_connector_endpoints',
        arguments: { names },
      });
      rows.push({
        connectors,
        tools: tools.length,
        tokens: countTokens(JSON.stringify(tools)),
        searchTokens: countTokens(JSON.stringify(search.structuredContent)),
        describeTokens: countTokens(JSON.stringify(describe.structuredContent)),
      });
    }
    return { endpointsPerConnector, rows };
  });
}
