import type { Redis, RedisOptions } from 'ioredis';
import type { Logger } from './logger.js';

/**
 * A Redis client that never takes the process down: errors are listened to (ioredis re-emits every failed
 * connection attempt, and an unheard 'error' event would throw) and logged once per outage, and its
 * recovery is logged. ioredis reconnects on its own, forever. Resolves after the first connection attempt.
 */
export async function createRedisClient(
  url: string,
  role: string,
  logger: Logger | undefined,
  options: RedisOptions,
): Promise<Redis> {
  // Loaded only when configured: a single instance never pays for the Redis client at start-up.
  const { Redis } = await import('ioredis');
  const client = new Redis(url, options);
  let down = false;
  client.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger?.warn({ err: error, redis: role }, 'redis unavailable; retrying');
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    logger?.info({ redis: role }, 'redis available again');
  });
  // Wait for the first connection attempt, whichever way it ends: a reachable Redis is in use from the
  // first request, an unreachable one does not stop the instance from starting.
  await new Promise<void>((resolve) => {
    client.once('ready', () => resolve());
    client.once('error', () => resolve());
  });
  return client;
}
