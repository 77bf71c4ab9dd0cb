// The report of a run: its shape (also written as JSON) and the tables printed at the end.

import type { A2aFigures } from './a2a.js';
import type { AgentRuntimeFigures } from './agent-runtime.js';
import type { AgentTelemetryFigures } from './agent-telemetry.js';
import type { ClaimWakeFigures } from './claim-wait.js';
import type { DelegationFigures } from './delegation.js';
import type { IngestionFigures } from './experiments.js';
import type { PropagationFigures } from './finetuning.js';
import type { IdleWaitersFigures } from './idle-waiters.js';
import type { McpCallFigures } from './mcp.js';
import type { Plan, Summary } from './measure.js';
import type { QueueRound } from './queue.js';
import type { QueueReferenceRound } from './queue-reference.js';
import type { RoutineTickFigures } from './routines.js';
import { DATABASE_NAMES, type DatabaseKind } from './servers.js';
import { STARTUP_TARGETS, type StartupFigures } from './startup.js';
import type { FanoutCase, FanoutReport } from './subscriptions.js';
import type { TaskRunFigures } from './task-runs.js';
import type { ToolListFigures } from './tool-list.js';
import type { WebhookFairnessFigures, WebhookLatencyFigures } from './webhooks.js';

export interface ThroughputReport {
  title: string;
  connections: number;
  targets: Record<string, Summary>;
  /** Median over rounds of gateway / bare yoga, per database (`pglite@wrk`: both loaded by wrk). */
  ratioToBareYoga: Record<string, number>;
  /** Median over rounds of bare yoga's CPU per request / the gateway's, per database. */
  cpuRatioToBareYoga: Record<string, number>;
  /** Median over rounds of PGlite / PostgreSQL. */
  pgliteToPostgres?: number;
}

/** One operation over REST and over GraphQL on the same gateway, in the same interleaved rounds. */
export interface TransportReport {
  title: string;
  connections: number;
  /** `pglite-rest`, `pglite-graphql`, … */
  targets: Record<string, Summary>;
  /** Median over rounds of REST's throughput / GraphQL's, per database. */
  restToGraphql: Partial<Record<DatabaseKind, number>>;
  /** Median over rounds of REST's median latency / GraphQL's, per database. */
  restToGraphqlP50: Partial<Record<DatabaseKind, number>>;
}

export interface QueueReferenceReport {
  /** `pg-boss 10.4.2`. */
  name: string;
  rounds: QueueReferenceRound[];
  /** Per round: the gateway's drain/s on PostgreSQL / the reference's fetch + complete per second. */
  drainToReference: number[];
  medianDrainToReference: number;
}

export interface BenchReport {
  machine: Record<string, unknown>;
  plan: Record<string, unknown>;
  throughput: Record<string, ThroughputReport>;
  transports: Record<string, TransportReport>;
  ingestion: Partial<Record<DatabaseKind, IngestionFigures>>;
  fanout: (FanoutCase & { report: FanoutReport })[];
  startup: Partial<Record<DatabaseKind, StartupFigures>>;
  propagation?: PropagationFigures;
  webhooks?: WebhookLatencyFigures;
  webhookFairness?: WebhookFairnessFigures;
  mcp?: McpCallFigures;
  toolList?: ToolListFigures;
  a2a?: A2aFigures;
  delegation?: DelegationFigures;
  taskRuns: TaskRunFigures[];
  agentRuntime?: AgentRuntimeFigures;
  agentTelemetry?: AgentTelemetryFigures;
  claimWait: ClaimWakeFigures[];
  idleWaiters: IdleWaitersFigures[];
  routines?: RoutineTickFigures;
  queue: QueueRound[];
  /** The queue case's reference on PostgreSQL (pg-boss), in the same rounds. */
  queueReference?: QueueReferenceReport;
  errors: { case: string; error: string }[];
}

const fixed = (value: number | undefined, digits = 0) =>
  value === undefined || Number.isNaN(value)
    ? '–'
    : value.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function table(header: string[], rows: string[][]): void {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join(' | ')} |`;
  console.log(line(header));
  console.log(
    `| ${widths.map((width, i) => (i === 0 ? '-'.repeat(width) : `${'-'.repeat(width - 1)}:`)).join(' | ')} |`,
  );
  for (const row of rows) console.log(line(row));
}

/** `pglite` → PGlite, `bare-yoga@wrk` → bare yoga (wrk). */
function databaseName(name: string): string {
  const [server = '', loader] = name.split('@');
  return `${DATABASE_NAMES[server as DatabaseKind] ?? 'bare yoga'}${loader ? ` (${loader})` : ''}`;
}

export function printReport(report: BenchReport, plan: Plan): void {
  const machine = report.machine;
  const loaders = report.plan.loader === 'both' ? 'autocannon and wrk' : plan.loader;
  console.log(
    `\nBoardroom benchmark: ${machine.cpus} × ${machine.cpuModel}, Node ${machine.node}, load average ` +
      `${(machine.loadAverageAtStart as number[])[0]?.toFixed(1)} at start; load from ${loaders} in its own process, ` +
      `${plan.rounds} interleaved rounds of ${plan.seconds} s after ${plan.warmupSeconds} s warm-up; medians.`,
  );
  const throughput = Object.values(report.throughput);
  if (throughput.length > 0) {
    console.log('\nThroughput against bare graphql-yoga `{ __typename }` measured in the same rounds');
    const rows: string[][] = [];
    for (const entry of throughput) {
      for (const [name, summary] of Object.entries(entry.targets)) {
        const ratio = entry.ratioToBareYoga[name];
        const cpuRatio = entry.cpuRatioToBareYoga[name];
        rows.push([
          name.startsWith('bare-yoga') ? `${entry.title}: baseline` : entry.title,
          databaseName(name),
          fixed(summary.perSecond),
          ratio === undefined ? '1' : `${fixed(ratio, 2)}×`,
          cpuRatio === undefined ? '1' : `${fixed(cpuRatio, 2)}×`,
          fixed(summary.p50Ms, 2),
          fixed(summary.p99Ms, 1),
          fixed(summary.cpuMsPerRequest, 3),
          summary.helperCpuMsPerRequest === undefined ? '' : fixed(summary.helperCpuMsPerRequest, 3),
          summary.failures > 0 ? `${summary.failures} (${JSON.stringify(summary.statusCodes)})` : '0',
        ]);
      }
    }
    table(
      [
        'case',
        'server',
        'req/s',
        '× bare yoga',
        'by CPU',
        'p50 ms',
        'p99 ms',
        'CPU ms/req',
        'PG CPU ms/req',
        'failed',
      ],
      rows,
    );
    const compared = throughput.filter((entry) => entry.pgliteToPostgres !== undefined);
    if (compared.length > 0) {
      console.log(
        '\nPGlite against PostgreSQL, same rounds (target ≥ 0.80×; chat p99 within 2× PostgreSQL’s)',
      );
      table(
        ['case', 'PGlite / PostgreSQL req/s', 'p99 PGlite / PostgreSQL'],
        compared.map((entry) => [
          entry.title,
          `${fixed(entry.pgliteToPostgres, 2)}×`,
          `${fixed((entry.targets.pglite?.p99Ms ?? Number.NaN) / (entry.targets.postgres?.p99Ms ?? Number.NaN), 2)}×`,
        ]),
      );
    }
  }
  const transports = Object.values(report.transports ?? {});
  if (transports.length > 0) {
    console.log(
      '\nREST against GraphQL, same operation on the same server, same rounds (targets: chat ≤ 1.1× GraphQL’s time, vitals ≥ 0.9× its req/s)',
    );
    const rows: string[][] = [];
    for (const entry of transports) {
      for (const [database, ratio] of Object.entries(entry.restToGraphql)) {
        const rest = entry.targets[`${database}-rest`];
        const graphql = entry.targets[`${database}-graphql`];
        rows.push([
          entry.title,
          databaseName(database),
          fixed(rest?.perSecond, 1),
          fixed(graphql?.perSecond, 1),
          `${fixed(ratio, 2)}×`,
          fixed(rest?.p50Ms, 1),
          fixed(graphql?.p50Ms, 1),
          `${fixed(entry.restToGraphqlP50[database as DatabaseKind], 2)}×`,
          `${(rest?.failures ?? 0) + (graphql?.failures ?? 0)}`,
        ]);
      }
    }
    table(
      [
        'case',
        'server',
        'REST req/s',
        'GraphQL req/s',
        'REST / GraphQL req/s',
        'REST p50 ms',
        'GraphQL p50 ms',
        'REST / GraphQL p50',
        'failed',
      ],
      rows,
    );
  }
  const ingestion = Object.entries(report.ingestion);
  if (ingestion.length > 0) {
    console.log('\nA/B event ingestion through recordAbTestEvents (1,000 events a call, 4 calls at a time)');
    table(
      [
        'database',
        'events',
        'events/s',
        'first tenth',
        'last tenth',
        'p99 ms/call',
        'CPU ms/1k events',
        'results p50/p99 ms (1 client)',
      ],
      ingestion.map(([database, figures]) => [
        databaseName(database),
        fixed(figures.events),
        fixed(figures.eventsPerSecond),
        fixed(figures.firstTenthPerSecond),
        fixed(figures.lastTenthPerSecond),
        fixed(figures.p99MsPerCall),
        fixed(figures.cpuMsPerThousandEvents, 1),
        `${fixed(figures.resultsOneClient.p50Ms, 2)} / ${fixed(figures.resultsOneClient.p99Ms, 2)}`,
      ]),
    );
  }
  if (report.fanout.length > 0) {
    console.log('\nSubscription fan-out: from the publishing request to the last delivery');
    table(
      [
        'subscribers',
        'instances',
        'database',
        'events',
        'missed',
        'p50 ms',
        'p99 ms',
        'max ms',
        'RSS MB before → after each event',
      ],
      report.fanout.map(({ report: r, database }) => [
        fixed(r.clients),
        String(r.instances),
        databaseName(database),
        String(r.events),
        String(r.missed),
        fixed(r.deliveryMs.p50),
        fixed(r.deliveryMs.p99),
        fixed(r.deliveryMs.max),
        [
          Object.values(r.rssMbBefore)
            .map((mb) => fixed(mb))
            .join('+'),
          ...r.perEvent.map((event) =>
            Object.values(event.rssMb)
              .map((mb) => fixed(mb))
              .join('+'),
          ),
        ].join(' → '),
      ]),
    );
  }
  if (report.propagation) {
    const { rollbacks, medianMs, worstMs } = report.propagation;
    console.log(
      `\nModel rollback seen by the other instance (PostgreSQL + Redis, ${rollbacks} rollbacks): median ${fixed(medianMs, 1)} ms, worst ${fixed(worstMs, 1)} ms (target < 1000)`,
    );
  }
  if (report.webhooks) {
    const { deliveries, medianMs, p99Ms, worstMs, mutationMedianMs } = report.webhooks;
    console.log(
      `\nWebhook delivery after the commit that queued the work (PGlite, loopback HTTPS, ${deliveries} deliveries): median ${fixed(medianMs, 1)} ms, p99 ${fixed(p99Ms, 1)} ms (target < 100), worst ${fixed(worstMs, 1)} ms; the chat mutation itself: median ${fixed(mutationMedianMs, 1)} ms`,
    );
  }
  if (report.webhookFairness) {
    const {
      slowEndpoints,
      slowAnswerMs,
      slowBacklog,
      deliveries,
      medianMs,
      p99Ms,
      worstMs,
      slowInFlightMost,
    } = report.webhookFairness;
    console.log(
      `\nWebhook delivery of one tenant while another has ${slowBacklog} deliveries queued for ${slowEndpoints} endpoints answering after ${fixed(slowAnswerMs / 1000, 0)} s (PGlite, ${deliveries} deliveries): median ${fixed(medianMs, 1)} ms, p99 ${fixed(p99Ms, 1)} ms (target < 2000), worst ${fixed(worstMs, 1)} ms; the slow tenant had at most ${slowInFlightMost} attempts in flight`,
    );
  }
  if (report.mcp) {
    const { rounds, pairsPerRound, graphqlMedianMs, mcpMedianMs, ratio } = report.mcp;
    console.log(
      `\nMCP claim_next_task + complete_task against claimNextTask + completeTask over GraphQL (PGlite, in process, ${rounds} rounds of ${pairsPerRound} pairs): ${fixed(mcpMedianMs, 2)} ms / ${fixed(graphqlMedianMs, 2)} ms per pair, ratio ${fixed(ratio, 2)}× (target ≤ 1.2)`,
    );
  }
  if (report.toolList) {
    const { endpointsPerConnector, rows } = report.toolList;
    console.log(
      `\nMCP tools/list for an agent, o200k_base tokens (PGlite, in process, connectors of ${endpointsPerConnector} endpoints): ${rows
        .map(
          (row) =>
            `${row.connectors} connector${row.connectors === 1 ? '' : 's'} ${row.tokens} (${row.tools} tools; a search of 10 ${row.searchTokens}, a describe of 10 ${row.describeTokens})`,
        )
        .join(', ')} (target: flat, ≤ 4000)`,
    );
  }
  if (report.a2a) {
    const a = report.a2a;
    console.log(
      `\nA2A SendMessage against POST /api/v1/agents/cfo/chat (gateway process on PGlite, over HTTP, ${a.rounds} rounds of ${a.callsPerRound}): the gateway's CPU ${fixed(a.sendMessageCpuMs, 2)} ms / ${fixed(a.restChatCpuMs, 2)} ms a request, ratio ${fixed(a.sendCpuRatio, 2)}× (target ≤ 1.2), time ${fixed(a.sendMessageMedianMs, 2)} ms / ${fixed(a.restChatMedianMs, 2)} ms, ${fixed(a.sendRatio, 2)}×; against the chat with an Idempotency-Key (CPU ${fixed(a.keyedRestChatCpuMs, 2)} ms, time ${fixed(a.keyedRestChatMedianMs, 2)} ms) ${fixed(a.keyedSendCpuRatio, 2)}× CPU, ${fixed(a.keyedSendRatio, 2)}× time; a replay by messageId against GetTask of its task: ${fixed(a.replayMedianMs, 2)} ms / ${fixed(a.getTaskMedianMs, 2)} ms, ratio ${fixed(a.replayRatio, 2)}× time, ${fixed(a.replayCpuRatio, 2)}× CPU (target ≤ 1.0)`,
    );
  }
  if (report.delegation) {
    const {
      rounds,
      tasks,
      treeRequests,
      chatRequests,
      treeMedianMs,
      chatsMedianMs,
      ratio,
      treeCpuMedianMs,
      chatsCpuMedianMs,
      cpuRatio,
    } = report.delegation;
    console.log(
      `\nDelegation of a 3-level tree of ${tasks} tasks (CEO → 7 C-suite → 42 registered roles) end to end against ${tasks} independent chats for the same roles, each claimed and completed (PGlite, in process, one request at a time, ${rounds} rounds, fresh tenants): ${fixed(treeMedianMs, 0)} ms per tree (${treeRequests} requests) / ${fixed(chatsMedianMs, 0)} ms per ${tasks} chats (${chatRequests} requests), ratio ${fixed(ratio, 2)}×; by CPU (this process, all threads) ${fixed(treeCpuMedianMs, 0)} ms / ${fixed(chatsCpuMedianMs, 0)} ms, ratio ${fixed(cpuRatio, 2)}×; every tree's tasks completed and its treeCost exact`,
    );
    const { treeMsPerCall, chatsMsPerCall } = report.delegation;
    table(
      ['operation', 'tree ms/call', 'chats ms/call'],
      (['chat', 'claim', 'delegate', 'complete'] as const).map((operation) => [
        operation,
        fixed(treeMsPerCall[operation], 1),
        fixed(chatsMsPerCall[operation], 1),
      ]),
    );
  }
  for (const r of report.taskRuns) {
    const where =
      r.database === 'pglite'
        ? 'gateway process on PGlite; its CPU, all threads: gateway and database'
        : `gateway process on PostgreSQL${r.redis ? ' + Redis' : ''}; its CPU: the gateway alone`;
    const { mainThread } = r;
    const thread = `; main thread alone ${fixed(mainThread.steppedCpuMsPerTask, 1)} (${fixed(mainThread.reportedCpuMsPerTask, 1)}) against ${fixed(mainThread.plainCpuMsPerTask, 1)} ms: ${fixed(mainThread.cpuRatio, 2)}× (${fixed(mainThread.reportedCpuRatio, 2)}×)`;
    const backends = r.backends
      ? `; the database's backends beside it ${fixed(r.backends.steppedCpuMsPerTask, 1)} (${fixed(r.backends.reportedCpuMsPerTask, 1)}) against ${fixed(r.backends.plainCpuMsPerTask, 1)} ms`
      : '';
    console.log(
      `\nRun records (${where}; ${r.rounds} rounds of ${r.tasksPerRound} tasks): claim + a completion carrying ${r.stepsPerTask} model steps ${fixed(r.steppedCpuMsPerTask, 1)} ms of CPU per task against claim + complete alone ${fixed(r.plainCpuMsPerTask, 1)} ms: ${fixed(r.cpuRatio, 2)}× (target ≤ 1.2); with the steps in a report of their own before the completion ${fixed(r.reportedCpuMsPerTask, 1)} ms: ${fixed(r.reportedCpuRatio, 2)}×${thread}${backends}; a 1,000-step timeline read ${r.timelineReads} times over HTTP: p50 ${fixed(r.timelineP50Ms, 1)} ms, p99 ${fixed(r.timelineP99Ms, 1)} ms (target < 100), the gateway's CPU ${fixed(r.timelineCpuMsPerRead, 1)} ms per read`,
    );
  }
  if (report.agentRuntime) {
    const { tasks, modelDelayMs, cycleMedianMs, overheadMedianMs, overheadP90Ms, overheadRatio } =
      report.agentRuntime;
    console.log(
      `\nReference agent runtime (one process, PGlite gateway over loopback HTTP, ${tasks} tasks, model server answering after ${modelDelayMs} ms): ${fixed(cycleMedianMs, 1)} ms per task; its own overhead with Boardroom's answers ${fixed(overheadMedianMs, 1)} ms median, ${fixed(overheadP90Ms, 1)} ms p90 (${fixed(overheadRatio * 100, 0)} % of the model's time)`,
    );
  }
  if (report.agentTelemetry) {
    const { rounds, tasksPerRound, modelDelayMs, offMs, onMs, timeRatio, offCpuMs, onCpuMs, exports } =
      report.agentTelemetry;
    console.log(
      `\nReference agent runtime with OTel export to a loopback collector against without (${rounds} interleaved rounds of ${tasksPerRound} tasks, model answering after ${modelDelayMs} ms): ${fixed(onMs, 1)} against ${fixed(offMs, 1)} ms per task, +${fixed((timeRatio - 1) * 100, 1)} % (median of per-round ratios); runtime CPU per task ${fixed(onCpuMs, 2)} against ${fixed(offCpuMs, 2)} ms; ${exports} OTLP requests received`,
    );
  }
  for (const figures of report.claimWait) {
    const {
      database,
      instances,
      wakeUps,
      idleWaiters,
      medianMs,
      p99Ms,
      worstMs,
      chatMedianMs,
      idleRefusals,
    } = figures;
    const where =
      instances === 2
        ? 'chat on one instance, claim waiting on the other, PostgreSQL + Redis'
        : databaseName(database);
    console.log(
      `\nWaiting claim handed the task after the chat's commit (${where}, ${wakeUps} wake-ups, ${idleWaiters} other claims waiting): median ${fixed(medianMs, 1)} ms, p99 ${fixed(p99Ms, 1)} ms (target < 50), worst ${fixed(worstMs, 1)} ms; the chat mutation itself: median ${fixed(chatMedianMs, 1)} ms; idle claims refused with 503 and sent again: ${idleRefusals}`,
    );
  }
  if (report.routines) {
    const {
      routines,
      tenants,
      idleTicks,
      idleTickMedianMs,
      idleTickCpuMs,
      idleCpuMsPerS,
      dueTicks,
      worstLatencyMs,
    } = report.routines;
    console.log(
      `\nRoutine ticks (${routines.toLocaleString('en')} routines across ${tenants} tenants, PGlite in process): idle tick median ${fixed(idleTickMedianMs, 2)} ms, ${fixed(idleTickCpuMs, 2)} ms CPU (database included) over ${idleTicks} ticks = ${fixed(idleCpuMsPerS, 1)} ms per second at 500 ms; due ticks ${dueTicks.map((tick) => `${tick.queued}/${tick.due} in ${fixed(tick.ms, 0)} ms`).join(', ')}; latest commit after an occurrence's time ${fixed(worstLatencyMs, 0)} ms (target < 1000)`,
    );
  }
  if (report.idleWaiters.length > 0) {
    const seconds = report.idleWaiters[0]?.waiting.seconds;
    console.log(
      `\nIdle CPU with claims waiting for work: the gateway's CPU (and PostgreSQL's backends') in ms per second over ${fixed(seconds, 0)}-second windows, quiet (no agents) before and after, and with the claims waiting (claimNextTask(waitSeconds: 30), sent at once, re-sent as they answer)`,
    );
    table(
      [
        'database',
        'claims',
        'quiet before',
        'waiting',
        'quiet after',
        'added',
        'PG quiet before',
        'PG waiting',
        'PG quiet after',
        'PG added',
        'settle s',
        'CPU ms per claim to establish',
        'answered in window',
        'failures',
      ],
      report.idleWaiters.map((figures) => [
        databaseName(figures.database),
        String(figures.agents),
        fixed(figures.quietBefore.gatewayMsPerS, 1),
        fixed(figures.waiting.gatewayMsPerS, 1),
        fixed(figures.quietAfter.gatewayMsPerS, 1),
        fixed(figures.addedGatewayMsPerS, 1),
        fixed(figures.quietBefore.backendsMsPerS, 1),
        fixed(figures.waiting.backendsMsPerS, 1),
        fixed(figures.quietAfter.backendsMsPerS, 1),
        fixed(figures.addedBackendsMsPerS, 1),
        fixed(figures.settleSeconds, 1),
        fixed(figures.establishCpuMsPerClaim, 2),
        String(figures.answeredDuringWindow),
        String(figures.failures),
      ]),
    );
  }
  if (report.queue.length > 0) {
    console.log(
      '\nQueue: 16 chat producers (sendChatMessage) against 32 agent runtimes (claimTask + completeTask), each round on a fresh tenant with a role and a tenant budget, rounds interleaved (targets: drain/fill ≥ 1.0, claim p99 ≤ 2× chat p99, 0 duplicates, costs exact)',
    );
    table(
      [
        'database',
        'round',
        'backlog',
        'fill/s',
        'drain/s',
        'drain/fill',
        'empty claims',
        'claim p50 ms',
        'claim p99 ms',
        'chat p99 ms',
        'claim p99 / chat p99',
        '503s retried',
        'duplicates',
        'costs exact',
      ],
      report.queue.map((round) => [
        databaseName(round.database),
        String(round.round),
        String(round.backlog),
        fixed(round.fillPerSecond),
        fixed(round.drainPerSecond),
        fixed(round.drainToFill, 2),
        String(round.emptyClaims),
        fixed(round.claimP50Ms, 1),
        fixed(round.claimP99Ms, 1),
        fixed(round.chatP99Ms, 1),
        fixed(round.claimP99Ms / round.chatP99Ms, 2),
        String(round.refusals),
        String(round.duplicates),
        round.costsExact ? 'yes' : 'NO',
      ]),
    );
  }
  if (report.queueReference) {
    const { name, rounds, drainToReference, medianDrainToReference } = report.queueReference;
    console.log(
      `\nQueue reference: ${name} on the same PostgreSQL server (a database of its own) in the same rounds, 16 producers (send) against 32 workers (fetch one job + complete), the same backlog moment and window; gateway drain/s on PostgreSQL / reference drain/s, median of the rounds: ${fixed(medianDrainToReference, 2)}`,
    );
    table(
      [
        'round',
        'backlog',
        'fill/s',
        'drain/s',
        'drain/fill',
        'empty fetches',
        'fetch p50 ms',
        'fetch p99 ms',
        'send p99 ms',
        'duplicates',
        'gateway drain / reference drain',
      ],
      rounds.map((round, i) => [
        String(round.round),
        String(round.backlog),
        fixed(round.fillPerSecond),
        fixed(round.drainPerSecond),
        fixed(round.drainToFill, 2),
        String(round.emptyFetches),
        fixed(round.fetchP50Ms, 1),
        fixed(round.fetchP99Ms, 1),
        fixed(round.sendP99Ms, 1),
        String(round.duplicates),
        fixed(drainToReference[i], 3),
      ]),
    );
  }
  const startup = Object.entries(report.startup);
  if (startup.length > 0) {
    console.log(
      '\nStart-up of node dist/main.js to the first 200 from /readyz, and idle RSS (medians; targets)',
    );
    table(
      [
        'database',
        'first start ms',
        'first start CPU s',
        'restart ms',
        'restart CPU s',
        'idle RSS MB',
        'samples',
      ],
      startup.map(([database, figures]) => {
        const target = STARTUP_TARGETS[database as DatabaseKind];
        return [
          databaseName(database),
          `${fixed(figures.median.firstStartMs)} (< ${target.firstStartMs})`,
          fixed(figures.median.firstStartCpuS, 2),
          `${fixed(figures.median.restartMs)} (< ${target.restartMs})`,
          fixed(figures.median.restartCpuS, 2),
          `${fixed(figures.median.idleRssMb)} (< ${target.idleRssMb})`,
          String(figures.samples.length),
        ];
      }),
    );
  }
  for (const { case: name, error } of report.errors) console.log(`\nFAILED ${name}: ${error.split('\n')[0]}`);
}
