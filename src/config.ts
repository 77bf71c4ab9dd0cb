import path from 'node:path';
import { z } from 'zod';

const optionalString = z
  .string()
  .trim()
  .transform((value) => value || undefined)
  .optional();

const environment = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(4000),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
      .optional(),
  ),
  REDIS_URL: optionalString.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, 'must be a redis:// URL')
      .optional(),
  ),
  AUTH_JWT_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  AUTH_JWKS_URL: optionalString.pipe(z.url().optional()),
  AUTH_ISSUER: optionalString,
  AUTH_AUDIENCE: optionalString,
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1200),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
});

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  auth: {
    jwtSecret: string | undefined;
    jwksUrl: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
  };
  /** Requests each caller (bearer credential, else client address) may make per minute. */
  rateLimitPerMinute: number;
  logLevel: z.infer<typeof environment>['LOG_LEVEL'];
  production: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses the environment once; every other module receives the resulting Config. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = environment.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const values = parsed.data;
  const production = values.NODE_ENV === 'production';
  if (production && !values.AUTH_JWT_SECRET && !values.AUTH_JWKS_URL) {
    throw new ConfigError('NODE_ENV=production needs AUTH_JWT_SECRET or AUTH_JWKS_URL');
  }
  return {
    port: values.PORT,
    host: values.HOST,
    dataDir: path.resolve(values.DATA_DIR),
    databaseUrl: values.DATABASE_URL,
    redisUrl: values.REDIS_URL,
    auth: {
      jwtSecret: values.AUTH_JWT_SECRET,
      jwksUrl: values.AUTH_JWKS_URL,
      issuer: values.AUTH_ISSUER,
      audience: values.AUTH_AUDIENCE,
    },
    rateLimitPerMinute: values.RATE_LIMIT_PER_MINUTE,
    logLevel: values.LOG_LEVEL,
    production,
  };
}
