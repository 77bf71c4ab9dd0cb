import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Viewer } from './auth/viewer.js';
import type { Logger } from './logger.js';
import { createRedisClient } from './redis.js';

export interface RateLimiter {
  /** Spends one request of `key`; resolves with the seconds to wait when the budget is spent, else null. */
  consume(key: string): Promise<number | null>;
  /**
   * Spends one failed authentication of a client address, from a budget of its own; resolves with the
   * seconds to wait when it is spent, else null.
   */
  consumeAuthFailure(address: string | undefined): Promise<number | null>;
  /**
   * Spends one call of `key` in each of `windows` (a count per fixed window of that many seconds, of a
   * limit that may differ per key); resolves with the seconds until every exhausted window admits a call
   * again when any is exhausted, else null. A refused call counts too.
   */
  consumeWindows(key: string, windows: readonly CallWindow[]): Promise<number | null>;
  close(): Promise<void>;
}

/** A limit of calls per window; windows of one length share a counter per key. */
export interface CallWindow {
  seconds: (typeof CALL_WINDOW_SECONDS)[number];
  limit: number;
}

export const CALL_WINDOW_SECONDS = [60, 3600, 86_400] as const;

export interface RateLimiterOptions {
  /** Requests each caller may make per minute. */
  perMinute: number;
  /** Failed authentications each client address may make per minute. */
  authFailuresPerMinute: number;
  /** With Redis the budgets are shared by every instance. */
  redisUrl?: string | undefined;
  /** Where Redis outages and recoveries are logged. Default: nowhere. */
  logger?: Logger | undefined;
}

/** The budget of a verified caller: its tenant and subject, however its credential is spelled. */
export function callerKey(viewer: Pick<Viewer, 'tenantId' | 'sub'>): string {
  return `caller:${JSON.stringify([viewer.tenantId, viewer.sub])}`;
}

/** The budget of a request without a verified caller: its client address. */
export function addressKey(address: string | undefined): string {
  return `address:${address ?? 'unknown'}`;
}

type Limiter = RateLimiterMemory | RateLimiterRedis;

function spend(limiter: Limiter) {
  return async (key: string): Promise<number | null> => {
    try {
      await limiter.consume(key);
      return null;
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw rejection;
    }
  };
}

export async function createRateLimiter({
  perMinute,
  authFailuresPerMinute,
  redisUrl,
  logger,
}: RateLimiterOptions): Promise<RateLimiter> {
  const requests = { keyPrefix: 'boardroom:rate', points: perMinute, duration: 60 };
  const failures = { keyPrefix: 'boardroom:auth-failures', points: authFailuresPerMinute, duration: 60 };
  let client: Redis | undefined;
  let make: (options: typeof requests) => Limiter;
  if (redisUrl) {
    // No offline queue and a short command timeout: while Redis is down or hung a request fails over to
    // the insurance limiter at once instead of waiting for reconnection attempts. Not awaited: an
    // instance starts (limiting per instance) while Redis is down.
    const redis = await createRedisClient(redisUrl, 'rate limiter', logger, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1000,
    });
    client = redis;
    // If Redis fails mid-flight, keep limiting per instance rather than refusing every request.
    make = (options) =>
      new RateLimiterRedis({
        ...options,
        storeClient: redis,
        insuranceLimiter: new RateLimiterMemory(options),
      });
  } else {
    make = (options) => new RateLimiterMemory(options);
  }
  const consume = spend(make(requests));
  const consumeFailure = spend(make(failures));
  // The limit differs per key (a connector's template), so each window counts without a ceiling of its
  // own and the count is compared with the limit of the call.
  const windows = new Map(
    CALL_WINDOW_SECONDS.map((seconds) => [
      seconds,
      make({ keyPrefix: `boardroom:calls:${seconds}`, points: 2 ** 31 - 1, duration: seconds }),
    ]),
  );
  return {
    consume,
    consumeAuthFailure: (address) => consumeFailure(addressKey(address)),
    async consumeWindows(key, limits) {
      const spent = await Promise.all(
        limits.map(async ({ seconds, limit }) => {
          const counted = await (windows.get(seconds) as Limiter).consume(key);
          return counted.consumedPoints > limit ? counted.msBeforeNext : null;
        }),
      );
      const waits = spent.filter((ms): ms is number => ms !== null);
      return waits.length === 0 ? null : Math.max(1, Math.ceil(Math.max(...waits) / 1000));
    },
    async close() {
      await client?.quit().catch(() => client?.disconnect());
    },
  };
}
