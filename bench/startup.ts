// Start-up and idle memory of `node dist/main.js`: first start on an empty PGlite directory or PostgreSQL
// database (migrations included), restart on the now existing one, to the first 200 from /readyz; then
// resident memory after a few idle seconds. PGlite and PostgreSQL samples alternate.
import { median } from './measure.js';
import { rssMb } from './processes.js';
import { type DatabaseKind, type Gateway, startGateway } from './servers.js';

export interface StartupSample {
  firstStartMs: number;
  firstStartCpuS: number;
  restartMs: number;
  restartCpuS: number;
  idleRssMb: number;
}

export interface StartupFigures {
  samples: StartupSample[];
  median: StartupSample;
}

/** Targets: restart, first start and idle memory. */
export const STARTUP_TARGETS: Record<
  DatabaseKind,
  { restartMs: number; firstStartMs: number; idleRssMb: number }
> = {
  pglite: { restartMs: 1500, firstStartMs: 5000, idleRssMb: 250 },
  postgres: { restartMs: 1000, firstStartMs: 5000, idleRssMb: 150 },
};

async function startupSample(
  database: DatabaseKind,
  index: number,
  runDir: string,
  postgresUrl: string,
  idleSeconds: number,
): Promise<StartupSample> {
  const name = `startup-${database}-${index}`;
  const first: Gateway = await startGateway({ name, database, runDir, postgresUrl });
  await first.stop();
  const again = await startGateway({
    name: `${name}-restart`,
    database,
    runDir,
    postgresUrl,
    reuse: { dataDir: first.dataDir, databaseUrl: first.databaseUrl },
  });
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const idleRssMb = await rssMb(again.pid);
  await again.stop();
  return {
    firstStartMs: first.readyMs,
    firstStartCpuS: first.readyCpuSeconds,
    restartMs: again.readyMs,
    restartCpuS: again.readyCpuSeconds,
    idleRssMb,
  };
}

export async function measureStartup(
  databases: DatabaseKind[],
  samples: number,
  runDir: string,
  postgresUrl: string,
  idleSeconds = 3,
): Promise<Partial<Record<DatabaseKind, StartupFigures>>> {
  const collected: Partial<Record<DatabaseKind, StartupSample[]>> = {};
  for (let index = 0; index < samples; index++) {
    for (const database of index % 2 ? [...databases].reverse() : databases) {
      const sample = await startupSample(database, index, runDir, postgresUrl, idleSeconds);
      collected[database] = [...(collected[database] ?? []), sample];
    }
  }
  return Object.fromEntries(
    Object.entries(collected).map(([database, list]) => {
      const of = (key: keyof StartupSample) => median(list.map((sample) => sample[key]));
      return [
        database,
        {
          samples: list,
          median: {
            firstStartMs: of('firstStartMs'),
            firstStartCpuS: of('firstStartCpuS'),
            restartMs: of('restartMs'),
            restartCpuS: of('restartCpuS'),
            idleRssMb: of('idleRssMb'),
          },
        },
      ];
    }),
  );
}
