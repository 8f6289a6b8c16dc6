import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadCliDefaults, loadConfig } from './config.ts';

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
});

test('production refuses to start without its stores and secrets, listing every missing one', () => {
  assert.throws(
    () => loadConfig({ MODE: 'production' }),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.problems.length === 4 &&
      error.problems.every((problem) => /DATABASE_URL|ADMIN_TOKEN|ENCRYPTION_KEY|RPC_URL/.test(problem)),
  );
  const config = loadConfig({
    MODE: 'production',
    DATABASE_URL: 'postgres://db.internal/router',
    ADMIN_TOKEN: 'a-long-admin-token-of-at-least-24',
    ENCRYPTION_KEY: 'ab'.repeat(32),
    RPC_URL: 'https://rpc.example.com',
    CLUSTER: 'mainnet',
  });
  assert.equal(config.chain.cluster, 'mainnet');
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

test("the admin CLI's defaults: a URL only when the environment names one, with the variable that did", () => {
  assert.deepEqual(loadCliDefaults({ DATA_DIR: '/srv/tr' }), {
    url: undefined,
    defaultUrl: 'http://127.0.0.1:8080',
    adminToken: undefined,
    dataDir: '/srv/tr',
  });
  assert.deepEqual(loadCliDefaults({ PORT: '9090', HOST: '::1' }).url, {
    url: 'http://[::1]:9090',
    from: 'PORT',
  });
  assert.deepEqual(loadCliDefaults({ PORT: '9090', HOST: '0.0.0.0' }).url, {
    url: 'http://127.0.0.1:9090',
    from: 'PORT',
  });
  assert.deepEqual(loadCliDefaults({ PORT: '9090', TRANSFER_ROUTER_URL: 'https://tr.example' }).url, {
    url: 'https://tr.example',
    from: 'TRANSFER_ROUTER_URL',
  });
  assert.equal(loadCliDefaults({}).dataDir, resolve('./data'));
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
