import { Redis } from 'ioredis';
import pg from 'pg';

/** The PostgreSQL run must reach its services: fail the run loudly instead of skipping. */
export default async function requireServices() {
  const client = new pg.Client({
    connectionString: process.env.TEST_DATABASE_URL,
    connectionTimeoutMillis: 5000,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new Error(
      `cannot reach PostgreSQL at TEST_DATABASE_URL=${process.env.TEST_DATABASE_URL}: ${(error as Error).message}`,
    );
  } finally {
    await client.end().catch(() => {});
  }
  if (!process.env.TEST_REDIS_URL)
    throw new Error('the PostgreSQL run needs TEST_REDIS_URL (e.g. redis://127.0.0.1:6379)');
  const redis = new Redis(process.env.TEST_REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    connectTimeout: 5000,
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(
      `cannot reach Redis at TEST_REDIS_URL=${process.env.TEST_REDIS_URL}: ${(error as Error).message}`,
    );
  } finally {
    redis.disconnect();
  }
}
