// The routine tick at scale (PGlite, in this process, so the database's CPU is counted with the tick's):
// 10,000 routines across 100 tenants, each hourly at a minute of its own (about 167 due per minute). An
// idle tick (nothing due) is timed over many ticks, its CPU per tick and per second of the default interval;
// then the tick at each of the next minutes queues that minute's routines, and its duration is how late
// their tasks are committed after their time, on top of at most one tick interval.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { C_SUITE_ROLES } from '../src/domain/agents/roles.js';
import { tickRoutines } from '../src/domain/routines/tick.js';
import { withInProcessApp } from './in-process.js';
import { median } from './measure.js';

export interface RoutineTickFigures {
  routines: number;
  tenants: number;
  idleTicks: number;
  /** Wall time of an idle tick, median, milliseconds. */
  idleTickMedianMs: number;
  /** CPU (user + system of this process, the database included) per idle tick, milliseconds. */
  idleTickCpuMs: number;
  /** That CPU per second at the default interval (500 ms), milliseconds. */
  idleCpuMsPerS: number;
  /** One entry per due minute: routines due, tasks queued, and the tick's wall time. */
  dueTicks: { due: number; queued: number; ms: number }[];
  /** The slowest due tick plus the default interval: the latest a task is committed after its time. */
  worstLatencyMs: number;
}

const TICK_INTERVAL_MS = 500;

export async function measureRoutineTicks(
  routines = 10_000,
  tenants = 100,
  idleTicks = 200,
  dueMinutes = 5,
  /** A PostgreSQL database to use instead of PGlite (its backends' CPU is then not counted). */
  databaseUrl?: string,
): Promise<RoutineTickFigures> {
  return withInProcessApp(
    'routines',
    {
      // The bench drives the ticks with its own clock.
      ROUTINE_TICK_INTERVAL_MS: String(24 * 60 * 60 * 1000),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    },
    async (app) => {
      const { prisma } = app.services.db;
      const tenantIds: string[] = [];
      for (let index = 0; index < tenants; index += 1) {
        const id = randomUUID();
        await app.services.tenants.ensure(id);
        tenantIds.push(id);
      }
      // The hour after tomorrow's start: every routine's first occurrence is in it, one minute each.
      const base = new Date(Math.ceil((Date.now() + 24 * 60 * 60 * 1000) / 3_600_000) * 3_600_000);
      await prisma.$executeRaw`
      INSERT INTO routines (id, tenant_id, role, cron, time_zone, message, next_run_at, created_by, updated_at)
      SELECT gen_random_uuid(), (${tenantIds}::uuid[])[1 + i % ${tenants}],
             (${[...C_SUITE_ROLES]}::text[])[1 + i % ${C_SUITE_ROLES.length}],
             (i % 60)::text || ' * * * *', 'UTC', 'Routine ' || i,
             ${base}::timestamptz + make_interval(mins => i % 60), 'bench', now()
      FROM generate_series(0, ${routines - 1}) AS i`;

      const idleNow = new Date(base.getTime() - 1000);
      const idleTimes: number[] = [];
      for (let index = 0; index < 10; index += 1) await tickRoutines(prisma, { now: idleNow });
      const cpuBefore = process.cpuUsage();
      for (let index = 0; index < idleTicks; index += 1) {
        const started = performance.now();
        await tickRoutines(prisma, { now: idleNow });
        idleTimes.push(performance.now() - started);
      }
      const cpu = process.cpuUsage(cpuBefore);
      const idleTickCpuMs = (cpu.user + cpu.system) / 1000 / idleTicks;

      const dueTicks: RoutineTickFigures['dueTicks'] = [];
      for (let minute = 0; minute < dueMinutes; minute += 1) {
        const now = new Date(base.getTime() + minute * 60_000);
        const due = await prisma.routine.count({ where: { enabled: true, nextRunAt: { lte: now } } });
        const started = performance.now();
        const report = await tickRoutines(prisma, { now });
        dueTicks.push({ due, queued: report.queued, ms: performance.now() - started });
      }
      return {
        routines,
        tenants,
        idleTicks,
        idleTickMedianMs: median(idleTimes),
        idleTickCpuMs,
        idleCpuMsPerS: idleTickCpuMs * (1000 / TICK_INTERVAL_MS),
        dueTicks,
        worstLatencyMs: Math.max(...dueTicks.map((tick) => tick.ms)) + TICK_INTERVAL_MS,
      };
    },
  );
}

// `npx tsx bench/routines.ts [postgres://…/empty-database]` runs this case alone.
if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureRoutineTicks(10_000, 100, 200, 5, process.argv[2]), null, 2));
}
