import { resolve } from 'node:path';
import { z } from 'zod';

/**
 * The only module that reads the environment. Everything else receives a typed {@link Config}.
 * Every variable is documented in the README's configuration table.
 */

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

const postgresUrl = optionalString.refine(
  (value) => value === undefined || /^postgres(ql)?:\/\//.test(value),
  'must be a postgres:// or postgresql:// URL',
);

const redisUrl = optionalString.refine(
  (value) => value === undefined || /^rediss?:\/\//.test(value),
  'must be a redis:// or rediss:// URL',
);

const port = z.coerce.number().int().min(0).max(65535);

const envSchema = z.object({
  MODE: z.enum(['local', 'production']).default('local'),
  PORT: port.default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: postgresUrl,
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  REDIS_URL: redisUrl,
  ADMIN_TOKEN: optionalString.refine(
    (value) => value === undefined || value.length >= 24,
    'must be at least 24 characters',
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  METRICS_ENABLED: booleanFlag.default(true),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(10 * 1024 * 1024)
    .default(64 * 1024),
  AUTH_CACHE_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  IDEMPOTENCY_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(24),
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(1).max(600).default(25),
});

export type Config = ReturnType<typeof toConfig>;

function toConfig(env: z.infer<typeof envSchema>) {
  return {
    mode: env.MODE,
    http: {
      port: env.PORT,
      host: env.HOST,
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      shutdownGraceMs: env.SHUTDOWN_GRACE_SECONDS * 1000,
    },
    dataDir: resolve(env.DATA_DIR),
    database: { url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE },
    redisUrl: env.REDIS_URL,
    adminToken: env.ADMIN_TOKEN,
    logLevel: env.LOG_LEVEL,
    metricsEnabled: env.METRICS_ENABLED,
    authCacheMs: env.AUTH_CACHE_SECONDS * 1000,
    idempotencyTtlMs: env.IDEMPOTENCY_TTL_HOURS * 3600 * 1000,
  };
}

/** Raised when the environment is invalid; lists every problem at once. */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Reads and validates the configuration; production mode refuses to run without its secrets. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const config = toConfig(parsed.data);
  if (config.mode === 'production') {
    const missing: string[] = [];
    if (!config.database.url) missing.push('DATABASE_URL is required in production mode');
    if (!config.adminToken) missing.push('ADMIN_TOKEN is required in production mode');
    if (missing.length > 0) throw new ConfigError(missing);
  }
  return config;
}
