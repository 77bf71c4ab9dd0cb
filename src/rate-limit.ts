import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

export interface RateLimiter {
  /** Spends one request of `key`; resolves with the seconds to wait when the budget is spent, else null. */
  consume(key: string): Promise<number | null>;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  /** Requests each caller may make per minute. */
  perMinute: number;
  /** With Redis the budget is shared by every instance. */
  redisUrl?: string | undefined;
}

export async function createRateLimiter({ perMinute, redisUrl }: RateLimiterOptions): Promise<RateLimiter> {
  const common = { keyPrefix: 'boardroom:rate', points: perMinute, duration: 60 };
  let client: Redis | undefined;
  let limiter: RateLimiterMemory | RateLimiterRedis;
  if (redisUrl) {
    client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 });
    await client.connect();
    // If Redis fails mid-flight, keep limiting per instance rather than refusing every request.
    limiter = new RateLimiterRedis({
      ...common,
      storeClient: client,
      insuranceLimiter: new RateLimiterMemory(common),
    });
  } else {
    limiter = new RateLimiterMemory(common);
  }
  return {
    async consume(key) {
      try {
        await limiter.consume(key);
        return null;
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw rejection;
      }
    },
    async close() {
      await client?.quit().catch(() => client?.disconnect());
    },
  };
}
