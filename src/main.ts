import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { printDevelopmentWelcome } from './dev-welcome.js';
import { createLogger } from './logger.js';
import { startServer } from './server.js';

try {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const started = performance.now();
  const app = await createApp(config, { logger });
  const applied = await app.start();
  if (applied.length > 0) logger.info({ applied }, 'applied migrations');
  const running = await startServer(app, config.port, config.host);
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
  const shutdown = (signal: string) => {
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(2);
  }
  throw error;
}
