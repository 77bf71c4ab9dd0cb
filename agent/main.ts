#!/usr/bin/env node
// The reference agent runtime:
//   npm run agent -- --role cfo [--model gpt-4o-mini]
// Under a supervisor (systemd, a container, docker compose), run `node dist/agent.js` or the package's
// `boardroom-agent` bin, never `npm run agent`: npm does not pass SIGTERM on to this process.
// Environment: BOARDROOM_URL (default http://127.0.0.1:4000), BOARDROOM_TOKEN (an agent's token),
// OPENAI_BASE_URL (any OpenAI-compatible endpoint; default OpenAI's), OPENAI_API_KEY, AGENT_MODEL,
// AGENT_PRICES (JSON or a JSON file laid over the price table); an empty variable counts as unset. Bad
// configuration prints what is wrong and the usage line and exits 2. Telemetry (GenAI spans and metrics over
// OTLP/HTTP) is on when OTEL_EXPORTER_OTLP_ENDPOINT (or a signal's own endpoint) is set; see telemetry.ts. SIGTERM or SIGINT stops it: a task in
// progress is released at once (back to the queue, its claim not counted), then it exits 0.
import { parseArgs } from 'node:util';
import { loadPrices, priceOf } from './prices.js';
import { runAgent } from './runtime.js';
import { startTelemetry, type TelemetrySettings, telemetrySettings } from './telemetry.js';

const usage =
  'usage: npm run agent -- --role <role> [--model <name>] [--url <boardroom url>] [--base-url <openai-compatible url>]';

function refuse(problem: string): never {
  console.error(problem);
  console.error(usage);
  process.exit(2);
}

let values: { role?: string; model?: string; url?: string; 'base-url'?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      role: { type: 'string' },
      model: { type: 'string' },
      url: { type: 'string' },
      'base-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  refuse((error as Error).message);
}
if (values.help) {
  console.log(usage);
  console.log(
    'Environment: BOARDROOM_TOKEN (required, an agent token), BOARDROOM_URL, OPENAI_API_KEY, OPENAI_BASE_URL, AGENT_MODEL, AGENT_PRICES; ' +
      'telemetry: OTEL_EXPORTER_OTLP_ENDPOINT and the other standard OTEL_* variables.',
  );
  process.exit(0);
}

/** The environment, a variable set to nothing (as compose passes an unset one) read as unset. */
const env = Object.fromEntries(Object.entries(process.env).filter(([, value]) => value?.trim()));
const role = values.role?.trim().toLowerCase();
if (!role || !/^[a-z][a-z0-9_-]{0,63}$/.test(role))
  refuse('--role is required: the agent role to work for (e.g. cfo)');
const boardroomUrl = values.url ?? env.BOARDROOM_URL ?? 'http://127.0.0.1:4000';
if (!URL.canParse(boardroomUrl) || !/^https?:$/.test(new URL(boardroomUrl).protocol)) {
  refuse(`BOARDROOM_URL ${JSON.stringify(boardroomUrl)} is not an http(s) URL`);
}
const token = env.BOARDROOM_TOKEN?.trim();
if (!token)
  refuse('BOARDROOM_TOKEN is required: a token with the agent role (npm run token -- --roles agent …)');
const baseURL = values['base-url'] ?? env.OPENAI_BASE_URL;
if (baseURL !== undefined && (!URL.canParse(baseURL) || !/^https?:$/.test(new URL(baseURL).protocol))) {
  refuse(`OPENAI_BASE_URL ${JSON.stringify(baseURL)} is not an http(s) URL`);
}
// A local server (vLLM, llama.cpp, Ollama) takes any key; OpenAI's own endpoint needs one.
const apiKey = env.OPENAI_API_KEY?.trim() || (baseURL ? 'none' : undefined);
if (!apiKey) refuse('OPENAI_API_KEY is required (or OPENAI_BASE_URL for a local OpenAI-compatible server)');
const model = values.model ?? env.AGENT_MODEL;
if (!model?.trim()) refuse('--model (or AGENT_MODEL) is required: the model name the endpoint serves');
let prices: ReturnType<typeof loadPrices>;
try {
  prices = loadPrices(env.AGENT_PRICES);
} catch (error) {
  refuse((error as Error).message);
}
if (!priceOf(prices, model)) {
  refuse(
    `no price for the model ${model}: add it with AGENT_PRICES='{"${model}": {"input": 0, "output": 0}}' (USD per million tokens)`,
  );
}
let telemetryConfig: TelemetrySettings | undefined;
try {
  telemetryConfig = telemetrySettings(env);
} catch (error) {
  refuse((error as Error).message);
}

const log = (event: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(event)}\n`);
const telemetry = telemetryConfig ? await startTelemetry(telemetryConfig, log) : undefined;
const controller = new AbortController();
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => controller.abort(signal));
}
try {
  await runAgent({
    boardroomUrl,
    token,
    role,
    openai: { baseURL, apiKey },
    model,
    prices,
    signal: controller.signal,
    log,
    telemetry,
  });
} catch (error) {
  console.error(`agent stopped: ${(error as Error).message}`);
  await telemetry?.shutdown();
  process.exit(1);
}
await telemetry?.shutdown();
