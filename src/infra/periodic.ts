import type { Logger } from '../logger.js';

export interface PeriodicOptions {
  intervalMs: number;
  logger: Logger;
  /** The log message when a pass fails (the pass is tried again at the next interval). */
  failure: string;
}

/**
 * Runs `pass` every `intervalMs` in the background, never two at once, the first after one interval;
 * returns the function that stops it and waits for a pass under way.
 */
export function runPeriodically(
  pass: () => Promise<void>,
  { intervalMs, logger, failure }: PeriodicOptions,
): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= pass()
      .catch((error: unknown) => logger.error({ err: error }, failure))
      .finally(() => {
        running = undefined;
      });
  }, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
