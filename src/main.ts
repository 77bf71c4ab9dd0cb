// Before anything that compiles WebAssembly (see the module).
import './wasm-tiering.js';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { databaseUrlErrorOf } from './db/connect-error.js';
import { DataDirError, dataDirErrorOf } from './db/data-dir.js';
import { DataDirLockedError } from './db/data-dir-lock.js';
import { printDevelopmentWelcome } from './dev-welcome.js';
import { ListenError } from './listen.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';

let dataDir: string | undefined;
let databaseUrl: string | undefined;
try {
  const config = loadConfig();
  // Only PGlite keeps the database there; with DATABASE_URL a disk-full error is PostgreSQL's own disk.
  if (!config.databaseUrl) dataDir = config.dataDir;
  databaseUrl = config.databaseUrl;
  const logger = createLogger(config.logLevel);
  const started = performance.now();

  // Signals are handled from the first moment: during start-up the first SIGTERM or SIGINT stops the
  // start (the migration under way commits or rolls back as a whole first) and exits; once serving, it
  // shuts the server down. A second signal gets the default action: exit at once.
  const startup = new AbortController();
  let shutdown: ((signal: string) => void) | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    if (shutdown) return shutdown(signal);
    logger.info({ signal }, 'stopping during start-up');
    startup.abort(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const exitAfter = (stop: () => Promise<void>) =>
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );

  // OpenTelemetry is loaded only when a collector is configured.
  const tracing = config.tracing.endpoint
    ? (await import('./observability/tracing.js')).createTracing({ protocol: config.tracing.protocol })
    : undefined;
  const app = await createApp(config, { logger, tracing });
  // PGlite runs in a thread of its own; when that thread dies every database call fails, so the
  // instance exits non-zero for its supervisor to restart it (DATA_DIR's lock names a dead process then).
  void app.services.db.lost?.then((error) => {
    logger.fatal({ err: error }, 'the embedded database stopped; exiting');
    process.exit(1);
  });
  const applied = await app.start({ signal: startup.signal }).catch((error: unknown) => {
    if (startup.signal.aborted) return null;
    throw error;
  });
  if (applied === null || startup.signal.aborted) {
    await exitAfter(() => app.close());
  } else {
    if (applied.length > 0) logger.info({ applied }, 'applied migrations');
    const running = await startServer(app, config.port, config.host).catch(async (error: unknown) => {
      await app.close();
      throw error;
    });
    shutdown = (signal) => {
      logger.info({ signal }, 'shutting down');
      void exitAfter(() => running.close());
    };
    if (startup.signal.aborted) {
      shutdown(String(startup.signal.reason));
    } else {
      logger.info(
        {
          url: running.url,
          database: app.services.db.kind,
          redis: !!config.redisUrl,
          startupMs: Math.round(performance.now() - started),
        },
        'boardroom is ready',
      );
      if (!config.production && !config.auth.jwtSecret && !config.auth.jwksUrl) {
        await printDevelopmentWelcome(app, running.url);
      }
    }
  }
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  if (error instanceof DataDirLockedError || error instanceof DataDirError || error instanceof ListenError) {
    console.error(error.message);
    process.exit(1);
  }
  // PGlite failing on its files after they were opened (a migration on a disk that just filled up), or
  // the first connection to DATABASE_URL's server failing (no such database, nobody listening).
  const oneLine = dataDir
    ? dataDirErrorOf(dataDir, error)
    : databaseUrl && databaseUrlErrorOf(databaseUrl, error);
  if (oneLine) {
    console.error(oneLine.message);
    process.exit(1);
  }
  throw error;
}
