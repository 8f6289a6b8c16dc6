import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CONFIG_ACCOUNT_SIZE, decodeRouterConfig } from '../../src/chain/router/accounts.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../../src/chain/router/program.ts';
import { createManualClock } from '../../src/domain/clock.ts';
import { createPlatformAdmin } from '../../src/platform/admin.ts';
import { ensureLocalPlatformKeys, generatePlatformKeys } from '../../src/platform/local-keys.ts';
import { createPlatform, type Platform, type PlatformKeys } from '../../src/platform/platform.ts';
import {
  LOCAL_WALLET_LAMPORTS,
  localRouterDeployment,
  type PlatformLog,
  setUpLocalPlatform,
} from '../../src/platform/startup.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { startTestChain, type TestChain } from '../helpers/chain.ts';

/** A log that keeps its lines. */
function recordingLog() {
  const lines: { level: 'info' | 'warn'; details: object; message: string }[] = [];
  const log: PlatformLog = {
    info: (details, message) => lines.push({ level: 'info', details, message }),
    warn: (details, message) => lines.push({ level: 'warn', details, message }),
  };
  return { log, lines };
}

const settings = {
  cluster: 'localnet',
  screeningRequired: false,
  routeGraceSeconds: 3600,
  priorityFeeCapMicroLamportsPerCu: 1_000_000n,
  hopPriorityBudgetMultiplier: 8,
} as const;

/** One start of local mode's chain and platform on `dataDir`, as the service does it. */
async function startLocal(dataDir: string, keys: PlatformKeys, clock: ReturnType<typeof createManualClock>) {
  const platform = await createPlatform({ keys, programAddress: ROUTER_PROGRAM_ADDRESS, settings });
  const local = await startTestChain({
    dataDir: join(dataDir, 'chain'),
    autoTick: false,
    clock,
    programs: [await localRouterDeployment(platform.programAddress, platform.admin.address)],
  });
  const platformAdmin = createPlatformAdmin({ chain: local.chain, platform });
  const { log, lines } = recordingLog();
  const result = await setUpLocalPlatform({
    chain: local.chain,
    airdrop: local.cheats.airdrop,
    platform,
    platformAdmin,
    log,
  });
  return { platform, local, platformAdmin, result, lines };
}

async function configOnChain(local: TestChain, platform: Platform) {
  const account = await local.chain.getAccount(platform.configAddress);
  assert.ok(account, 'the config exists');
  return decodeRouterConfig(account.data);
}

test('local mode: the first start deploys the router with the admin as upgrade authority, funds the wallets and initialises the config; later starts reuse it all', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tr-platform-setup-'));
  const clock = createManualClock(new Date('2026-06-01T12:00:00.000Z'));
  const secrets = createSecretBox(randomBytes(32));
  try {
    const { keys } = await ensureLocalPlatformKeys(dir, secrets);
    const first = await startLocal(dir, keys, clock);
    let adminAfterInit: bigint;
    try {
      const { platform, local } = first;
      assert.deepEqual(first.result, {
        funded: ['admin', 'screeningAuthority', 'feeWallet'],
        config: 'initialized',
      });
      assert.deepEqual(await configOnChain(local, platform), {
        admin: keys.admin.address,
        screeningAuthority: keys.screeningAuthority.address,
        platformWallet: keys.feeWallet.address,
        screeningDepositLamports: 2_000_000n,
        bump: platform.configBump,
      });
      const status = await first.platformAdmin.status();
      assert.equal(status.program.upgradeAuthority, keys.admin.address);
      assert.deepEqual(status.problems, []);
      // The admin paid the config's rent and one signature; the others kept their 10 SOL.
      const configRent = await local.chain.getMinimumBalanceForRentExemption(CONFIG_ACCOUNT_SIZE);
      adminAfterInit = await local.chain.getBalance(keys.admin.address);
      assert.equal(adminAfterInit, LOCAL_WALLET_LAMPORTS - configRent - 5000n);
      assert.equal(await local.chain.getBalance(keys.feeWallet.address), LOCAL_WALLET_LAMPORTS);
      assert.equal(await local.chain.getBalance(keys.screeningAuthority.address), LOCAL_WALLET_LAMPORTS);
      assert.deepEqual(
        first.lines.map((line) => [
          line.level,
          line.message.replace(/[1-9A-HJ-NP-Za-km-z]{32,88}/g, '<b58>'),
        ]),
        [
          ['info', 'Funded the admin <b58> with 10 SOL on the embedded chain'],
          ['info', 'Funded the screening authority <b58> with 10 SOL on the embedded chain'],
          ['info', 'Funded the platform fee wallet <b58> with 10 SOL on the embedded chain'],
          [
            'info',
            'Initialised the protocol config <b58> with admin <b58>, screening authority <b58>, platform wallet <b58>, screening deposit 2000000 lamports, in transaction <b58>.',
          ],
        ],
      );
    } finally {
      await first.local.close();
    }

    // A restart: the same keys from the data directory, the config as it was, nothing sent.
    const again = await ensureLocalPlatformKeys(dir, secrets);
    assert.equal(again.created, false);
    const second = await startLocal(dir, again.keys, clock);
    try {
      assert.equal(second.platform.admin.address, keys.admin.address);
      assert.equal(second.platform.feeWallet, keys.feeWallet.address);
      assert.deepEqual(second.result, { funded: [], config: 'left as it is' });
      assert.equal(await second.local.chain.getBalance(keys.admin.address), adminAfterInit);
      assert.equal((await configOnChain(second.local, second.platform)).admin, keys.admin.address);
      assert.deepEqual(
        second.lines.map((line) => [line.level, line.message]),
        [
          [
            'info',
            `The protocol config ${second.platform.configAddress} is in place and matches the platform keys`,
          ],
        ],
      );
    } finally {
      await second.local.close();
    }

    // Other keys on that chain (the key file replaced): the config is left alone, and the log says so.
    const other = generatePlatformKeys();
    const third = await startLocal(dir, other, clock);
    try {
      assert.deepEqual(third.result, {
        funded: ['admin', 'screeningAuthority', 'feeWallet'],
        config: 'left as it is',
      });
      assert.equal((await configOnChain(third.local, third.platform)).admin, keys.admin.address);
      const warning = third.lines.find((line) => line.level === 'warn');
      assert.ok(warning);
      assert.match(
        warning.message,
        new RegExp(
          `^The protocol config on the embedded chain does NOT match the platform keys; it is left as it is\\. The protocol config differs from the service's keys: admin ${keys.admin.address} \\(the service's: ${other.admin.address}\\), screening authority ${keys.screeningAuthority.address} \\(the service's: ${other.screeningAuthority.address}\\), platform wallet ${keys.feeWallet.address} \\(the service's: ${other.feeWallet.address}\\)\\. Only the config's admin ${keys.admin.address} may change it`,
        ),
      );
    } finally {
      await third.local.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
