import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { integer, selfSignedCertificate } from '../../src/demo/certificate.js';
import { DEMO_COMPANY_TENANT_ID, type RunningDemo, startDemo } from '../../src/demo/run.js';
import { DEMO_MODEL, scriptedReply, startScriptedModel } from '../../src/demo/scripted-model.js';
import { apiClient, DEMO_CONNECTOR_NAME, DEMO_ROUTINE_MESSAGE } from '../../src/demo/seed.js';
import { DEMO_UPSTREAM_HOST } from '../../src/demo/upstream.js';
import { databaseKind } from '../support/database.js';

const demoScript = fileURLToPath(new URL('../../dist/demo.js', import.meta.url));
const usage = /^usage: npm run demo -- \[--port 4000\]/m;

/** What the demo tenant holds, read through the API as the chairman. */
async function snapshot(demo: RunningDemo) {
  const api = apiClient(demo.url, demo.chairmanToken);
  return api.graphql<{
    tasks: { nodes: { role: string; status: string; costUsd: number | null; output: string | null }[] };
    connectorCallApprovals: { nodes: { status: string; method: string; path: string }[] };
    connectors: { nodes: { name: string }[] };
    routines: { nodes: { message: string; cron: string }[] };
    budgets: { role: string | null }[];
  }>(`{
    tasks(first: 100) { nodes { role status costUsd output } }
    connectorCallApprovals(first: 50) { nodes { status method path } }
    connectors(first: 50) { nodes { name } }
    routines(first: 50) { nodes { message cron } }
    budgets { role }
  }`);
}

const waitFor = <T>(check: () => Promise<T> | T) => vi.waitFor(check, { timeout: 90_000, interval: 100 });

// The demo runs its own gateway on PGlite whatever the suite's engine: one project is enough.
describe.runIf(databaseKind === 'pglite')('npm run demo', () => {
  let dataDir: string;
  const lines: string[] = [];
  const options = () => ({
    dataDir,
    port: 0,
    upstreamPort: 0,
    intervalSeconds: 0,
    waitSeconds: 1,
    say: (line: string) => lines.push(line),
  });

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'boardroom-demo-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('seeds a company whose tasks complete with a cost, wait for approval and reach the demo ledger, on loopback only', async () => {
    const demo = await startDemo(options());
    try {
      expect(demo.tenantId).toBe(DEMO_COMPANY_TENANT_ID);
      expect(demo.seed.created).toEqual(['connector', 'approval policy', 'routine']);
      const state = await waitFor(async () => {
        const state = await snapshot(demo);
        const completed = state.tasks.nodes.filter((task) => task.status === 'completed');
        expect(completed.some((task) => (task.costUsd ?? 0) > 0)).toBe(true);
        // The CEO delegated the board brief and answered it with its sub-tasks' answers.
        expect(
          completed.some((task) => task.role === 'ceo' && task.output?.includes('CFO (completed)')),
        ).toBe(true);
        expect(state.connectorCallApprovals.nodes).toContainEqual({
          status: 'pending',
          method: 'POST',
          path: '/payments',
        });
        return state;
      });
      expect(demo.upstream.received).toContain('GET /v1/invoices');
      // Held for approval: the payment never reached the ledger.
      expect(demo.upstream.received).not.toContain('POST /v1/payments');
      expect(demo.model.requests).toBeGreaterThan(0);
      expect(state.connectors.nodes.map((node) => node.name)).toEqual([DEMO_CONNECTOR_NAME]);
      expect(state.routines.nodes).toEqual([{ message: DEMO_ROUTINE_MESSAGE, cron: '* * * * *' }]);
      expect(state.budgets.map((budget) => budget.role).sort()).toEqual(['ceo', 'cfo', 'coo', null].sort());

      // Nothing leaves loopback: every server listens on 127.0.0.1, and the gateway resolves the demo
      // ledger's name and no other, so a connector pointed elsewhere is refused before connecting.
      expect(new Set(demo.addresses)).toEqual(new Set(['127.0.0.1']));
      expect(new Set(demo.lookups)).toEqual(new Set([DEMO_UPSTREAM_HOST]));
      const api = apiClient(demo.url, demo.chairmanToken);
      const outside = (await api.rest('POST', '/api/v1/forge/connectors', {
        template: {
          name: 'Outside',
          base_url: 'https://api.example.com/v1',
          auth_type: 'none',
          endpoints: [{ method: 'GET', path: '/ping' }],
        },
      })) as { id: string };
      const invoked = await fetch(`${demo.url}/api/v1/forge/connectors/${outside.id}/invoke`, {
        method: 'POST',
        headers: { authorization: `Bearer ${demo.chairmanToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint: { method: 'GET', path: '/ping' }, input: {} }),
      });
      expect(invoked.status).toBeGreaterThanOrEqual(400);
      expect(await invoked.text()).toContain('api.example.com');
      expect(demo.lookups).toContain('api.example.com');
    } finally {
      await demo.close();
    }
  }, 180_000);

  it('finds the company again on a second run, and --auto-approve lets the payment reach the ledger', async () => {
    const demo = await startDemo({ ...options(), autoApproveSeconds: 0 });
    try {
      expect(demo.seed.created).toEqual([]);
      await waitFor(() => {
        expect(demo.upstream.received).toContain('POST /v1/payments');
        expect(lines.some((line) => line.includes('(auto-approve)'))).toBe(true);
      });
      const state = await snapshot(demo);
      expect(state.connectors.nodes.filter((node) => node.name === DEMO_CONNECTOR_NAME)).toHaveLength(1);
      expect(state.routines.nodes).toHaveLength(1);
      expect(state.connectorCallApprovals.nodes.some((approval) => approval.status === 'approved')).toBe(
        true,
      );
    } finally {
      await demo.close();
    }
  }, 180_000);

  it('refuses a data directory another demo holds, leaving that one running', async () => {
    const first = await startDemo(options());
    try {
      await expect(startDemo(options())).rejects.toThrow(/lock|in use|held/i);
      const api = apiClient(first.url, first.chairmanToken);
      await expect(api.graphql('{ budgets { role } }')).resolves.toBeDefined();
    } finally {
      await first.close();
    }
  }, 180_000);
});

describe.runIf(databaseKind === 'pglite')('the scripted model server', () => {
  it('speaks Chat Completions as JSON and as a stream, with usage', async () => {
    const model = await startScriptedModel();
    try {
      const openai = new OpenAI({ baseURL: model.baseURL, apiKey: 'demo', maxRetries: 0 });
      const messages = [
        { role: 'system' as const, content: 'You are the CFO agent.' },
        { role: 'user' as const, content: 'Check the ledger for overdue invoices.' },
      ];
      const tools = [
        {
          type: 'function' as const,
          function: { name: 'ledger_x__get_invoices', parameters: { type: 'object', properties: {} } },
        },
      ];
      const json = await openai.chat.completions.create({ model: DEMO_MODEL, messages, tools });
      expect(json.choices[0]?.message.tool_calls?.[0]).toMatchObject({
        type: 'function',
        function: { name: 'ledger_x__get_invoices', arguments: '{"query":{"status":"overdue"}}' },
      });
      expect(json.usage?.prompt_tokens).toBeGreaterThan(0);
      expect(json.usage?.completion_tokens).toBeGreaterThan(0);

      const stream = await openai.chat.completions.create({
        model: DEMO_MODEL,
        messages: [{ role: 'user', content: 'Plan next week’s supplier calls.' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let content = '';
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        content += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
      }
      expect(content).toContain('Plan next week’s supplier calls.');
      expect(usage?.total_tokens).toBeGreaterThan(0);
      expect(model.requests).toBe(2);
    } finally {
      await model.close();
    }
  });

  it('reaches the ledger through the search-and-call connector tools when those are offered', () => {
    const tool = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } });
    const tools = [
      'search_connector_endpoints',
      'describe_connector_endpoints',
      'call_connector_endpoint',
    ].map(tool);
    const messages: Parameters<typeof scriptedReply>[0] = [
      { role: 'system', content: 'You are the CFO agent.' },
      { role: 'user', content: 'Pay the overdue invoice inv_1001 from Northwind.' },
    ];
    /** The model's next step, answered with `result` as the runtime would. */
    const step = (result: unknown) => {
      const reply = scriptedReply(messages, tools);
      const [call] = reply.toolCalls;
      if (call) {
        messages.push({ role: 'assistant', content: null, tool_calls: reply.toolCalls });
        messages.push({ role: 'tool', content: JSON.stringify(result) });
      }
      return {
        content: reply.content,
        call: call && { name: call.function.name, args: JSON.parse(call.function.arguments) },
      };
    };
    const endpoints = [
      { name: 'demo_ledger_x__get_invoices', method: 'GET', path: '/invoices' },
      { name: 'demo_ledger_x__post_payments', method: 'POST', path: '/payments' },
    ];
    expect(step({ endpoints, total: 2 }).call).toEqual({
      name: 'search_connector_endpoints',
      args: { query: 'ledger invoices payments' },
    });
    expect(step({ status: 200, body: [{ id: 'inv_1001' }] }).call).toEqual({
      name: 'call_connector_endpoint',
      args: { name: 'demo_ledger_x__get_invoices', arguments: { query: { status: 'overdue' } } },
    });
    expect(step({ pending_approval: { id: 'a1', status: 'pending' } }).call).toEqual({
      name: 'call_connector_endpoint',
      args: {
        name: 'demo_ledger_x__post_payments',
        arguments: { body: { invoiceId: 'inv_1001', amountUsd: 1200 } },
      },
    });
    const answer = step(null);
    expect(answer.call).toBeUndefined();
    expect(answer.content).toContain('inv_1001');
    expect(answer.content).toContain('waits for the chairman’s approval');
  });

  it('answers a body that is not JSON with 400 and another path with 404, counting neither', async () => {
    const model = await startScriptedModel();
    try {
      const bad = await fetch(`${model.baseURL}/chat/completions`, { method: 'POST', body: '{not json' });
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('not JSON');
      const noMessages = await fetch(`${model.baseURL}/chat/completions`, { method: 'POST', body: '{}' });
      expect(noMessages.status).toBe(400);
      expect((await fetch(`${model.baseURL}/embeddings`, { method: 'POST', body: '{}' })).status).toBe(404);
      expect(model.requests).toBe(0);
    } finally {
      await model.close();
    }
  });
});

describe.runIf(databaseKind === 'pglite')('the demo ledger’s certificate', () => {
  it('writes each INTEGER in its one DER encoding, whatever the serial’s leading bytes', () => {
    const der = (bytes: number[]) => [...integer(Buffer.from(bytes))];
    expect(der([0x12])).toEqual([0x02, 0x01, 0x12]);
    expect(der([0x00, 0x12])).toEqual([0x02, 0x01, 0x12]);
    expect(der([0x00, 0x00, 0x92])).toEqual([0x02, 0x02, 0x00, 0x92]);
    expect(der([0x80])).toEqual([0x02, 0x02, 0x00, 0x80]);
    expect(der([0x00, 0x00])).toEqual([0x02, 0x01, 0x00]);
    expect(der([])).toEqual([0x02, 0x01, 0x00]);
  });

  it('is a certificate a TLS stack parses, every time (a serial of 16 random bytes)', () => {
    for (let index = 0; index < 300; index += 1) {
      const { cert } = selfSignedCertificate(DEMO_UPSTREAM_HOST);
      expect(new X509Certificate(cert).subjectAltName).toBe(`DNS:${DEMO_UPSTREAM_HOST}`);
    }
  });
});

describe.runIf(databaseKind === 'pglite')('npm run demo, its command line', () => {
  const demo = (...args: string[]) => {
    const result = spawnSync(process.execPath, [demoScript, ...args], { encoding: 'utf8' });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };

  it('prints the usage line for --help and exits 0', () => {
    const result = demo('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(usage);
  });

  it('refuses an unknown flag and a port that is not one with the usage line, exit 2', () => {
    const unknown = demo('--prot', '4000');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("Unknown option '--prot'");
    expect(unknown.stderr).toMatch(usage);
    const port = demo('--port', '70000');
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port must be a whole number from 0 to 65535, not "70000"');
    expect(port.stderr).not.toMatch(/\n\s+at /);
  });
});
