// The platform's own earnings: what the protocol config holds beyond what integrators are owed,
// withdrawn by an operator through the admin API (and its CLI) to a wallet, checked on chain to
// the lamport and the base unit; never what integrators are owed, nor their shares of routes
// still under way.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type Signature } from '@solana/kit';
import {
  ADMIN_HEADERS,
  ADMIN_TOKEN,
  type Caller,
  createTestApp,
  idempotencyKey,
  SOL_MINT,
  type TestApp,
} from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { runAdminCli } from '../helpers/process.ts';
import { deployRoute, quoteRoute, tokenBalance } from '../helpers/route.ts';
import { settleRoute, sharesOf } from '../rewards/helpers.ts';

/** 1,000,000 lamports per hop: 3,000,000 per 3-hop route, 900,000 of it the integrator's. */
const EARNING = { rateLimitMultiplier: 1000, fees: { flatFeeLamportsPerHop: '1000000' } };
const TOKEN_ACCOUNT_RENT = 2_039_280n;
const CONFIG_RENT = 1_726_080n;
const NETWORK_FEE = 5_000n;

describe("withdrawing the platform's earnings", () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let config: Address;
  before(async () => {
    t = await createTestApp();
    usdc = await createMint(t.chain, { decimals: 6 });
    caller = await t.newCaller('test', EARNING);
    config = t.platform.configAddress;
  });
  after(() => t.close());

  const lamports = async (address: Address) => BigInt(await t.chain.chain.getBalance(address));
  /** What the platform's earnings hold: the config's lamports above its rent, and its token account of `mint`. */
  const earned = async (mint: Address) => ({
    lamports: (await lamports(config)) - CONFIG_RENT,
    tokens: await tokenBalance(t, config, mint),
  });
  const withdraw = (body: object, key = idempotencyKey()) =>
    t.app.inject({
      method: 'POST',
      url: '/admin/v1/platform/withdraw',
      headers: { ...ADMIN_HEADERS, 'idempotency-key': key },
      payload: body,
    });
  const newWallet = async () => (await generateKeyPairSigner()).address;
  const owedLamports = async () =>
    BigInt((await caller.get('/api/v1/rewards')).json().lamports.claimable as number);

  test('takes lamports and a mint’s tokens beyond what integrators are owed, exactly; more is refused and nothing moves', async () => {
    const shares = sharesOf([await settleRoute(t, caller, usdc), await settleRoute(t, caller, usdc)]);
    const owed = { lamports: await owedLamports(), tokens: shares.byMint.get(usdc)! };
    assert.equal(owed.lamports, 1_800_000n);
    const held = await earned(usdc);
    // The config holds both shares of both fees: 6,000,000 lamports of flat fees, and the percentage fees.
    assert.equal(held.lamports, 6_000_000n);
    const free = { lamports: held.lamports - owed.lamports, tokens: held.tokens - owed.tokens };
    const destination = await newWallet();
    const feeWalletBefore = await lamports(t.platform.feeWallet);

    const tooMuch = await withdraw({ destination, lamports: String(free.lamports + 1n) });
    assert.equal(tooMuch.statusCode, 400);
    assert.deepEqual(tooMuch.json().error, {
      code: 'MH_016',
      message: `Withdrawing ${free.lamports + 1n} lamports would take what integrators are owed: the protocol config ${config} holds, above its rent-exempt minimum, 6000000, 1800000 of them integrators' (claimable, in pending claims, or their shares of routes still under way); at most 4200000 can be withdrawn.`,
      param: 'lamports',
      requestId: tooMuch.json().error.requestId,
    });
    const tooManyTokens = await withdraw({
      destination,
      lamports: '1',
      mint: usdc,
      amountRaw: String(free.tokens + 1n),
    });
    assert.equal(tooManyTokens.statusCode, 400);
    assert.deepEqual(tooManyTokens.json().error, {
      code: 'MH_016',
      message: `Withdrawing ${free.tokens + 1n} raw units of ${usdc} would take what integrators are owed: the config's token account of that mint holds ${held.tokens}, ${owed.tokens} of them integrators' (claimable, in pending claims, or their shares of routes still under way); at most ${free.tokens} can be withdrawn.`,
      param: 'amountRaw',
      requestId: tooManyTokens.json().error.requestId,
    });
    assert.deepEqual(await earned(usdc), held, 'nothing moved');
    assert.equal(await lamports(destination), 0n);

    const key = idempotencyKey();
    const response = await withdraw(
      { destination, lamports: String(free.lamports), mint: usdc, amountRaw: String(free.tokens) },
      key,
    );
    assert.equal(response.statusCode, 200, response.body);
    const { signature } = response.json();
    assert.deepEqual(response.json(), {
      signature,
      destination,
      lamports: String(free.lamports),
      tokens: { mint: usdc, amountRaw: String(free.tokens) },
      message: `Withdrew ${free.lamports} lamports and ${free.tokens} raw units of ${usdc} of the platform's earnings to ${destination}, in transaction ${signature}.`,
    });
    assert.equal((await t.chain.chain.getTransaction(signature as Signature))?.fee, NETWORK_FEE);
    assert.equal(await lamports(destination), free.lamports);
    assert.equal(await tokenBalance(t, destination, usdc), free.tokens);
    assert.deepEqual(await earned(usdc), owed, 'exactly what integrators are owed is left');
    // The fee wallet signed and paid the network fee and the destination's new token account.
    assert.equal(feeWalletBefore - (await lamports(t.platform.feeWallet)), NETWORK_FEE + TOKEN_ACCOUNT_RENT);

    // The same request again is replayed; nothing more is withdrawn.
    const replay = await withdraw(
      { destination, lamports: String(free.lamports), mint: usdc, amountRaw: String(free.tokens) },
      key,
    );
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal(replay.body, response.body);
    assert.deepEqual(await earned(usdc), owed);
    const coverage = (
      await t.app.inject({ method: 'GET', url: '/admin/v1/rewards/coverage', headers: ADMIN_HEADERS })
    ).json();
    assert.equal(coverage.covered, true);
    assert.deepEqual(
      coverage.assets.map((line: { held: string; shortfall: string }) => [line.held, line.shortfall]),
      [
        [String(owed.lamports), '0'],
        [String(owed.tokens), '0'],
      ],
    );

    // The integrator's claim still pays everything it is owed, out of what was left.
    const wallet = await newWallet();
    await t.chain.cheats.setTokenAccount(wallet, usdc, { amount: 0n });
    assert.equal((await caller.post('/api/v1/rewards/wallet', { wallet })).statusCode, 200);
    const claim = (await caller.post('/api/v1/rewards/claim', {})).json().claim;
    assert.equal(claim.status, 'confirmed', JSON.stringify(claim));
    assert.equal(await lamports(wallet), owed.lamports);
    assert.equal(await tokenBalance(t, wallet, usdc), owed.tokens);
    assert.deepEqual(await earned(usdc), { lamports: 0n, tokens: 0n });
  });

  test('the native mint’s tokens arrive as SOL; the fee wallet pays only the network fee', async () => {
    const shares = sharesOf([await settleRoute(t, caller, SOL_MINT as Address)]);
    const owedRaw = shares.byMint.get(SOL_MINT as Address)!;
    const held = await earned(SOL_MINT as Address);
    const free = held.tokens - owedRaw;
    assert.ok(free > 0n);
    // A destination that exists already: it may receive fewer lamports than a wallet's rent.
    const destination = await newWallet();
    await t.chain.cheats.airdrop(destination, 1_000_000_000n);
    const feeWalletBefore = await lamports(t.platform.feeWallet);

    const response = await withdraw({ destination, mint: SOL_MINT, amountRaw: String(free) });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json().tokens, { mint: SOL_MINT, amountRaw: String(free) });
    assert.equal(response.json().lamports, '0');
    assert.equal(await lamports(destination), 1_000_000_000n + free);
    assert.deepEqual(await earned(SOL_MINT as Address), { lamports: held.lamports, tokens: owedRaw });
    assert.equal(feeWalletBefore - (await lamports(t.platform.feeWallet)), NETWORK_FEE);
  });

  test('the integrator’s shares of a route under way are kept until it settles, when the ledger owes them', async () => {
    const route = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 60 });
    const deployedAt = (await t.chain.chain.getClock()).unixTimestamp;
    await deployRoute(t, caller, route);
    const underWay = BigInt(
      (route.estimate as unknown as { integratorFlatShare: number }).integratorFlatShare,
    );
    assert.equal(underWay, 900_000n);
    const owedBefore = await owedLamports();
    const free = (await earned(usdc)).lamports - owedBefore - underWay;
    const destination = await newWallet();
    await t.chain.cheats.airdrop(destination, 1_000_000_000n);

    const refused = await withdraw({ destination, lamports: String(free + 1n) });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.json().error.message, new RegExp(`at most ${free} can be withdrawn\\.$`));
    assert.equal((await withdraw({ destination, lamports: String(free) })).statusCode, 200);

    // The route settles: its fees reach the config and the ledger owes the integrator its shares.
    await t.chain.cheats.timeTravel({ absoluteTimestamp: Number(deployedAt + 61n) * 1000 });
    for (let hop = 0; hop < 3; hop++) await t.keeper.runOnce();
    assert.equal((await caller.get(`/api/v1/transfers/${route.id}`)).json().status, 'completed');
    const owed = await owedLamports();
    assert.equal(owed, owedBefore + underWay);
    // What was kept back is the platform's again, with its own share of the route's flat fee.
    assert.equal((await earned(usdc)).lamports - owed, underWay + (3_000_000n - underWay));
  });

  test('what cannot be a withdrawal is MH_016 naming the field; the CLI withdraws and prints the answer', async () => {
    const destination = await newWallet();
    for (const [body, param] of [
      [{ destination }, 'lamports'],
      [{ destination, lamports: '0' }, 'lamports'],
      [{ destination, mint: usdc }, 'amountRaw'],
      [{ destination, amountRaw: '5' }, 'mint'],
      [{ destination, lamports: '-1' }, 'lamports'],
      [{ destination: config, lamports: '1' }, 'destination'],
      [{ destination: 'not-a-wallet', lamports: '1' }, 'destination'],
    ] as const) {
      const response = await withdraw(body);
      assert.equal(response.statusCode, 400, JSON.stringify(body));
      assert.equal(response.json().error.code, 'MH_016', response.body);
      assert.equal(response.json().error.param, param, response.body);
    }

    await settleRoute(t, caller, usdc);
    const before = await earned(usdc);
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const cli = await runAdminCli([
      'platform',
      'withdraw',
      '--to',
      destination,
      '--lamports',
      '1000000',
      '--url',
      url,
      '--token',
      ADMIN_TOKEN,
    ]);
    assert.equal(cli.code, 0, cli.stderr);
    const printed = JSON.parse(cli.stdout);
    assert.deepEqual([printed.destination, printed.lamports, printed.tokens], [destination, '1000000', null]);
    assert.equal(await lamports(destination), 1_000_000n);
    assert.equal((await earned(usdc)).lamports, before.lamports - 1_000_000n);

    const refused = await runAdminCli(
      ['platform', 'withdraw', '--to', destination, '--lamports', String(before.lamports), '--url', url],
      { ADMIN_TOKEN },
    );
    assert.equal(refused.code, 1);
    assert.match(JSON.parse(refused.stderr).error.message, /would take what integrators are owed/);
    const usage = await runAdminCli(
      ['platform', 'withdraw', '--to', destination, '--mint', usdc, '--url', url],
      {
        ADMIN_TOKEN,
      },
    );
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /give --mint and --amount together/);
  });
});
