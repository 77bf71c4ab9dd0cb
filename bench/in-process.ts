// A gateway in the bench process on a fresh PGlite directory (or `DATABASE_URL`), for the cases that drive
// it through yoga's fetch or its services directly: mcp, delegation, routines.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { type App, createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

/** The secret the in-process cases sign their tokens with. */
export const BENCH_SECRET = 'bench-secret-that-is-long-enough-for-hs256-signing';

/**
 * Starts the app (`name` names its temporary directory; `env` adds to silent logs, BENCH_SECRET and no rate
 * limit), runs `run` with it, then closes it and removes the directory, whatever `run` did.
 */
export async function withInProcessApp<T>(
  name: string,
  env: Record<string, string>,
  run: (app: App) => Promise<T>,
): Promise<T> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `boardroom-bench-${name}-`));
  const config = loadConfig({
    AUTH_JWT_SECRET: BENCH_SECRET,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PER_MINUTE: '1000000',
    ...env,
  });
  const app = await createApp(config, { logger: pino({ level: 'silent' }) });
  try {
    await app.start();
    return await run(app);
  } finally {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
