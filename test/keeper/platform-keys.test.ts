// No key the platform holds can make a route in flight fail or lose funds: the fee key cannot close
// or empty the accounts fees settle into (the config owns them), and a config the admin changes
// mid-flight (a higher screening deposit) binds no route created before it, while a bundle prepared
// before it cannot be made to pay more than its source agreed to.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Address } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { isChainError } from '../../src/chain/errors.ts';
import { decodeRouterConfig } from '../../src/chain/router/accounts.ts';
import { ROUTER_ERROR_CODES } from '../../src/chain/router/errors.ts';
import { getUpdateConfigInstruction } from '../../src/chain/router/instructions.ts';
import { PlatformTransactionError, sendAndConfirm } from '../../src/platform/send.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { quoteRoute } from '../helpers/route.ts';
import { broadcastBundle } from '../helpers/wallet.ts';
import { confirmBroadcast, prepare, UNLIMITED } from '../route/helpers.ts';
import {
  allCompleted,
  assertCarriedOnce,
  deployDueRoutes,
  keeperWorker,
  lamports,
  routeOnChain,
} from './helpers.ts';

describe('platform keys against routes in flight', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp({ platform: { settings: { screeningRequired: true } } });
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  const send = (...args: Parameters<typeof sendAndConfirm>) =>
    sendAndConfirm(args[0], args[1], args[2], { pollMs: 5, ...args[3] });
  const configDeposit = async () =>
    decodeRouterConfig((await t.chain.chain.getAccount(t.platform.configAddress))!.data)
      .screeningDepositLamports;

  test('the fee key closes nothing and empties itself, the admin raises the deposit: every route completes', async () => {
    const keeper = keeperWorker(t);
    const routes = await deployDueRoutes(t, caller, [usdc, SOL_MINT as Address]);
    const deposits = await Promise.all(
      routes.map(async (route) => (await routeOnChain(t, route.id)).route.depositLamports),
    );
    // A route whose bundle was prepared before the config changes, broadcast after.
    const late = await quoteRoute(t, caller, { hops: 3, mint: usdc, arrivalSeconds: 600 });
    const stale = (await prepare(caller, late.id)).preparedTxs;

    // The fee key tries to close the accounts fees settle into, then spends all it holds.
    const feeKey = t.platform.feeWalletSigner;
    for (const mint of [usdc, SOL_MINT as Address]) {
      const [account] = await findAssociatedTokenPda({
        owner: t.platform.configAddress,
        mint,
        tokenProgram: TOKEN_PROGRAM_ADDRESS,
      });
      await assert.rejects(
        send(t.chain.chain, feeKey, [
          getCloseAccountInstruction({ account, destination: feeKey.address, owner: feeKey }),
        ]),
        PlatformTransactionError,
      );
      assert.ok(await t.chain.chain.getTokenAccount(account), 'the config’s token account stays open');
    }
    const held = await lamports(t, feeKey.address);
    await send(t.chain.chain, feeKey, [
      getTransferSolInstruction({ source: feeKey, destination: late.source.address, amount: held - 5_000n }),
    ]);
    assert.equal(await lamports(t, feeKey.address), 0n);
    // The admin triples the screening deposit.
    const raised = (await configDeposit()) * 3n;
    await send(t.chain.chain, t.platform.admin, [
      getUpdateConfigInstruction({
        admin: t.platform.admin,
        config: t.platform.configAddress,
        newAdmin: t.platform.admin.address,
        screeningAuthority: t.platform.screeningAuthority.address,
        platformWallet: feeKey.address,
        screeningDepositLamports: raised,
      }),
    ]);

    // Routes in flight: screened (their own deposits refunded), every hop, settled exactly.
    for (let round = 0; round < 10 && !(await allCompleted(t, routes)); round++) await keeper.runOnce();
    for (const [index, route] of routes.entries()) {
      await assertCarriedOnce(t, route);
      assert.equal(deposits[index], raised / 3n, 'the deposit held is the one of its creation');
    }

    // The bundle prepared before the change cannot take the higher deposit: its route creation fails.
    const funding = await broadcastBundle(t.chain.chain, late.source, stale, { through: 'keeperFunding' });
    await assert.rejects(
      broadcastBundle(
        t.chain.chain,
        late.source,
        { ...stale, keeperFundingTx: null },
        { through: 'routeInit' },
      ),
      (error) =>
        isChainError(error, 'CHAIN_PREFLIGHT_FAILED') &&
        JSON.stringify(error.context.transactionError, (_, v) =>
          typeof v === 'bigint' ? Number(v) : v,
        ).includes(`"Custom":${ROUTER_ERROR_CODES.DepositAboveMaximum}`),
    );
    // Prepared again, it carries the new deposit, and the route completes.
    const fresh = (await prepare(caller, late.id)).preparedTxs;
    const rest = await broadcastBundle(t.chain.chain, late.source, fresh);
    const confirmed = await confirmBroadcast(caller, late.id, {
      ...rest,
      keeperFundingSignature: funding.keeperFundingSignature,
    });
    assert.equal(confirmed.statusCode, 200, confirmed.body);
    assert.equal(confirmed.json().transfer.status, 'processing');
    assert.equal((await routeOnChain(t, late.id)).route.depositLamports, raised);
  });
});
