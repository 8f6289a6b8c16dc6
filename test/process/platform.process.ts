import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { decodeRouterConfig } from '../../src/chain/router/accounts.ts';
import { findConfigPda } from '../../src/chain/router/pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../../src/chain/router/program.ts';
import { generatePlatformKeys } from '../../src/platform/local-keys.ts';
import type { PlatformKeys } from '../../src/platform/platform.ts';
import { localRouterDeployment } from '../../src/platform/startup.ts';
import { ADMIN_TOKEN, createTestApp } from '../helpers/app.ts';
import { startTestChain } from '../helpers/chain.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { runAdminCli, runServiceProcess, startServiceProcess } from '../helpers/process.ts';
import { leakedSecrets } from '../platform/secrets.ts';

const keygen = (keys: PlatformKeys, role: keyof PlatformKeys) => JSON.stringify(keys[role].toKeygenArray());

test('production: the keys come from the settings, the start reports what is missing, the CLI initialises the config', async () => {
  const keys = generatePlatformKeys();
  // A chain the service does not run: the router deployed with the admin as upgrade authority,
  // the admin and the fee wallet funded, the screening authority not.
  const chain = await startTestChain({
    wsPort: null,
    programs: [await localRouterDeployment(ROUTER_PROGRAM_ADDRESS, keys.admin.address)],
  });
  await chain.cheats.airdrop(keys.admin.address, 1_000_000_000n);
  await chain.cheats.airdrop(keys.feeWallet.address, 1_000_000_000n);
  const database = await createTestDatabase({ poolSize: 2 });
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-production-'));
  const feeKeyFile = join(dataDir, 'fee-wallet.json');
  await writeFile(feeKeyFile, keygen(keys, 'feeWallet'), { mode: 0o600 });
  const service = await startServiceProcess({
    MODE: 'production',
    DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    ADMIN_TOKEN,
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    RPC_URL: chain.rpcUrl!,
    CLUSTER: 'localnet',
    SCREENING: 'on',
    SCREENING_DENYLIST: 'Vote111111111111111111111111111111111111111',
    PLATFORM_ADMIN_KEYPAIR: keygen(keys, 'admin'),
    SCREENING_AUTHORITY_KEYPAIR: keygen(keys, 'screeningAuthority'),
    PLATFORM_FEE_KEYPAIR: feeKeyFile,
  });
  try {
    const warnings = service.logs
      .filter((line) => line.includes('"step":"platform"') && line.includes('"level":40'))
      .map((line) => JSON.parse(line) as { problem: string; msg: string });
    assert.deepEqual(
      warnings.map((line) => line.problem),
      ['config_missing', 'wallet_unfunded'],
    );
    assert.match(
      warnings[0]!.msg,
      /does not exist, so no route can be created \(InvalidConfig\): run `npm run admin -- platform init`\.$/,
    );

    const cli = (command: string) =>
      runAdminCli(['platform', command, '--url', service.url], { ADMIN_TOKEN });
    const before = await cli('status');
    assert.equal(before.code, 0, before.stderr);
    const status = JSON.parse(before.stdout);
    assert.equal(status.ready, false);
    assert.deepEqual(status.wallets.screeningAuthority, {
      address: keys.screeningAuthority.address,
      lamports: '0',
    });
    assert.deepEqual(
      status.problems.map((problem: { code: string; role?: string }) => [problem.code, problem.role ?? null]),
      [
        ['config_missing', null],
        ['wallet_unfunded', 'screeningAuthority'],
      ],
    );
    assert.equal(status.settings.screeningRequired, true);

    const initialised = await cli('init');
    assert.equal(initialised.code, 0, initialised.stderr);
    const result = JSON.parse(initialised.stdout);
    assert.equal(result.action, 'initialized');
    assert.deepEqual(
      result.platform.problems.map((problem: { code: string }) => problem.code),
      ['wallet_unfunded'],
      'init funds nothing: the screening authority still needs SOL',
    );
    const config = await chain.chain.getAccount(result.platform.config.address);
    assert.ok(config);
    assert.deepEqual(decodeRouterConfig(config.data), {
      admin: keys.admin.address,
      screeningAuthority: keys.screeningAuthority.address,
      platformWallet: keys.feeWallet.address,
      screeningDepositLamports: 2_000_000n,
      bump: (await findConfigPda())[1],
    });
    const again = await cli('init');
    assert.equal(again.code, 0);
    assert.equal(JSON.parse(again.stdout).action, 'unchanged');

    const everything = [...service.logs, before.stdout, initialised.stdout, again.stdout].join('\n');
    assert.deepEqual(leakedSecrets(everything, keys), [], 'no private key in logs or answers');
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
    await database.drop();
    await chain.close();
  }
});

test('production: a missing or malformed platform key stops the start with a clear message', async () => {
  const keys = generatePlatformKeys();
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-production-keys-'));
  try {
    // Everything else a production start needs; it stops before using any of it.
    const production = {
      MODE: 'production',
      DATA_DIR: dataDir,
      DATABASE_URL: 'postgres://127.0.0.1:1/none',
      ADMIN_TOKEN,
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      RPC_URL: 'http://127.0.0.1:1',
      CLUSTER: 'mainnet',
      SCREENING_URL: 'http://127.0.0.1:1',
      PLATFORM_FEE_KEYPAIR: keygen(keys, 'feeWallet'),
    };
    const malformed = JSON.stringify(keys.admin.toKeygenArray().slice(0, 40));
    const result = await runServiceProcess({ ...production, PLATFORM_ADMIN_KEYPAIR: malformed });
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      [
        'Invalid configuration:',
        '  - PLATFORM_ADMIN_KEYPAIR: must be a JSON array of 64 numbers (a solana-keygen keypair file) or the path of such a file',
        '',
      ].join('\n'),
    );
    const missing = await runServiceProcess({ ...production, PLATFORM_ADMIN_KEYPAIR: keygen(keys, 'admin') });
    assert.equal(missing.code, 1);
    assert.equal(
      missing.stderr,
      'Invalid configuration:\n  - SCREENING_AUTHORITY_KEYPAIR is required in production mode: the platform signs with its own keys on that chain (a solana-keygen JSON array of 64 numbers, or the path of such a file)\n',
    );
    assert.deepEqual(
      leakedSecrets(result.stderr + missing.stderr + result.stdout + missing.stdout, keys),
      [],
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('the admin CLI: `platform init` on a chain where the admin is not the upgrade authority exits 1 and says why', async () => {
  const authority = (await generateKeyPairSigner()).address;
  const t = await createTestApp({ platform: { initialised: false, upgradeAuthority: authority } });
  try {
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const cli = (command: string) => runAdminCli(['platform', command, '--url', url, '--token', ADMIN_TOKEN]);
    const status = await cli('status');
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(
      JSON.parse(status.stdout).problems.map((problem: { code: string }) => problem.code),
      ['config_missing', 'admin_not_upgrade_authority'],
    );
    const refused = await cli('init');
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    const body = JSON.parse(refused.stderr);
    assert.equal(body.action, 'refused');
    assert.match(
      body.message,
      new RegExp(
        `^The admin ${t.platform.admin.address} is not the router program's upgrade authority \\(${authority}\\)`,
      ),
    );
    assert.equal(await t.chain.chain.getAccount(t.platform.configAddress), null);
  } finally {
    await t.close();
  }
});
