import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { CONFIG_ACCOUNT_SIZE, decodeRouterConfig } from '../../src/chain/router/accounts.ts';
import { getUpdateConfigInstruction } from '../../src/chain/router/instructions.ts';
import { sendAndConfirm } from '../../src/platform/send.ts';
import { ADMIN_HEADERS, createTestApp, idempotencyKey, type TestApp } from '../helpers/app.ts';

const status = (t: TestApp) =>
  t.app.inject({ method: 'GET', url: '/admin/v1/platform', headers: ADMIN_HEADERS });
const init = (t: TestApp, key = idempotencyKey()) =>
  t.app.inject({
    method: 'POST',
    url: '/admin/v1/platform/init',
    headers: { ...ADMIN_HEADERS, 'idempotency-key': key },
  });

/** The platform's config values as the API shows them. */
function configValues(t: TestApp) {
  return {
    admin: t.platform.admin.address,
    screeningAuthority: t.platform.screeningAuthority.address,
    platformWallet: t.platform.feeWallet,
    screeningDepositLamports: '2000000',
  };
}

const balance = async (t: TestApp, address: Address) => String(await t.chain.chain.getBalance(address));

async function wallets(t: TestApp) {
  return {
    admin: { address: t.platform.admin.address, lamports: await balance(t, t.platform.admin.address) },
    screeningAuthority: {
      address: t.platform.screeningAuthority.address,
      lamports: await balance(t, t.platform.screeningAuthority.address),
    },
    feeWallet: { address: t.platform.feeWallet, lamports: await balance(t, t.platform.feeWallet) },
  };
}

const settings = {
  screeningRequired: false,
  routeGraceSeconds: 3600,
  priorityFeeCapMicroLamportsPerCu: '1000000',
};

/** Changes the config on chain behind the service's back (as another operator could). */
async function updateConfigOnChain(t: TestApp, change: { newAdmin?: Address; screeningAuthority?: Address }) {
  await sendAndConfirm(t.chain.chain, t.platform.admin, [
    getUpdateConfigInstruction({
      admin: t.platform.admin,
      config: t.platform.configAddress,
      newAdmin: change.newAdmin ?? t.platform.admin.address,
      screeningAuthority: change.screeningAuthority ?? t.platform.screeningAuthority.address,
      platformWallet: t.platform.feeWallet,
      screeningDepositLamports: 2_000_000n,
    }),
  ]);
}

async function configOnChain(t: TestApp) {
  const account = await t.chain.chain.getAccount(t.platform.configAddress);
  return account && decodeRouterConfig(account.data);
}

describe('admin API: the platform, set up as local mode does it', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('shows the program, the config matching the keys, the funded wallets and the settings', async () => {
    const response = await status(t);
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), {
      cluster: 'localnet',
      ready: true,
      program: {
        address: 'TRouterProgram11111111111111111111111111111',
        programDataAddress: t.platform.programDataAddress,
        deployed: true,
        upgradeable: true,
        upgradeAuthority: t.platform.admin.address,
        adminIsUpgradeAuthority: true,
      },
      config: {
        address: t.platform.configAddress,
        exists: true,
        matches: true,
        differences: [],
        onChain: configValues(t),
        expected: configValues(t),
      },
      wallets: await wallets(t),
      settings,
      problems: [],
    });
    // 10 SOL each; the admin paid the config's rent and one signature.
    const rent = await t.chain.chain.getMinimumBalanceForRentExemption(CONFIG_ACCOUNT_SIZE);
    assert.equal(response.json().wallets.admin.lamports, String(10_000_000_000n - rent - 5000n));
    assert.equal(response.json().wallets.feeWallet.lamports, '10000000000');

    const openapi = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    assert.ok(!Object.keys(openapi.paths).some((path) => path.startsWith('/admin/v1/platform')));
  });

  test('init on a config that matches does nothing', async () => {
    const before = await balance(t, t.platform.admin.address);
    const response = await init(t);
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.deepEqual(
      { action: body.action, signature: body.signature, message: body.message, ready: body.platform.ready },
      {
        action: 'unchanged',
        signature: null,
        message: `The protocol config ${t.platform.configAddress} already holds the service's keys; nothing to do.`,
        ready: true,
      },
    );
    assert.equal(await balance(t, t.platform.admin.address), before);
  });

  test('a config that differs from the keys is updated by init; one whose admin is another key is not', async () => {
    const other = await generateKeyPairSigner();
    await updateConfigOnChain(t, { screeningAuthority: other.address });
    const differs = (await status(t)).json();
    assert.equal(differs.ready, false);
    assert.deepEqual(differs.config.differences, ['screeningAuthority']);
    assert.deepEqual(differs.problems, [
      {
        code: 'config_differs',
        message: `The protocol config differs from the service's keys: screening authority ${other.address} (the service's: ${t.platform.screeningAuthority.address}). Run \`npm run admin -- platform init\` to update it.`,
      },
    ]);

    const updated = (await init(t)).json();
    assert.equal(updated.action, 'updated');
    assert.match(updated.signature, /^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    assert.equal(
      updated.message,
      `Updated the protocol config ${t.platform.configAddress} (screeningAuthority) to admin ${t.platform.admin.address}, screening authority ${t.platform.screeningAuthority.address}, platform wallet ${t.platform.feeWallet}, screening deposit 2000000 lamports, in transaction ${updated.signature}.`,
    );
    assert.equal(updated.platform.ready, true);
    assert.equal((await configOnChain(t))?.screeningAuthority, t.platform.screeningAuthority.address);

    // The admin hands the config over: the service can no longer change it.
    await updateConfigOnChain(t, { newAdmin: other.address });
    const foreign = (await status(t)).json();
    assert.deepEqual(
      foreign.problems.map((problem: { code: string }) => problem.code),
      ['config_admin_differs'],
    );
    assert.match(
      foreign.problems[0].message,
      new RegExp(`Only the config's admin ${other.address} may change it`),
    );
    const refused = await init(t);
    assert.equal(refused.statusCode, 200);
    assert.equal(refused.json().action, 'refused');
    assert.equal(refused.json().message, foreign.problems[0].message);
    assert.equal((await configOnChain(t))?.admin, other.address);
  });

  test('a fee wallet short of a payout’s network fee and a token account’s rent is reported with what it breaks; routes do not need it', async () => {
    const unfunded = async () =>
      ((await status(t)).json().problems as { code: string }[]).filter(
        (problem) => problem.code === 'wallet_unfunded',
      );
    const lamports = BigInt(await t.chain.chain.getBalance(t.platform.feeWallet));
    // 2,039,280 lamports of a token account's rent that a payout of wrapped SOL borrows, and
    // 5,000 of its network fee.
    const needed = 2_044_280n;
    try {
      await t.chain.cheats.setAccount(t.platform.feeWallet, { lamports: needed - 1n });
      assert.deepEqual(await unfunded(), [
        {
          code: 'wallet_unfunded',
          role: 'feeWallet',
          message: `The platform fee wallet ${t.platform.feeWallet} holds 2044279 lamports, less than 2044280 lamports: it pays each reward payout's network fee (5000 lamports) and lends a payout of wrapped SOL up to a token account's rent (2039280 lamports, back in the same transaction), so reward claims fail (their amounts stay claimable) until it holds that; routes do not depend on it: fund it.`,
        },
      ]);
      await t.chain.cheats.setAccount(t.platform.feeWallet, { lamports: needed });
      assert.deepEqual(await unfunded(), []);
    } finally {
      await t.chain.cheats.setAccount(t.platform.feeWallet, { lamports });
    }
  });
});

describe('admin API: a platform whose config is not initialised', () => {
  test('where the admin is the upgrade authority: status says what is missing, init creates the config once', async () => {
    const t = await createTestApp({ platform: { initialised: false } });
    try {
      const before = (await status(t)).json();
      assert.deepEqual(
        { ready: before.ready, config: before.config, problems: before.problems },
        {
          ready: false,
          config: {
            address: t.platform.configAddress,
            exists: false,
            matches: false,
            differences: ['admin', 'screeningAuthority', 'platformWallet', 'screeningDepositLamports'],
            onChain: null,
            expected: configValues(t),
          },
          problems: [
            {
              code: 'config_missing',
              message: `The protocol config ${t.platform.configAddress} does not exist, so no route can be created (InvalidConfig): run \`npm run admin -- platform init\`.`,
            },
          ],
        },
      );
      assert.equal(before.program.adminIsUpgradeAuthority, true);

      const key = idempotencyKey();
      const first = await init(t, key);
      assert.equal(first.statusCode, 200);
      const body = first.json();
      assert.equal(body.action, 'initialized');
      assert.equal(
        body.message,
        `Initialised the protocol config ${t.platform.configAddress} with admin ${t.platform.admin.address}, screening authority ${t.platform.screeningAuthority.address}, platform wallet ${t.platform.feeWallet}, screening deposit 2000000 lamports, in transaction ${body.signature}.`,
      );
      assert.deepEqual(body.platform.problems, []);
      assert.deepEqual(await configOnChain(t), {
        admin: t.platform.admin.address,
        screeningAuthority: t.platform.screeningAuthority.address,
        platformWallet: t.platform.feeWallet,
        screeningDepositLamports: 2_000_000n,
        bump: t.platform.configBump,
      });
      const [status1] = await t.chain.chain.getSignatureStatuses([body.signature]);
      assert.equal(status1?.err, null);

      // The same request again is replayed; nothing more is sent.
      const spent = await balance(t, t.platform.admin.address);
      const replay = await init(t, key);
      assert.equal(replay.headers['idempotent-replayed'], 'true');
      assert.equal(replay.body, first.body);
      assert.equal((await init(t)).json().action, 'unchanged');
      assert.equal(await balance(t, t.platform.admin.address), spent);
    } finally {
      await t.close();
    }
  });

  test('where the admin is not the upgrade authority: status says so, init refuses and creates nothing', async () => {
    const authority = (await generateKeyPairSigner()).address;
    const t = await createTestApp({ platform: { initialised: false, upgradeAuthority: authority } });
    try {
      const response = (await status(t)).json();
      assert.equal(response.ready, false);
      assert.deepEqual(response.program, {
        address: t.platform.programAddress,
        programDataAddress: t.platform.programDataAddress,
        deployed: true,
        upgradeable: true,
        upgradeAuthority: authority,
        adminIsUpgradeAuthority: false,
      });
      const notAuthority = `The admin ${t.platform.admin.address} is not the router program's upgrade authority (${authority}), and only the upgrade authority may initialise the config: set PLATFORM_ADMIN_KEYPAIR to the upgrade authority's key, or make ${t.platform.admin.address} the upgrade authority (\`solana program set-upgrade-authority\`), then run \`npm run admin -- platform init\`.`;
      assert.deepEqual(response.problems, [
        {
          code: 'config_missing',
          message: `The protocol config ${t.platform.configAddress} does not exist, so no route can be created (InvalidConfig): run \`npm run admin -- platform init\`.`,
        },
        { code: 'admin_not_upgrade_authority', message: notAuthority },
      ]);

      const refused = await init(t);
      assert.equal(refused.statusCode, 200);
      assert.deepEqual(
        {
          action: refused.json().action,
          signature: refused.json().signature,
          message: refused.json().message,
        },
        { action: 'refused', signature: null, message: notAuthority },
      );
      assert.equal(await configOnChain(t), null);
    } finally {
      await t.close();
    }
  });

  test('an immutable program and an unfunded admin are each named', async () => {
    const t = await createTestApp({ platform: { initialised: false, upgradeAuthority: null } });
    try {
      await t.chain.cheats.setAccount(t.platform.admin.address, { lamports: 1_000_000n });
      const problems = (await status(t)).json().problems as {
        code: string;
        role?: string;
        message: string;
      }[];
      assert.deepEqual(
        problems.map((problem) => [problem.code, problem.role]),
        [
          ['config_missing', undefined],
          ['program_not_upgradeable', undefined],
          ['wallet_unfunded', 'admin'],
        ],
      );
      assert.equal(
        problems[2]!.message,
        `The admin ${t.platform.admin.address} holds 1000000 lamports; initialising the config needs at least 1731080 lamports (the config's rent and the fee): fund it.`,
      );
      const refused = (await init(t)).json();
      assert.equal(refused.action, 'refused');
      assert.equal(refused.message, `${problems[1]!.message} ${problems[2]!.message}`);
    } finally {
      await t.close();
    }
  });
});
