// The rewards wallet and the rewards read endpoints: shapes, validation, settings, modes apart.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateKeyPairSigner } from '@solana/kit';
import { ADMIN_HEADERS, type Caller, callerFor, createTestApp, type TestApp } from '../helpers/app.ts';
import { UNLIMITED } from './helpers.ts';

const EMPTY = {
  rewardsWallet: null,
  minimumClaimLamports: 1_000_000,
  lamports: { accrued: 0, claimed: 0, claimable: 0 },
  tokens: [],
  isTestMode: true,
};

describe('rewards: wallet and reads', () => {
  let t: TestApp;
  let caller: Caller;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
  });
  after(() => t.close());

  test('an integration that earned nothing has empty rewards, no wallet and no claims', async () => {
    const read = await caller.get('/api/v1/rewards');
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json(), EMPTY);
    const claims = await caller.get('/api/v1/rewards/claims');
    assert.deepEqual(claims.json(), { items: [], pagination: { total: 0, limit: 50, offset: 0 } });
  });

  test('the wallet is set per mode and shown by both endpoints; a replay answers the same', async () => {
    const live = callerFor(t.app, caller.integrationId, await t.createKey(caller.integrationId, 'live'));
    const wallet = (await generateKeyPairSigner()).address;
    const headers = { 'idempotency-key': 'set-wallet-0001' };
    const set = await caller.post('/api/v1/rewards/wallet', { wallet }, headers);
    assert.equal(set.statusCode, 200, set.body);
    assert.deepEqual(set.json(), { ...EMPTY, rewardsWallet: wallet });
    assert.deepEqual((await caller.get('/api/v1/rewards')).json(), { ...EMPTY, rewardsWallet: wallet });
    const replay = await caller.post('/api/v1/rewards/wallet', { wallet }, headers);
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, set.body);
    assert.deepEqual((await live.get('/api/v1/rewards')).json(), { ...EMPTY, isTestMode: false });

    const other = (await generateKeyPairSigner()).address;
    const changed = await caller.post('/api/v1/rewards/wallet', { wallet: other });
    assert.equal(changed.json().rewardsWallet, other);
  });

  test('an invalid wallet is MH_011, a missing one MH_016; nothing changes', async () => {
    const fresh = await t.newCaller('test', UNLIMITED);
    for (const [wallet, code] of [
      ['not-a-wallet', 'MH_011'],
      ['1111111111111111111111111111111', 'MH_011'], // 31 bytes
      ['0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl', 'MH_011'],
      [t.platform.feeWallet, 'MH_011'],
      [t.platform.configAddress, 'MH_011'],
      [42, 'MH_016'],
      [undefined, 'MH_016'],
    ] as const) {
      const response = await fresh.post('/api/v1/rewards/wallet', wallet === undefined ? {} : { wallet });
      assert.equal(response.statusCode, 400, String(wallet));
      assert.equal(response.json().error.code, code, `${wallet}: ${response.body}`);
      assert.equal(response.json().error.param, 'wallet');
    }
    assert.deepEqual((await fresh.get('/api/v1/rewards')).json(), EMPTY);
  });

  test('an integration’s minimumClaimLamports setting overrides the deployment’s; below a wallet’s rent it is refused', async () => {
    const custom = await t.newCaller('test', { ...UNLIMITED, minimumClaimLamports: 5_000_000 });
    assert.equal((await custom.get('/api/v1/rewards')).json().minimumClaimLamports, 5_000_000);
    const refused = await t.app.inject({
      method: 'PATCH',
      url: `/admin/v1/integrations/${custom.integrationId}`,
      headers: ADMIN_HEADERS,
      payload: { settings: { minimumClaimLamports: 890_879 } },
    });
    assert.equal(refused.statusCode, 400, refused.body);
    const cleared = await t.app.inject({
      method: 'PATCH',
      url: `/admin/v1/integrations/${custom.integrationId}`,
      headers: ADMIN_HEADERS,
      payload: { settings: { minimumClaimLamports: null } },
    });
    assert.equal(cleared.statusCode, 200, cleared.body);
    assert.equal(cleared.json().settings.minimumClaimLamports, undefined);
  });

  test('a deployment’s REWARDS_MIN_CLAIM_LAMPORTS is every other integration’s minimum', async () => {
    const other = await createTestApp({ peer: t, config: { rewardsMinClaimLamports: 2_500_000n } });
    try {
      const key = await other.createKey(caller.integrationId);
      const read = await callerFor(other.app, caller.integrationId, key).get('/api/v1/rewards');
      assert.equal(read.json().minimumClaimLamports, 2_500_000);
    } finally {
      await other.close();
    }
  });
});
