import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { parseChainProfile } from '@transfer-router/local-chain';
import { ConfigError, loadConfig } from './config.ts';
import { generateKeypair } from './platform/keypair.ts';

/** The three platform key settings, as JSON arrays of fresh keys. */
function platformKeySettings() {
  const keys = {
    admin: generateKeypair(),
    screeningAuthority: generateKeypair(),
    feeWallet: generateKeypair(),
  };
  return {
    keys,
    env: {
      PLATFORM_ADMIN_KEYPAIR: JSON.stringify(keys.admin.toKeygenArray()),
      SCREENING_AUTHORITY_KEYPAIR: JSON.stringify(keys.screeningAuthority.toKeygenArray()),
      PLATFORM_FEE_KEYPAIR: JSON.stringify(keys.feeWallet.toKeygenArray()),
    },
  };
}

test('defaults describe a local service on embedded stores', () => {
  const config = loadConfig({});
  assert.equal(config.mode, 'local');
  assert.deepEqual(config.http, {
    port: 8080,
    host: '127.0.0.1',
    bodyLimitBytes: 65536,
    shutdownGraceMs: 25_000,
    timeouts: { requestMs: 30_000, headersMs: 10_000, keepAliveMs: 72_000 },
  });
  assert.equal(config.dataDir, resolve('./data'));
  assert.equal(config.database.url, undefined);
  assert.equal(config.redisUrl, undefined);
  assert.equal(config.rateLimitNamespace, undefined, 'derived from the database at start');
  assert.equal(config.adminToken, undefined);
  assert.equal(config.chain.rpcUrl, undefined);
  assert.equal(config.chain.cluster, 'localnet');
  assert.deepEqual(config.prices.sources, ['fixed']);
  assert.equal(config.feeSchedule.flatFeeLamportsPerHop, 10_000n);
  assert.equal(config.quoteTtlMs, 900_000);
  assert.deepEqual(config.webhookPolicy, { requireHttps: false, allowPrivateNetworks: true });
  assert.equal(config.platform.keys, undefined, 'generated in DATA_DIR at start');
  assert.deepEqual(config.platform.settings, {
    cluster: 'localnet',
    screeningRequired: false,
    routeGraceSeconds: 3600,
    priorityFeeCapMicroLamportsPerCu: 1_000_000n,
    hopPriorityBudgetMultiplier: 8,
  });
});

test('production refuses to start without its stores and secrets, listing every missing one', () => {
  assert.throws(
    () => loadConfig({ MODE: 'production' }),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.length === 7 &&
      error.problems.every((problem) =>
        /^(DATABASE_URL|ADMIN_TOKEN|ENCRYPTION_KEY|RPC_URL|PLATFORM_ADMIN_KEYPAIR|SCREENING_AUTHORITY_KEYPAIR|PLATFORM_FEE_KEYPAIR) /.test(
          problem,
        ),
      ),
  );
  const platform = platformKeySettings();
  const config = loadConfig({
    MODE: 'production',
    DATABASE_URL: 'postgres://db.internal/router',
    ADMIN_TOKEN: 'a-long-admin-token-of-at-least-24',
    ENCRYPTION_KEY: 'ab'.repeat(32),
    RPC_URL: 'https://rpc.example.com',
    CLUSTER: 'mainnet',
    SCREENING_URL: 'https://screening.example.com',
    SCREENING_API_KEY: 'screening-key',
    ...platform.env,
  });
  assert.equal(config.chain.cluster, 'mainnet');
  assert.deepEqual(config.platform.screening, {
    url: 'https://screening.example.com',
    apiKey: 'screening-key',
    denylist: [],
  });
  assert.equal(config.platform.keys?.admin.address, platform.keys.admin.address);
  assert.equal(config.platform.keys?.screeningAuthority.address, platform.keys.screeningAuthority.address);
  assert.equal(config.platform.keys?.feeWallet.address, platform.keys.feeWallet.address);
  assert.equal(config.platform.settings.screeningRequired, true, 'screening is on by default on mainnet');
  assert.deepEqual(config.prices.sources, ['coingecko', 'jupiter']);
  assert.deepEqual(config.webhookPolicy, { requireHttps: true, allowPrivateNetworks: false });
  assert.equal(config.encryptionKey?.length, 32);
});

test('invalid values are reported together, by variable', () => {
  assert.throws(
    () =>
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://nope',
        LOG_LEVEL: 'loud',
        ADMIN_TOKEN: 'short',
        PRICES: '{not json',
      }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      const text = error.problems.join('\n');
      for (const name of ['PORT', 'DATABASE_URL', 'LOG_LEVEL', 'ADMIN_TOKEN', 'PRICES'])
        assert.match(text, new RegExp(name));
      return true;
    },
  );
  assert.throws(() => loadConfig({ PRICE_SOURCES: 'coingecko,oracle' }), /unknown source "oracle"/);
  assert.throws(() => loadConfig({ RPC_URL: 'https://rpc.example.com' }), /CLUSTER is required with RPC_URL/);
});

test('a deployment may name its rate-limit counters in Redis', () => {
  const config = loadConfig({ REDIS_URL: 'redis://cache.internal:6379', RATE_LIMIT_NAMESPACE: ' staging ' });
  assert.equal(config.redisUrl, 'redis://cache.internal:6379');
  assert.equal(config.rateLimitNamespace, 'staging');
  assert.equal(loadConfig({ RATE_LIMIT_NAMESPACE: '' }).rateLimitNamespace, undefined);
});

test('fee settings override the decisions schedule', () => {
  const config = loadConfig({
    FEE_FLAT_LAMPORTS_PER_HOP: '5000',
    FEE_INTEGRATOR_SHARE_BPS: '2500',
    FEE_MIN_USD: '0.5',
    FEE_TIERS: '[{"name":"all","minUsd":"0","percentFeeBps":80}]',
  });
  assert.deepEqual(config.feeSchedule, {
    tiers: [{ name: 'all', minUsd: '0', percentFeeBps: 80 }],
    flatFeeLamportsPerHop: 5000n,
    integratorShareBps: 2500,
    minUsd: '0.5',
  });
});

test('the minimum of a reward claim: 1,000,000 lamports unless configured, never below a wallet’s rent', () => {
  assert.equal(loadConfig({}).rewardsMinClaimLamports, 1_000_000n);
  assert.equal(loadConfig({ REWARDS_MIN_CLAIM_LAMPORTS: '5000000' }).rewardsMinClaimLamports, 5_000_000n);
  assert.throws(() => loadConfig({ REWARDS_MIN_CLAIM_LAMPORTS: '890879' }), /REWARDS_MIN_CLAIM_LAMPORTS/);
});

test("the embedded chain's profile: instant unless LOCAL_CHAIN_PROFILE says mainnet, a bad value stopping the start", () => {
  assert.deepEqual(loadConfig({}).chain.localProfile, { name: 'instant', seed: undefined });
  assert.deepEqual(
    loadConfig({ LOCAL_CHAIN_PROFILE: 'mainnet', LOCAL_CHAIN_SEED: ' rehearsal-7 ' }).chain.localProfile,
    { name: 'mainnet', seed: 'rehearsal-7' },
  );
  assert.equal(
    loadConfig({ LOCAL_CHAIN_SEED: '' }).chain.localProfile.seed,
    undefined,
    "the chain's default",
  );
  // The names the service accepts are the local chain's.
  for (const name of ['instant', 'mainnet'])
    assert.equal(parseChainProfile(loadConfig({ LOCAL_CHAIN_PROFILE: name }).chain.localProfile.name), name);
  assert.throws(
    () => loadConfig({ LOCAL_CHAIN_PROFILE: 'devnet', LOCAL_CHAIN_SEED: 'x'.repeat(101) }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 2);
      assert.match(error.problems[0]!, /^LOCAL_CHAIN_PROFILE: .*"instant".*"mainnet"/);
      assert.equal(error.problems[1], 'LOCAL_CHAIN_SEED: must be at most 100 characters');
      return true;
    },
  );
  // With RPC_URL no embedded chain runs: the profile is accepted and ignored.
  const { env } = platformKeySettings();
  const remote = loadConfig({
    RPC_URL: 'https://api.devnet.solana.com',
    CLUSTER: 'devnet',
    LOCAL_CHAIN_PROFILE: 'mainnet',
    ...env,
  });
  assert.equal(remote.chain.rpcUrl, 'https://api.devnet.solana.com');
});

test('HTTP timeouts are set in seconds, and the headers cannot be allowed longer than the request', () => {
  const config = loadConfig({
    REQUEST_TIMEOUT_SECONDS: '20',
    HEADERS_TIMEOUT_SECONDS: '5',
    KEEP_ALIVE_TIMEOUT_SECONDS: '65',
  });
  assert.deepEqual(config.http.timeouts, { requestMs: 20_000, headersMs: 5_000, keepAliveMs: 65_000 });
  assert.throws(
    () => loadConfig({ REQUEST_TIMEOUT_SECONDS: '5', HEADERS_TIMEOUT_SECONDS: '10' }),
    /HEADERS_TIMEOUT_SECONDS must not exceed REQUEST_TIMEOUT_SECONDS/,
  );
  assert.throws(() => loadConfig({ REQUEST_TIMEOUT_SECONDS: '0' }), /REQUEST_TIMEOUT_SECONDS/);
});

test('platform keys: required with RPC_URL, all three or none, a JSON array or a file, never quoted when wrong', async () => {
  const { keys, env } = platformKeySettings();
  const rpc = { RPC_URL: 'https://rpc.example.com', CLUSTER: 'devnet' };
  assert.throws(
    () => loadConfig(rpc),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.problems, [
        'PLATFORM_ADMIN_KEYPAIR is required with RPC_URL: the platform signs with its own keys on that chain (a solana-keygen JSON array of 64 numbers, or the path of such a file)',
        'SCREENING_AUTHORITY_KEYPAIR is required with RPC_URL: the platform signs with its own keys on that chain (a solana-keygen JSON array of 64 numbers, or the path of such a file)',
        'PLATFORM_FEE_KEYPAIR is required with RPC_URL: the platform signs with its own keys on that chain (a solana-keygen JSON array of 64 numbers, or the path of such a file)',
      ]);
      return true;
    },
  );
  assert.throws(
    () => loadConfig({ PLATFORM_ADMIN_KEYPAIR: env.PLATFORM_ADMIN_KEYPAIR }),
    /SCREENING_AUTHORITY_KEYPAIR is required when any of them is set/,
  );

  const dir = await mkdtemp(join(tmpdir(), 'tr-config-keys-'));
  try {
    const file = join(dir, 'fee.json');
    await writeFile(file, env.PLATFORM_FEE_KEYPAIR);
    const config = loadConfig({ ...rpc, ...env, PLATFORM_FEE_KEYPAIR: file });
    assert.equal(config.platform.keys?.feeWallet.address, keys.feeWallet.address);
    assert.equal(
      config.platform.settings.screeningRequired,
      false,
      'screening is off by default off mainnet',
    );

    const secret = keys.admin.toKeygenArray();
    const wrong = [...secret.slice(0, 32), ...keys.feeWallet.toKeygenArray().slice(32)];
    assert.throws(
      () =>
        loadConfig({
          ...rpc,
          ...env,
          PLATFORM_ADMIN_KEYPAIR: JSON.stringify(wrong),
          SCREENING_AUTHORITY_KEYPAIR: `${env.SCREENING_AUTHORITY_KEYPAIR.slice(0, -1)}`,
          PLATFORM_FEE_KEYPAIR: join(dir, 'missing.json'),
        }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, [
          'PLATFORM_ADMIN_KEYPAIR: is not a keypair: its last 32 bytes are not the public key of its first 32',
          'SCREENING_AUTHORITY_KEYPAIR: must be a JSON array of 64 numbers (a solana-keygen keypair file) or the path of such a file; it is not valid JSON',
          `PLATFORM_FEE_KEYPAIR: must be a JSON array of 64 numbers (a solana-keygen keypair file) or the path of such a file; cannot read the file ${join(dir, 'missing.json')} (ENOENT)`,
        ]);
        return true;
      },
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('route settings: SCREENING, ROUTE_GRACE_SECONDS, the priority fee cap and the hops’ budget multiplier', () => {
  const config = loadConfig({
    SCREENING: 'on',
    SCREENING_DENYLIST:
      ' Vote111111111111111111111111111111111111111, Stake11111111111111111111111111111111111111 ,',
    ROUTE_GRACE_SECONDS: '600',
    PRIORITY_FEE_CAP_MICROLAMPORTS_PER_CU: '50000',
    PRIORITY_FEE_MICROLAMPORTS_PER_CU: '50000',
    HOP_PRIORITY_BUDGET_MULTIPLIER: '20',
  });
  assert.deepEqual(config.platform.settings, {
    cluster: 'localnet',
    screeningRequired: true,
    routeGraceSeconds: 600,
    priorityFeeCapMicroLamportsPerCu: 50_000n,
    hopPriorityBudgetMultiplier: 20,
  });
  const { env } = platformKeySettings();
  assert.equal(
    loadConfig({ RPC_URL: 'https://rpc.example.com', CLUSTER: 'mainnet', SCREENING: 'off', ...env }).platform
      .settings.screeningRequired,
    false,
  );
  assert.deepEqual(config.platform.screening.denylist, [
    'Vote111111111111111111111111111111111111111',
    'Stake11111111111111111111111111111111111111',
  ]);
  assert.throws(() => loadConfig({ SCREENING: 'yes' }), /SCREENING/);
  assert.throws(
    () => loadConfig({ SCREENING: 'on' }),
    /SCREENING is on: set SCREENING_URL \(with SCREENING_API_KEY\) for the screening API, or SCREENING_DENYLIST/,
  );
  assert.throws(() => loadConfig({ ROUTE_GRACE_SECONDS: '10' }), /ROUTE_GRACE_SECONDS/);
  assert.throws(() => loadConfig({ HOP_PRIORITY_BUDGET_MULTIPLIER: '0' }), /HOP_PRIORITY_BUDGET_MULTIPLIER/);
  assert.throws(
    () => loadConfig({ HOP_PRIORITY_BUDGET_MULTIPLIER: '1.5' }),
    /HOP_PRIORITY_BUDGET_MULTIPLIER/,
  );
  assert.throws(
    () => loadConfig({ PRIORITY_FEE_MICROLAMPORTS_PER_CU: '2000000' }),
    /PRIORITY_FEE_MICROLAMPORTS_PER_CU must not exceed PRIORITY_FEE_CAP_MICROLAMPORTS_PER_CU/,
  );
});

test('logs: readable at a terminal, JSON lines when piped or in production, LOG_FORMAT deciding when set', () => {
  const format = (env: Record<string, string>, stdoutIsTty: boolean) => {
    const keys = env.MODE === 'production' ? productionSettings() : {};
    return loadConfig({ ...keys, ...env }, { stdoutIsTty }).logFormat;
  };
  assert.equal(format({}, true), 'pretty');
  assert.equal(format({}, false), 'json', 'piped or redirected');
  assert.equal(format({ NODE_ENV: 'production' }, true), 'json');
  assert.equal(format({ MODE: 'production' }, true), 'json');
  assert.equal(format({ LOG_FORMAT: 'json' }, true), 'json');
  assert.equal(format({ LOG_FORMAT: 'pretty' }, false), 'pretty');
  assert.equal(format({ LOG_FORMAT: 'pretty', MODE: 'production' }, false), 'pretty');
  assert.throws(() => loadConfig({ LOG_FORMAT: 'yaml' }), /LOG_FORMAT: Invalid option/);
});

/** What production mode requires, valid. */
function productionSettings(): Record<string, string> {
  return {
    DATABASE_URL: 'postgres://localhost/transfer_router',
    ADMIN_TOKEN: 'a'.repeat(32),
    ENCRYPTION_KEY: 'ab'.repeat(32),
    RPC_URL: 'https://rpc.example',
    CLUSTER: 'mainnet',
    ...platformKeySettings().env,
    SCREENING_DENYLIST: 'So11111111111111111111111111111111111111112',
  };
}
