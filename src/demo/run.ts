import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { runAgent } from '../../agent/runtime.js';
import { createApp } from '../app.js';
import { signToken } from '../auth/tokens.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { startServer } from '../server.js';
import { DEMO_MODEL, DEMO_PRICES, type ScriptedModel, startScriptedModel } from './scripted-model.js';
import { apiClient, DEMO_CHATS, queueChat, type SeedResult, seedDemo } from './seed.js';
import { DEMO_UPSTREAM_HOST, type DemoUpstream, startDemoUpstream } from './upstream.js';

/** The demo company's tenant: fixed, so a second run finds it. */
export const DEMO_COMPANY_TENANT_ID = '00000000-0000-4000-8000-00000000de31';

/** The roles a reference runtime works in the demo. */
export const DEMO_ROLES = ['ceo', 'cfo', 'coo'] as const;

export interface DemoOptions {
  /** The demo's own data directory (PGlite files, development secret). Default ./data-demo. */
  dataDir: string;
  /** The gateway's port on 127.0.0.1 (0: any free one). */
  port: number;
  /** The demo upstream's port (0: any free one; the connector follows it). */
  upstreamPort: number;
  /** Seconds between the chats the demo queues after the first ones (0: none). */
  intervalSeconds: number;
  /** Seconds after which the demo approves a waiting connector call as the chairman (undefined: never). */
  autoApproveSeconds?: number | undefined;
  /** The gateway's log level. Default warn. */
  logLevel?: string;
  /** Each line the demo says (the runtimes' events among them). Default: standard output. */
  say?: (line: string) => void;
  /** Seconds a runtime's claim waits on the server for work (0 to 30). Default 25. */
  waitSeconds?: number;
}

export interface RunningDemo {
  url: string;
  tenantId: string;
  /** A chairman (and operator) token of the demo tenant, valid 12 h. */
  chairmanToken: string;
  dashboardUrl: string;
  seed: SeedResult;
  upstream: DemoUpstream;
  model: ScriptedModel;
  /** Every address the demo listens on: all loopback. */
  addresses: string[];
  /** Host names the gateway's egress resolver was asked for (only the demo upstream's is answered). */
  lookups: string[];
  /** Stops the runtimes (their tasks back to the queue), the chats, the gateway and both servers. */
  close(): Promise<void>;
}

/**
 * Starts the demo: the scripted model and the demo ledger on loopback, the gateway on PGlite in `dataDir`
 * (the very app `npm start` runs, with an egress resolver that knows the demo ledger's name and nothing
 * else), seeds the demo company through the API and runs the reference runtime for each of DEMO_ROLES.
 */
export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const say = options.say ?? ((line: string) => console.log(line));
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await closer().catch(() => {});
  };
  try {
    const model = await startScriptedModel();
    closers.push(() => model.close());
    const upstream = await startDemoUpstream(options.upstreamPort);
    closers.push(() => upstream.close());

    const dataDir = path.resolve(options.dataDir);
    // Only what the demo sets: nothing of the caller's environment (a DATABASE_URL, a collector) applies.
    const config = loadConfig({
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: String(options.port),
      LOG_LEVEL: options.logLevel ?? 'warn',
      CONNECTOR_EGRESS_ALLOW: `${DEMO_UPSTREAM_HOST}:${upstream.port}`,
      // A gated call's input is sealed at rest while it waits for approval.
      CONNECTOR_SECRETS_KEY: await demoSecretsKey(dataDir),
    });
    const lookups: string[] = [];
    const app = await createApp(config, {
      logger: createLogger(config.logLevel),
      egress: {
        ca: upstream.cert,
        // Offline by construction: the demo ledger's name is the only one resolved.
        lookup: async (hostname) => {
          lookups.push(hostname);
          if (hostname === DEMO_UPSTREAM_HOST) return [{ address: '127.0.0.1', family: 4 }];
          throw Object.assign(new Error(`${hostname}: the demo resolves no other name`), {
            code: 'ENOTFOUND',
          });
        },
      },
    });
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      await app.start();
      server = await startServer(app, config.port, config.host);
    } catch (error) {
      await app.close();
      throw error;
    }
    closers.push(() => server.close());

    const secret = app.services.config.auth.jwtSecret;
    if (!secret) throw new Error('the demo gateway has no signing secret');
    const chairmanToken = await signToken(secret, {
      tenantId: DEMO_COMPANY_TENANT_ID,
      sub: 'demo-chairman',
      roles: ['chairman', 'operator'],
      ttl: '12h',
    });
    const api = apiClient(server.url, chairmanToken);
    const seed = await seedDemo(api, upstream.baseUrl);
    say(
      seed.created.length > 0
        ? `Seeded the demo company: ${seed.created.join(', ')}, budgets, ${DEMO_CHATS.length} chats.`
        : `Found the demo company from an earlier run; queued ${DEMO_CHATS.length} chats.`,
    );

    const stop = new AbortController();
    const tokens = await Promise.all(
      DEMO_ROLES.map((role) =>
        signToken(secret, {
          tenantId: DEMO_COMPANY_TENANT_ID,
          sub: `demo-${role}-runtime`,
          roles: ['agent'],
          agentRoles: [role],
          ttl: '12h',
        }),
      ),
    );
    // Each runtime works its role's queue until `stop` aborts: not awaited here.
    const runtimes = DEMO_ROLES.map((role, index) =>
      runAgent({
        boardroomUrl: server.url,
        token: tokens[index] ?? '',
        role,
        openai: { baseURL: model.baseURL, apiKey: 'demo' },
        model: DEMO_MODEL,
        prices: DEMO_PRICES,
        signal: stop.signal,
        ...(options.waitSeconds === undefined ? {} : { waitSeconds: options.waitSeconds }),
        log: (event) => {
          const line = describe(event);
          if (line) say(`[${role}] ${line}`);
        },
      }).catch((error: unknown) => {
        say(`[${role}] runtime stopped: ${(error as Error).message}`);
      }),
    );
    // Closed before the gateway: each runtime gives its task back and closes its MCP session.
    closers.push(async () => {
      stop.abort('SIGINT');
      await Promise.all(runtimes);
    });

    const timers: NodeJS.Timeout[] = [];
    // The passes under way (a chat being queued, an approval being decided) end before the gateway closes.
    const passes = new Set<Promise<unknown>>();
    const pass = (work: Promise<unknown>) => {
      passes.add(work);
      void work.finally(() => passes.delete(work));
    };
    closers.push(async () => {
      await Promise.all(passes);
    });
    closers.push(async () => {
      for (const timer of timers) clearInterval(timer);
    });
    if (options.intervalSeconds > 0) {
      let next = 0;
      timers.push(
        setInterval(() => {
          const chat = DEMO_CHATS[next % DEMO_CHATS.length];
          next += 1;
          if (chat) {
            pass(
              queueChat(api, chat).catch((error: unknown) =>
                say(`chat not queued: ${(error as Error).message}`),
              ),
            );
          }
        }, options.intervalSeconds * 1000),
      );
    }
    if (options.autoApproveSeconds !== undefined) {
      const after = options.autoApproveSeconds * 1000;
      let approving = false;
      timers.push(
        setInterval(() => {
          // One pass at a time.
          if (approving) return;
          approving = true;
          pass(
            autoApprove(api, after, say).finally(() => {
              approving = false;
            }),
          );
        }, 1000),
      );
    }

    return {
      url: server.url,
      tenantId: DEMO_COMPANY_TENANT_ID,
      chairmanToken,
      dashboardUrl: `${server.url}/dashboard#token=${chairmanToken}`,
      seed,
      upstream,
      model,
      addresses: [new URL(server.url).hostname, upstream.address, new URL(model.baseURL).hostname],
      lookups,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The demo's key sealing connector secrets (a waiting call's input), kept under its data directory like the
 * development JWT secret, so that approvals made in one run can still be decided in the next.
 */
async function demoSecretsKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'demo-connector-secrets-key');
  const existing = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (existing) return existing;
  const key = `demo:${randomBytes(32).toString('base64')}`;
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/** Approves, as the chairman, each waiting connector call older than `afterMs`. */
async function autoApprove(api: ReturnType<typeof apiClient>, afterMs: number, say: (line: string) => void) {
  try {
    const { connectorCallApprovals } = await api.graphql<{
      connectorCallApprovals: { nodes: { id: string; createdAt: string; method: string; path: string }[] };
    }>(
      'query DemoPending { connectorCallApprovals(status: pending, first: 50) { nodes { id createdAt method path } } }',
    );
    for (const approval of connectorCallApprovals.nodes) {
      if (Date.now() - Date.parse(approval.createdAt) < afterMs) continue;
      await api.graphql(
        'mutation DemoApprove($id: ID!, $note: String) { approveConnectorCall(id: $id, note: $note) { status } }',
        { id: approval.id, note: `Approved by npm run demo --auto-approve after ${afterMs / 1000} s.` },
      );
      say(`[chairman] approved ${approval.method} ${approval.path} (auto-approve)`);
    }
  } catch (error) {
    say(`[chairman] auto-approve failed: ${(error as Error).message}`);
  }
}

/** One line for a runtime event worth showing, or null. */
function describe(event: Record<string, unknown>): string | null {
  const task = typeof event.taskId === 'string' ? event.taskId.slice(0, 8) : '';
  switch (event.event) {
    case 'claimed':
      return `claimed task ${task}`;
    case 'tool_called':
      return `task ${task} called ${String(event.tool).replace(/^.*__/, '')}`;
    case 'delegated':
      return `task ${task} delegated; it comes back when the sub-tasks end`;
    case 'completed':
      return `completed task ${task}: ${event.tokensUsed} tokens, $${Number(event.costUsd).toFixed(6)}`;
    case 'failed':
      return `failed task ${task}: ${event.error}`;
    case 'waiting':
      return `waiting: ${event.outcome}`;
    case 'claim_failed':
      return `claim failed: ${event.error}`;
    default:
      return null;
  }
}
