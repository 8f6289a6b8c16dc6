import { resolve } from 'node:path';
import { address, isAddress } from '@solana/kit';
import { z } from 'zod';
import {
  DEFAULT_FEE_SCHEDULE,
  type FeeSchedule,
  feeScheduleOverridesSchema,
  mergeFeeSchedule,
} from './domain/fees.ts';
import { DEFAULT_MIN_CLAIM_LAMPORTS, MIN_CLAIM_FLOOR_LAMPORTS } from './domain/rewards.ts';
import { type KeypairBytes, parseKeypairSetting } from './platform/keypair.ts';
import type { PlatformKeys, PlatformSettings } from './platform/platform.ts';
import { fixedPricesSchema } from './prices/fixed.ts';
import { PRICE_SOURCE_NAMES, type PriceConfig, type PriceSourceName } from './prices/resolver.ts';
import { parseEncryptionKey } from './store/secret-box.ts';

/**
 * The only module that reads the environment. Everything else receives a typed {@link Config}.
 * Every variable is documented in docs/operations.md (the README lists the first ones to know).
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

/** Where local state lives when DATA_DIR is unset (relative to the working directory). */
export const DEFAULT_DATA_DIR = './data';

const port = z.coerce.number().int().min(0).max(65535);
/** An integer setting from `min` to `max`; `fallback` when unset. */
const integer = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const httpUrl = optionalString.refine(
  (value) => value === undefined || /^https?:\/\/[^\s]+$/.test(value),
  'must be an http(s) URL',
);

/** A JSON value in an environment variable, validated by `schema`. */
const jsonVariable = <T extends z.ZodType>(schema: T) =>
  optionalString.transform((text, ctx) => {
    if (text === undefined) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be valid JSON' });
      return z.NEVER;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      ctx.addIssue({ code: 'custom', message: parsed.error.issues.map((issue) => issue.message).join('; ') });
      return z.NEVER;
    }
    return parsed.data as z.output<T>;
  });

/** A keypair setting (its JSON array, or a file's path); the message never quotes the secret. */
const keypairVariable = optionalString.transform((text, ctx): KeypairBytes | undefined => {
  if (text === undefined) return undefined;
  try {
    return parseKeypairSetting(text);
  } catch (error) {
    ctx.addIssue({ code: 'custom', message: (error as Error).message });
    return z.NEVER;
  }
});

/** The platform key settings, by role. */
const PLATFORM_KEY_VARIABLES = {
  admin: 'PLATFORM_ADMIN_KEYPAIR',
  screeningAuthority: 'SCREENING_AUTHORITY_KEYPAIR',
  feeWallet: 'PLATFORM_FEE_KEYPAIR',
} as const satisfies Record<keyof PlatformKeys, string>;

const envSchema = z.object({
  MODE: z.enum(['local', 'production']).default('local'),
  PORT: port.default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default(DEFAULT_DATA_DIR),
  DATABASE_URL: postgresUrl,
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  REDIS_URL: redisUrl,
  RATE_LIMIT_NAMESPACE: optionalString,
  ADMIN_TOKEN: optionalString.refine(
    (value) => value === undefined || value.length >= 24,
    'must be at least 24 characters',
  ),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  NODE_ENV: optionalString,
  METRICS_ENABLED: booleanFlag.default(true),
  // Where a process without the API (`npm run worker`) serves its metrics.
  METRICS_PORT: port.default(9464),
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
  REQUEST_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
  HEADERS_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(10),
  // Above the 60 s idle timeout of common load balancers, so they close idle connections first.
  KEEP_ALIVE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(72),
  ENCRYPTION_KEY: optionalString.refine(
    (value) => value === undefined || parseEncryptionKey(value) !== null,
    'must be 32 bytes as 64 hex characters or base64',
  ),
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(30).max(3650).default(30),
  QUOTE_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(24 * 3600)
    .default(900),
  WORKERS_ENABLED: booleanFlag.default(true),
  // Chain: an RPC endpoint, or the embedded local chain when RPC_URL is unset.
  RPC_URL: httpUrl,
  CLUSTER: z.enum(['mainnet', 'devnet', 'testnet', 'localnet']).optional(),
  LOCAL_RPC_PORT: port.default(8899),
  LOCAL_RPC_HOST: z.string().min(1).default('127.0.0.1'),
  // The embedded chain's behaviour: packages/local-chain's profile names, and the seed of its draws.
  LOCAL_CHAIN_PROFILE: z.enum(['instant', 'mainnet']).default('instant'),
  LOCAL_CHAIN_SEED: optionalString.refine(
    (value) => value === undefined || value.length <= 100,
    'must be at most 100 characters',
  ),
  ROUTER_PROGRAM_ID: optionalString.refine(
    (value) => value === undefined || isAddress(value),
    'must be a base58 program address',
  ),
  PRIORITY_FEE_MICROLAMPORTS_PER_CU: integer(0, 100_000_000, 0),
  // Platform: its keys (required with RPC_URL; generated in DATA_DIR for the embedded chain) and
  // the settings of routes.
  PLATFORM_ADMIN_KEYPAIR: keypairVariable,
  SCREENING_AUTHORITY_KEYPAIR: keypairVariable,
  PLATFORM_FEE_KEYPAIR: keypairVariable,
  SCREENING: z.enum(['on', 'off']).optional(),
  SCREENING_URL: z.url().optional(),
  SCREENING_API_KEY: z.string().min(1).optional(),
  SCREENING_DENYLIST: z
    .string()
    .optional()
    .transform((list) =>
      (list ?? '')
        .split(',')
        .map((address) => address.trim())
        .filter((address) => address !== ''),
    ),
  ROUTE_GRACE_SECONDS: integer(60, 30 * 86_400, 3600),
  PRIORITY_FEE_CAP_MICROLAMPORTS_PER_CU: integer(0, 100_000_000, 1_000_000),
  HOP_PRIORITY_BUDGET_MULTIPLIER: integer(1, 1_000, 8),
  // Fees (defaults: decisions' schedule).
  FEE_TIERS: jsonVariable(feeScheduleOverridesSchema.shape.tiers),
  FEE_FLAT_LAMPORTS_PER_HOP: optionalString,
  FEE_INTEGRATOR_SHARE_BPS: z.coerce.number().int().min(0).max(10_000).optional(),
  FEE_MIN_USD: optionalString,
  // Integrator rewards.
  REWARDS_MIN_CLAIM_LAMPORTS: z.coerce
    .number()
    .int()
    .min(Number(MIN_CLAIM_FLOOR_LAMPORTS))
    .max(Number.MAX_SAFE_INTEGER)
    .default(Number(DEFAULT_MIN_CLAIM_LAMPORTS)),
  // Prices.
  PRICE_SOURCES: optionalString.transform((text, ctx) => {
    if (text === undefined) return undefined;
    const names = text.split(',').map((name) => name.trim());
    for (const name of names) {
      if (!(PRICE_SOURCE_NAMES as readonly string[]).includes(name)) {
        ctx.addIssue({
          code: 'custom',
          message: `unknown source "${name}" (use ${PRICE_SOURCE_NAMES.join(', ')})`,
        });
        return z.NEVER;
      }
    }
    return names as PriceSourceName[];
  }),
  PRICES: jsonVariable(fixedPricesSchema),
  PRICE_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  PRICE_MAX_AGE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  PRICE_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(2_000),
  COINGECKO_BASE_URL: httpUrl,
  COINGECKO_API_KEY: optionalString,
  JUPITER_BASE_URL: httpUrl,
  JUPITER_API_KEY: optionalString,
});

function feeScheduleFrom(env: z.infer<typeof envSchema>): FeeSchedule {
  const overrides = feeScheduleOverridesSchema.parse({
    ...(env.FEE_TIERS ? { tiers: env.FEE_TIERS } : {}),
    ...(env.FEE_FLAT_LAMPORTS_PER_HOP ? { flatFeeLamportsPerHop: env.FEE_FLAT_LAMPORTS_PER_HOP } : {}),
    ...(env.FEE_INTEGRATOR_SHARE_BPS === undefined
      ? {}
      : { integratorShareBps: env.FEE_INTEGRATOR_SHARE_BPS }),
    ...(env.FEE_MIN_USD ? { minUsd: env.FEE_MIN_USD } : {}),
  });
  return mergeFeeSchedule(DEFAULT_FEE_SCHEDULE, overrides);
}

function priceConfigFrom(env: z.infer<typeof envSchema>): PriceConfig {
  const defaultSources: PriceSourceName[] = env.MODE === 'production' ? ['coingecko', 'jupiter'] : ['fixed'];
  const sources = env.PRICE_SOURCES ?? defaultSources;
  return {
    sources,
    fixedPrices: env.PRICES ?? {},
    cacheTtlMs: env.PRICE_CACHE_TTL_SECONDS * 1000,
    maxAgeMs: env.PRICE_MAX_AGE_SECONDS * 1000,
    timeoutMs: env.PRICE_TIMEOUT_MS,
    coingecko: {
      ...(env.COINGECKO_BASE_URL ? { baseUrl: env.COINGECKO_BASE_URL } : {}),
      ...(env.COINGECKO_API_KEY ? { apiKey: env.COINGECKO_API_KEY } : {}),
    },
    jupiter: {
      ...(env.JUPITER_BASE_URL ? { baseUrl: env.JUPITER_BASE_URL } : {}),
      ...(env.JUPITER_API_KEY ? { apiKey: env.JUPITER_API_KEY } : {}),
    },
  };
}

function platformFrom(env: z.infer<typeof envSchema>) {
  const cluster = env.CLUSTER ?? 'localnet';
  const {
    PLATFORM_ADMIN_KEYPAIR: admin,
    SCREENING_AUTHORITY_KEYPAIR: screeningAuthority,
    PLATFORM_FEE_KEYPAIR: feeWallet,
  } = env;
  const settings: PlatformSettings = {
    cluster,
    screeningRequired: env.SCREENING ? env.SCREENING === 'on' : cluster === 'mainnet',
    routeGraceSeconds: env.ROUTE_GRACE_SECONDS,
    priorityFeeCapMicroLamportsPerCu: BigInt(env.PRIORITY_FEE_CAP_MICROLAMPORTS_PER_CU),
    hopPriorityBudgetMultiplier: env.HOP_PRIORITY_BUDGET_MULTIPLIER,
  };
  return {
    /** All three keys when configured (checked by loadConfig); otherwise local mode generates them. */
    keys: admin && screeningAuthority && feeWallet ? { admin, screeningAuthority, feeWallet } : undefined,
    settings,
    /** Where routes are screened when `settings.screeningRequired`: an HTTP API, or a deny list. */
    screening: { url: env.SCREENING_URL, apiKey: env.SCREENING_API_KEY, denylist: env.SCREENING_DENYLIST },
  };
}

export type Config = ReturnType<typeof toConfig>;

function toConfig(env: z.infer<typeof envSchema>, stdoutIsTty: boolean) {
  return {
    mode: env.MODE,
    http: {
      port: env.PORT,
      host: env.HOST,
      bodyLimitBytes: env.BODY_LIMIT_BYTES,
      shutdownGraceMs: env.SHUTDOWN_GRACE_SECONDS * 1000,
      timeouts: {
        requestMs: env.REQUEST_TIMEOUT_SECONDS * 1000,
        headersMs: env.HEADERS_TIMEOUT_SECONDS * 1000,
        keepAliveMs: env.KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
      },
    },
    dataDir: resolve(env.DATA_DIR),
    database: { url: env.DATABASE_URL, poolSize: env.DATABASE_POOL_SIZE },
    redisUrl: env.REDIS_URL,
    /** Prefix of this deployment's rate-limit counters in Redis; derived from the database when unset. */
    rateLimitNamespace: env.RATE_LIMIT_NAMESPACE,
    adminToken: env.ADMIN_TOKEN,
    logLevel: env.LOG_LEVEL,
    // Readable lines for a person at a terminal; JSON lines for a pipe, a file or production.
    logFormat:
      env.LOG_FORMAT ??
      (stdoutIsTty && env.MODE !== 'production' && env.NODE_ENV !== 'production' ? 'pretty' : 'json'),
    metricsEnabled: env.METRICS_ENABLED,
    metricsPort: env.METRICS_PORT,
    authCacheMs: env.AUTH_CACHE_SECONDS * 1000,
    idempotencyTtlMs: env.IDEMPOTENCY_TTL_HOURS * 3600 * 1000,
    encryptionKey: env.ENCRYPTION_KEY ? parseEncryptionKey(env.ENCRYPTION_KEY) : null,
    quoteTtlMs: env.QUOTE_TTL_SECONDS * 1000,
    eventRetentionMs: env.EVENT_RETENTION_DAYS * 24 * 3600 * 1000,
    workersEnabled: env.WORKERS_ENABLED,
    feeSchedule: feeScheduleFrom(env),
    rewardsMinClaimLamports: BigInt(env.REWARDS_MIN_CLAIM_LAMPORTS),
    prices: priceConfigFrom(env),
    chain: {
      rpcUrl: env.RPC_URL,
      cluster: env.CLUSTER ?? 'localnet',
      localRpcPort: env.LOCAL_RPC_PORT,
      localRpcHost: env.LOCAL_RPC_HOST,
      /** How the embedded chain behaves; ignored with `rpcUrl`. No seed: the chain's default one. */
      localProfile: { name: env.LOCAL_CHAIN_PROFILE, seed: env.LOCAL_CHAIN_SEED },
      routerProgramId: env.ROUTER_PROGRAM_ID === undefined ? undefined : address(env.ROUTER_PROGRAM_ID),
      priorityFeeMicroLamportsPerCu: BigInt(env.PRIORITY_FEE_MICROLAMPORTS_PER_CU),
    },
    platform: platformFrom(env),
    webhookPolicy:
      env.MODE === 'production'
        ? { requireHttps: true, allowPrivateNetworks: false }
        : { requireHttps: false, allowPrivateNetworks: true },
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

/**
 * Reads and validates the configuration; production mode refuses to run without its secrets.
 * `stdoutIsTty`: whether the logs go to a terminal (readable lines unless LOG_FORMAT says).
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  { stdoutIsTty = process.stdout.isTTY === true }: { stdoutIsTty?: boolean } = {},
): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const problems: string[] = [];
  let config: Config;
  try {
    config = toConfig(parsed.data, stdoutIsTty);
  } catch (error) {
    throw new ConfigError([`FEE_*: ${(error as Error).message}`]);
  }
  if (config.http.timeouts.headersMs > config.http.timeouts.requestMs) {
    problems.push(
      'HEADERS_TIMEOUT_SECONDS must not exceed REQUEST_TIMEOUT_SECONDS (the headers are part of the request)',
    );
  }
  if (config.chain.rpcUrl && !parsed.data.CLUSTER) {
    problems.push(
      'CLUSTER is required with RPC_URL: say which cluster it serves (mainnet, devnet, testnet or localnet)',
    );
  }
  const missingKeys = (Object.keys(PLATFORM_KEY_VARIABLES) as (keyof PlatformKeys)[]).filter(
    (role) => !parsed.data[PLATFORM_KEY_VARIABLES[role]],
  );
  const keysRequired = config.mode === 'production' || config.chain.rpcUrl !== undefined;
  if (missingKeys.length > 0 && (keysRequired || missingKeys.length < 3)) {
    const why = keysRequired
      ? `${config.mode === 'production' ? 'in production mode' : 'with RPC_URL'}: the platform signs with its own keys on that chain`
      : 'when any of them is set (without them the embedded chain uses keys generated in DATA_DIR)';
    for (const role of missingKeys)
      problems.push(
        `${PLATFORM_KEY_VARIABLES[role]} is required ${why} (a solana-keygen JSON array of 64 numbers, or the path of such a file)`,
      );
  }
  if (
    config.chain.priorityFeeMicroLamportsPerCu > config.platform.settings.priorityFeeCapMicroLamportsPerCu
  ) {
    problems.push(
      'PRIORITY_FEE_MICROLAMPORTS_PER_CU must not exceed PRIORITY_FEE_CAP_MICROLAMPORTS_PER_CU (the highest price a prepared transaction may carry)',
    );
  }
  const screening = config.platform.screening;
  if (config.platform.settings.screeningRequired && !screening.url && screening.denylist.length === 0) {
    problems.push(
      'SCREENING is on: set SCREENING_URL (with SCREENING_API_KEY) for the screening API, or SCREENING_DENYLIST for a list of flagged addresses',
    );
  }
  if (config.mode === 'production') {
    if (!config.database.url) problems.push('DATABASE_URL is required in production mode');
    if (!config.adminToken) problems.push('ADMIN_TOKEN is required in production mode');
    if (!config.encryptionKey) problems.push('ENCRYPTION_KEY is required in production mode');
    if (!config.chain.rpcUrl)
      problems.push('RPC_URL is required in production mode (the embedded chain is for local use)');
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
