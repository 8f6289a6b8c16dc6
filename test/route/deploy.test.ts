import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { type Bundle, broadcastBundle } from '../helpers/wallet.ts';

const UNLIMITED = { rateLimitMultiplier: 1000 };
const SOURCE_LAMPORTS = 50_000_000_000n;
const SOURCE_TOKENS = 1_000_000_000n;

interface Route {
  source: KeyPairSigner;
  recipient: Address;
  mint: Address;
  transfer: { id: number; status: string };
  estimate: {
    sol: { requiredSolUpFrontLamports: number; refundableLamports: number };
    tokens: { netDeliveredRaw: string };
  };
}

describe('deploying a route: prepare, broadcast, confirm-broadcast', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  const lamports = async (address: Address) => BigInt(await t.chain.chain.getBalance(address));
  const tokens = async (owner: Address, mint: Address) => {
    const [account] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    return (await t.chain.chain.getTokenAccount(account))?.amount ?? 0n;
  };

  /** A funded source wallet, a fresh recipient, an estimate and a created transfer. */
  async function quote(options: { hops: number; native?: boolean; amountRaw?: string }): Promise<Route> {
    const source = await generateKeyPairSigner();
    const recipient = (await generateKeyPairSigner()).address;
    await t.chain.cheats.airdrop(source.address, SOURCE_LAMPORTS);
    const mint = options.native ? (SOL_MINT as Address) : usdc;
    if (!options.native)
      await t.chain.cheats.setTokenAccount(source.address, usdc, { amount: SOURCE_TOKENS });
    const amountRaw = options.amountRaw ?? (options.native ? '2000000000' : '250000000');
    const terms = {
      tokenMint: mint,
      amountRaw,
      hops: options.hops,
      tokenPriceUsd: options.native ? undefined : 1,
    };
    const estimate = (await caller.post('/api/v1/transfers/estimate', terms)).json();
    const created = await caller.post('/api/v1/transfers', {
      ...terms,
      amountTokens: options.native ? '2' : '250',
      sourceOwner: source.address,
      recipientWallet: recipient,
    });
    assert.equal(created.statusCode, 200, created.body);
    return { source, recipient, mint, transfer: created.json(), estimate };
  }

  const prepare = async (id: number) => {
    const response = await caller.post(`/api/v1/transfers/${id}/prepare`);
    assert.equal(response.statusCode, 200, response.body);
    return response.json() as { transfer: { status: string; phase: string }; preparedTxs: Bundle };
  };
  const confirm = (id: number, body: object) =>
    caller.post(`/api/v1/transfers/${id}/confirm-broadcast`, body);

  /** Prepares, broadcasts every group and makes both confirm calls, as an integrator does. */
  async function deploy(route: Route) {
    const { preparedTxs } = await prepare(route.transfer.id);
    const funding = await broadcastBundle(t.chain.chain, route.source, preparedTxs, {
      through: 'keeperFunding',
    });
    const intermediate = await confirm(route.transfer.id, {
      keeperFundingSignature: funding.keeperFundingSignature,
      routeInitSignatures: [],
    });
    assert.equal(intermediate.statusCode, 200, intermediate.body);
    assert.equal(intermediate.json().transfer.status, 'awaiting_signature');
    assert.equal(intermediate.json().transfer.phase, 'funding');
    const rest = await broadcastBundle(t.chain.chain, route.source, {
      ...preparedTxs,
      keeperFundingTx: null,
    });
    const final = await confirm(route.transfer.id, {
      ...rest,
      keeperFundingSignature: funding.keeperFundingSignature,
    });
    assert.equal(final.statusCode, 200, final.body);
    return { preparedTxs, final: final.json().transfer };
  }

  for (const [hops, native] of [
    [3, false],
    [10, false],
    [3, true],
    [10, true],
  ] as const) {
    test(`${native ? 'native SOL' : 'SPL token'}, ${hops} hops: from quote to processing, the source paying exactly the estimate`, async () => {
      const route = await quote({ hops, native });
      // The estimate counts the platform fee account for the mint in full; only the first route of
      // a mint has the bundle create it.
      const [feeAccount] = await findAssociatedTokenPda({
        owner: t.platform.configAddress,
        mint: route.mint,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      });
      const tokenRent = BigInt(await t.chain.chain.getMinimumBalanceForRentExemption(165));
      const feeAccountExisted = (await t.chain.chain.getAccount(feeAccount)) !== null;
      const lamportsBefore = await lamports(route.source.address);
      const tokensBefore = await tokens(route.source.address, route.mint);
      const { preparedTxs, final } = await deploy(route);

      assert.equal(preparedTxs.resume.nothingToDo, false);
      assert.equal(preparedTxs.resume.totalHops, hops);
      assert.equal(final.status, 'processing');
      assert.equal(final.phase, 'executing');
      assert.ok(final.depositReceivedAt);
      assert.equal(final.signatures.routeInit.length, preparedTxs.routeInitTxs.length);
      assert.equal(final.signatures.sessionInit.length, preparedTxs.sessionInitTxs.length);

      const amount = native ? 2_000_000_000n : 250_000_000n;
      const spent = lamportsBefore - (await lamports(route.source.address));
      const required =
        BigInt(route.estimate.sol.requiredSolUpFrontLamports) - (feeAccountExisted ? tokenRent : 0n);
      if (native) {
        // The wrapped-SOL account the bundle opened was closed again within the deployment.
        assert.equal(spent, required + amount);
        assert.equal(
          await tokens(route.source.address, route.mint),
          0n,
          'no wrapped SOL left with the source',
        );
      } else {
        assert.equal(spent, required);
        assert.equal(tokensBefore - (await tokens(route.source.address, route.mint)), amount);
      }

      const events = await t.database.db.query<{ type: string }>(
        'SELECT type FROM events WHERE transfer_id = $1 ORDER BY sequence',
        [route.transfer.id],
      );
      assert.deepEqual(
        events.rows.map((row) => row.type),
        [
          'transfer.quote_created',
          'transfer.phase_changed',
          'transfer.deposit_confirmed',
          'transfer.processing',
          'transfer.phase_changed',
        ],
      );
      const again = await prepare(route.transfer.id);
      assert.equal(again.preparedTxs.resume.nothingToDo, true);
    });
  }

  test('native SOL: a source holding the estimate’s up-front figure and the amount deploys and is left with nothing; a lamport less is MH_016', async () => {
    const tokenRent = BigInt(await t.chain.chain.getMinimumBalanceForRentExemption(165));
    for (const short of [1n, 0n]) {
      const source = await generateKeyPairSigner();
      const recipient = (await generateKeyPairSigner()).address;
      const terms = { tokenMint: SOL_MINT as Address, amountRaw: '2000000000', hops: 3 };
      const estimate = (await caller.post('/api/v1/transfers/estimate', terms)).json();
      // The estimate counts the platform's fee account for the mint in full; after the first native
      // route it exists. It counts no wrapped-SOL account: the bundle opens and closes one within
      // the route's creation.
      const [feeAccount] = await findAssociatedTokenPda({
        owner: t.platform.configAddress,
        mint: SOL_MINT as Address,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      });
      const feeAccountExists = (await t.chain.chain.getAccount(feeAccount)) !== null;
      const needed =
        BigInt(estimate.sol.requiredSolUpFrontLamports) +
        2_000_000_000n -
        (feeAccountExists ? tokenRent : 0n);
      await t.chain.cheats.airdrop(source.address, needed - short);
      const created = await caller.post('/api/v1/transfers', {
        ...terms,
        amountTokens: '2',
        sourceOwner: source.address,
        recipientWallet: recipient,
      });
      assert.equal(created.statusCode, 200, created.body);
      const route: Route = { source, recipient, mint: terms.tokenMint, transfer: created.json(), estimate };
      if (short > 0n) {
        const refused = await caller.post(`/api/v1/transfers/${route.transfer.id}/prepare`);
        assert.equal(refused.statusCode, 400, refused.body);
        assert.equal(refused.json().error.code, 'MH_016');
        assert.match(refused.json().error.message, /add at least 1 lamports/);
        continue;
      }
      const { final } = await deploy(route);
      assert.equal(final.status, 'processing');
      assert.equal(await lamports(source.address), 0n, 'every lamport the estimate counted was needed');
    }
  });

  test('an interrupted broadcast resumes through prepare: fresh blockhash, groups on chain dropped, nothing to do at the end', async () => {
    for (const through of ['keeperFunding', 'routeInit', 'orchestratorInit'] as const) {
      const route = await quote({ hops: 10 });
      const first = await prepare(route.transfer.id);
      const sent = await broadcastBundle(t.chain.chain, route.source, first.preparedTxs, { through });
      t.clock.advance(2_000);
      const resumed = (await prepare(route.transfer.id)).preparedTxs;
      assert.notEqual(resumed.recentBlockhash, first.preparedTxs.recentBlockhash, through);
      assert.equal(resumed.keeperFundingTx, null, through);
      assert.equal(resumed.resume.keeperAlreadyFunded, true);
      const routeSent = through !== 'keeperFunding';
      assert.deepEqual(resumed.routeInitTxs.length, routeSent ? 0 : first.preparedTxs.routeInitTxs.length);
      assert.equal(resumed.resume.routeAlreadyDeployed, routeSent);
      assert.equal(resumed.resume.existingHopCount, routeSent ? 10 : 0);
      assert.equal(resumed.orchestratorInitTx === null, through === 'orchestratorInit', through);
      assert.equal(resumed.resume.orchestratorAlreadyInitialized, through === 'orchestratorInit');
      assert.equal(resumed.sessionInitTxs.length, 1);
      assert.deepEqual(resumed.resume.completedStepIndices, []);

      const rest = await broadcastBundle(t.chain.chain, route.source, resumed);
      const final = await confirm(route.transfer.id, {
        keeperFundingSignature: sent.keeperFundingSignature,
        routeInitSignatures: [...sent.routeInitSignatures, ...rest.routeInitSignatures],
        orchestratorInitSignature: sent.orchestratorInitSignature ?? rest.orchestratorInitSignature,
        sessionInitSignatures: rest.sessionInitSignatures,
      });
      assert.equal(final.json().transfer.status, 'processing', `${through}: ${final.body}`);
      const done = (await prepare(route.transfer.id)).preparedTxs;
      assert.equal(done.resume.nothingToDo, true);
      assert.deepEqual(done.resume.completedStepIndices, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    }
  });

  test('a route whose creation landed but not its other hops resumes with the hops registered on chain', async () => {
    const route = await quote({ hops: 10 });
    const { preparedTxs } = await prepare(route.transfer.id);
    assert.equal(preparedTxs.routeInitTxs.length, 2, 'CreateRoute with five hops, then AddHops');
    const sent = await broadcastBundle(
      t.chain.chain,
      route.source,
      { ...preparedTxs, routeInitTxs: preparedTxs.routeInitTxs.slice(0, 1) },
      { through: 'routeInit' },
    );
    const partial = await confirm(route.transfer.id, sent);
    assert.equal(partial.statusCode, 200, partial.body);
    assert.equal(
      partial.json().transfer.status,
      'awaiting_signature',
      'unchanged until everything is on chain',
    );
    assert.equal(partial.json().transfer.phase, 'deploying');
    const resumed = (await prepare(route.transfer.id)).preparedTxs;
    assert.equal(resumed.routeInitTxs.length, 1);
    assert.equal(resumed.resume.existingHopCount, 6, 'the route with its first five intermediate accounts');
    assert.equal(resumed.resume.routeAlreadyDeployed, false);
    const rest = await broadcastBundle(t.chain.chain, route.source, resumed);
    const final = await confirm(route.transfer.id, {
      ...rest,
      keeperFundingSignature: sent.keeperFundingSignature,
      routeInitSignatures: [...sent.routeInitSignatures, ...rest.routeInitSignatures],
    });
    assert.equal(final.json().transfer.status, 'processing', final.body);
    assert.equal(final.json().transfer.signatures.routeInit.length, 2);
  });

  test('confirm-broadcast refuses what it cannot verify, and changes nothing then', async () => {
    const route = await quote({ hops: 3 });
    const early = await confirm(route.transfer.id, { routeInitSignatures: [] });
    assert.equal(early.statusCode, 409);
    assert.equal(early.json().error.code, 'MH_035', 'nothing prepared yet');

    const { preparedTxs } = await prepare(route.transfer.id);
    const other = await quote({ hops: 3 });
    const otherBundle = (await prepare(other.transfer.id)).preparedTxs;
    const otherSent = await broadcastBundle(t.chain.chain, other.source, otherBundle);
    const airdrop = await t.chain.cheats.airdrop(route.source.address, 1_000_000n);
    const neverSent = (
      await broadcastBundle({ sendTransaction: async () => '' as never }, route.source, preparedTxs, {
        through: 'keeperFunding',
      })
    ).keeperFundingSignature!;

    const refused = async (body: object, status: number, code: string, param: string) => {
      const response = await confirm(route.transfer.id, body);
      assert.equal(response.statusCode, status, response.body);
      assert.deepEqual([response.json().error.code, response.json().error.param], [code, param]);
    };
    await refused(
      { keeperFundingSignature: neverSent, routeInitSignatures: [] },
      404,
      'MH_036',
      'keeperFundingSignature',
    );
    await refused(
      { keeperFundingSignature: otherSent.keeperFundingSignature, routeInitSignatures: [] },
      422,
      'MH_038',
      'keeperFundingSignature',
    );
    await refused(
      { keeperFundingSignature: airdrop, routeInitSignatures: [] },
      422,
      'MH_038',
      'keeperFundingSignature',
    );

    const funding = await broadcastBundle(t.chain.chain, route.source, preparedTxs, {
      through: 'keeperFunding',
    });
    // The session transaction sent before its route exists lands, and fails.
    const failed = await broadcastBundle(
      t.chain.chain,
      route.source,
      { ...preparedTxs, keeperFundingTx: null, routeInitTxs: [], orchestratorInitTx: null },
      { skipPreflight: true },
    );
    await refused(
      { routeInitSignatures: otherSent.routeInitSignatures },
      400,
      'MH_039',
      'keeperFundingSignature',
    );
    const withFunding = { keeperFundingSignature: funding.keeperFundingSignature };
    await refused(
      { ...withFunding, routeInitSignatures: [], sessionInitSignatures: failed.sessionInitSignatures },
      422,
      'MH_037',
      'sessionInitSignatures[0]',
    );
    await refused(
      { ...withFunding, routeInitSignatures: [airdrop] },
      422,
      'MH_038',
      'routeInitSignatures[0]',
    );
    await refused(
      { ...withFunding, routeInitSignatures: otherSent.routeInitSignatures },
      422,
      'MH_038',
      'routeInitSignatures[0]',
    );
    await refused(
      { ...withFunding, routeInitSignatures: ['not-a-signature'] },
      400,
      'MH_016',
      'routeInitSignatures.0',
    );
    const unchanged = (await caller.get(`/api/v1/transfers/${route.transfer.id}`)).json();
    assert.equal(unchanged.status, 'awaiting_signature');
    assert.equal(unchanged.phase, 'quoted', 'no refused call recorded anything');

    // The real thing (the failed session transaction is rebuilt by a new prepare), then the same
    // report again: answered with the transfer, no second takeover.
    t.clock.advance(2_000);
    const rebuilt = (await prepare(route.transfer.id)).preparedTxs;
    assert.equal(rebuilt.keeperFundingTx, null);
    const rest = await broadcastBundle(t.chain.chain, route.source, rebuilt);
    const body = { ...rest, ...withFunding };
    const taken = await confirm(route.transfer.id, body);
    assert.equal(taken.json().transfer?.status, 'processing', taken.body);
    const replayed = await confirm(route.transfer.id, body);
    assert.equal(replayed.statusCode, 200);
    assert.equal(replayed.json().transfer.status, 'processing');
    const takeovers = await t.database.db.query(
      `SELECT count(*)::int AS n FROM events WHERE transfer_id = $1 AND type = 'transfer.processing'`,
      [route.transfer.id],
    );
    assert.deepEqual(takeovers.rows, [{ n: 1 }]);
  });

  test('an expired quote is MH_034 for prepare and confirm-broadcast', async () => {
    const route = await quote({ hops: 3 });
    const { preparedTxs } = await prepare(route.transfer.id);
    const sent = await broadcastBundle(t.chain.chain, route.source, preparedTxs, {
      through: 'keeperFunding',
    });
    t.clock.advance(16 * 60_000);
    const late = await caller.post(`/api/v1/transfers/${route.transfer.id}/prepare`);
    assert.equal(late.statusCode, 410);
    assert.equal(late.json().error.code, 'MH_034');
    const lateConfirm = await confirm(route.transfer.id, { ...sent });
    assert.equal(lateConfirm.statusCode, 410, lateConfirm.body);
    assert.equal(lateConfirm.json().error.code, 'MH_034');
  });

  test('a source that cannot pay gets MH_016 naming what is short, before any bundle', async () => {
    const poor = await quote({ hops: 3 });
    await t.chain.cheats.setTokenAccount(poor.source.address, usdc, { amount: 1n });
    const tokensShort = await caller.post(`/api/v1/transfers/${poor.transfer.id}/prepare`);
    assert.equal(tokensShort.statusCode, 400);
    assert.equal(tokensShort.json().error.code, 'MH_016');
    assert.equal(tokensShort.json().error.param, 'sourceOwner');
    assert.match(tokensShort.json().error.message, /holds 1 base units .* needs 250000000/);

    const broke = await quote({ hops: 3 });
    const wallet = await generateKeyPairSigner();
    await t.chain.cheats.airdrop(wallet.address, 1_000_000n);
    const created = await caller.post('/api/v1/transfers', {
      tokenMint: usdc,
      amountRaw: '250000000',
      amountTokens: '250',
      hops: 3,
      tokenPriceUsd: 1,
      sourceOwner: wallet.address,
      recipientWallet: broke.recipient,
    });
    const lamportsShort = await caller.post(`/api/v1/transfers/${created.json().id}/prepare`);
    assert.equal(lamportsShort.json().error.code, 'MH_016');
    assert.match(lamportsShort.json().error.message, /holds 0\.001 SOL but deploying this route needs/);
    const transfer = (await caller.get(`/api/v1/transfers/${created.json().id}`)).json();
    assert.equal(transfer.status, 'quote', 'no bundle handed out');
  });
});
