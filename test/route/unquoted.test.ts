// A source that deploys a route of its own at its transfer's address, with one term other than the
// quoted ones, as a dishonest source can with nothing but its own key: the service never runs it,
// records the transfer failed and recoverable naming the term, credits no rewards, returns the
// keeper's lamports, and the source rescues everything through the API once the program allows.
// An honest route beside them completes to the base unit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner, type Instruction, type KeyPairSigner } from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeAccount3Instruction,
  getSyncNativeInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { planDeployment } from '../../src/chain/router/bundle.ts';
import type { RouteTerms } from '../../src/chain/router/instructions.ts';
import { findRouteAddresses } from '../../src/chain/router/pda.ts';
import type { PreparedRouteTerms } from '../../src/domain/route-terms.ts';
import { sendAndConfirm } from '../../src/platform/send.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';
import { type QuotedRoute, quoteRoute } from '../helpers/route.ts';
import { type BroadcastSignatures, broadcastBundle } from '../helpers/wallet.ts';
import { allCompleted, assertCarriedOnce, deployDueRoutes, routeOnChain } from '../keeper/helpers.ts';
import {
  ata,
  eventTypes,
  feesPaidBy,
  getTransfer,
  lamports,
  rescueThroughApi,
  routeRow,
  tokens,
  travelPast,
} from '../recovery/helpers.ts';
import { confirmBroadcast, prepare, UNLIMITED } from './helpers.ts';

const HOPS = 3;
const ARRIVAL = 600;
const TOKEN_RENT = 2_039_280n;

/** What a dishonest source changes in the route it deploys, and the accounts it creates for others. */
interface Tampering {
  terms?: Partial<RouteTerms>;
  mint?: Address;
  platformFeeToken?: Address;
  integratorFeeToken?: Address;
  /** False when the recipient token account is not the recipient's associated one. */
  createRecipientTokenAccount?: boolean;
  /** Token accounts the source paid for that are not its own (their rent does not come back). */
  createdForOthers?: Address[];
}

/** A source's changes, chosen knowing the transfer and the terms the service prepared for it. */
type Tamper = (route: QuotedRoute, quoted: PreparedRouteTerms) => Promise<Tampering>;

describe('a route that is not the one quoted', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  /** Sends instructions paid and signed by `payer` (and any signer they carry), confirmed. */
  const send = (app: TestApp, payer: KeyPairSigner, instructions: Instruction[]) =>
    sendAndConfirm(app.chain.chain, payer, instructions, { pollMs: 5 });

  /** A token account at a fresh address (not an associated one) of `owner`, paid by `payer`. */
  async function plainTokenAccount(app: TestApp, payer: KeyPairSigner, owner: Address, mint: Address) {
    const account = await generateKeyPairSigner();
    await send(app, payer, [
      getCreateAccountInstruction({
        payer,
        newAccount: account,
        lamports: TOKEN_RENT,
        space: 165,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeAccount3Instruction({ account: account.address, mint, owner }),
    ]);
    return account.address;
  }

  /**
   * Takes the prepared bundle's keeper funding only, then deploys the route itself at the
   * transfer's address: the terms the service prepared (as its CreateRoute carries them) with
   * `tampering` applied, fresh intermediate keys of its own, signed by the source alone.
   */
  async function deployUnquoted(
    app: TestApp,
    caller: Caller,
    route: QuotedRoute,
    tamper: Tamper,
  ): Promise<{ signatures: BroadcastSignatures; tampering: Tampering }> {
    const { preparedTxs } = await prepare(caller, route.id);
    assert.ok(preparedTxs.keeperFundingTx, 'the bundle funds the keeper');
    const funding = await broadcastBundle(app.chain.chain, route.source, preparedTxs, {
      through: 'keeperFunding',
    });
    const quoted = (await app.store.deployments.preparedRouteTerms(route.id)).at(-1) as PreparedRouteTerms;
    const tampering = await tamper(route, quoted);
    const terms: RouteTerms = {
      routeId: BigInt(route.id),
      hopCount: quoted.hopCount,
      amount: quoted.amount,
      percentFeeBps: quoted.percentFeeBps,
      integratorShareBps: quoted.integratorShareBps,
      flatFeePerHopLamports: quoted.flatFeePerHopLamports,
      firstReleaseAt: quoted.firstReleaseAt,
      intervalSecs: quoted.intervalSecs,
      deadlineAt: quoted.deadlineAt,
      keeper: quoted.keeper,
      recipient: quoted.recipient,
      recipientToken: quoted.recipientToken,
      integratorWallet: quoted.integratorWallet,
      screeningRequired: quoted.screeningRequired,
      maxDepositLamports: quoted.maxDepositLamports,
      ...tampering.terms,
    };
    const mint = tampering.mint ?? quoted.mint;
    const source = route.source;
    const sourceToken = await ata(source.address, mint);
    if (mint === SOL_MINT) {
      await send(app, source, [
        getCreateAssociatedTokenIdempotentInstruction({
          payer: source,
          ata: sourceToken,
          owner: source.address,
          mint,
        }),
        getTransferSolInstruction({ source, destination: sourceToken, amount: terms.amount }),
        getSyncNativeInstruction({ account: sourceToken }),
      ]);
    }
    const addresses = await findRouteAddresses(
      { source: source.address, routeId: terms.routeId, hopCount: terms.hopCount },
      app.platform.programAddress,
    );
    const plan = planDeployment({
      source,
      keeper: terms.keeper,
      keeperFundingLamports: 0n,
      terms,
      mint,
      sourceToken,
      config: app.platform.configAddress,
      platformFeeToken: tampering.platformFeeToken ?? quoted.platformFeeToken,
      integratorFeeToken: tampering.integratorFeeToken ?? quoted.integratorFeeToken,
      addresses,
      hopSigners: await Promise.all(Array.from({ length: terms.hopCount - 1 }, generateKeyPairSigner)),
      onChain: {
        keeperFunded: true,
        route: null,
        orchestratorExists: (await app.chain.chain.getAccount(addresses.orchestrator[0])) !== null,
      },
      createRecipientTokenAccount: tampering.createRecipientTokenAccount ?? true,
      programAddress: app.platform.programAddress,
    });
    const signatures: BroadcastSignatures = {
      keeperFundingSignature: funding.keeperFundingSignature!,
      routeInitSignatures: [],
      sessionInitSignatures: [],
    };
    for (const group of plan.routeInit) signatures.routeInitSignatures.push(await send(app, source, group));
    // The wrapped-SOL account opened for the route closes again, as the service's bundle does.
    if (mint === SOL_MINT) {
      await send(app, source, [
        getCloseAccountInstruction({ account: sourceToken, destination: source.address, owner: source }),
      ]);
    }
    if (plan.orchestratorInit)
      signatures.orchestratorInitSignature = await send(app, source, plan.orchestratorInit);
    for (const group of plan.sessionInit)
      signatures.sessionInitSignatures!.push(await send(app, source, group));
    return { signatures, tampering };
  }

  /**
   * Deploys the tampered route and reports it (or leaves it to the reconciler), then checks what
   * the service did: never run, recoverable naming `term`, no rewards, the keeper emptied; then the
   * source rescues through the API as soon as the program allows and holds everything again but
   * network fees and the rent of accounts it paid for others.
   */
  async function expectRefused(
    app: TestApp,
    caller: Caller,
    route: QuotedRoute,
    input: { tamper: Tamper; term: string; report: 'confirm-broadcast' | 'reconciler' },
  ) {
    const sourceBefore = await lamports(app, route.source.address);
    const feesBefore = await feesPaidBy(app, route.source.address);
    const tokensBefore = route.mint === SOL_MINT ? 0n : await tokens(app, route.source.address, route.mint);
    const feeToken = await ata(app.platform.configAddress, route.mint);
    const feeTokenExisted = (await app.chain.chain.getAccount(feeToken)) !== null;
    const { signatures, tampering } = await deployUnquoted(app, caller, route, input.tamper);

    if (input.report === 'confirm-broadcast') {
      const confirmed = await confirmBroadcast(caller, route.id, signatures);
      assert.equal(confirmed.statusCode, 200, confirmed.body);
    } else {
      assert.equal(await app.reconciler.runOnce(), 1);
    }
    const transfer = await getTransfer(caller, route.id);
    assert.equal(transfer.status, 'failed');
    assert.equal(transfer.phase, 'recoverable');
    assert.equal(transfer.lastError.code, 'MH_031');
    assert.match(transfer.lastError.message, new RegExp(`not the one quoted: its ${input.term} is `));
    const events = await eventTypes(app, route.id);
    assert.deepEqual(events.slice(-3), ['transfer.phase_changed', 'transfer.failed', 'transfer.recoverable']);
    assert.ok(!events.includes('transfer.processing') && !events.includes('transfer.deposit_confirmed'));

    // Never run: even with every hop due, no keeper claims it and no step executes.
    const row = await routeRow(app, route.id);
    const onChain = await routeOnChain(app, route.id);
    await travelPast(
      app,
      onChain.route.firstReleaseAt + BigInt(onChain.route.hopCount) * onChain.route.intervalSecs,
    );
    assert.equal(await app.keeper.runOnce(), 0);
    assert.equal((await routeOnChain(app, route.id)).route.nextStep, 0, 'no hop on chain');
    const recipients = [route.recipient, ...(tampering.terms?.recipient ? [tampering.terms.recipient] : [])];
    for (const recipient of recipients) {
      const received =
        route.mint === SOL_MINT ? await lamports(app, recipient) : await tokens(app, recipient, route.mint);
      assert.equal(received, 0n, `${recipient} received nothing from the route`);
    }
    const { rows: accrued } = await app.database.db.query(
      'SELECT 1 FROM reward_accruals WHERE transfer_id = $1',
      [route.id],
    );
    assert.equal(accrued.length, 0, 'no rewards accrue');
    assert.equal(await lamports(app, row.keeper), 0n, "the keeper's lamports went back to the source");

    // Rescuable now when the service's keeper could declare it failed; else once past its deadline.
    if (!(await getTransfer(caller, route.id)).recovery.canRescue) {
      await travelPast(app, onChain.route.deadlineAt);
    }
    await rescueThroughApi(app, caller, route);
    const othersRent = await Promise.all(
      [
        ...(tampering.createdForOthers ?? []),
        ...(route.mint === SOL_MINT ? [] : [await ata(route.recipient, route.mint)]),
        ...(feeTokenExisted ? [] : [feeToken]),
      ].map((address) => lamports(app, address)),
    );
    const networkFees =
      (await feesPaidBy(app, route.source.address)) - feesBefore + (await feesPaidBy(app, row.keeper));
    assert.equal(
      await lamports(app, route.source.address),
      sourceBefore - networkFees - othersRent.reduce((sum, rent) => sum + rent, 0n),
      'every lamport back but network fees and the rent of accounts paid for others',
    );
    if (route.mint !== SOL_MINT)
      assert.equal(await tokens(app, route.source.address, route.mint), tokensBefore);
    assert.equal(await app.chain.chain.getAccount(row.route), null, 'the route is closed');
  }

  const quote = (app: TestApp, c: Caller, mint: Address) =>
    quoteRoute(app, c, { hops: HOPS, mint, arrivalSeconds: ARRIVAL });

  test('an honest route beside them completes exactly, crediting the integrator its share', async () => {
    const routes = await deployDueRoutes(t, caller, [usdc, SOL_MINT as Address]);
    for (let round = 0; round < 10 && !(await allCompleted(t, routes)); round++) await t.keeper.runOnce();
    for (const route of routes) {
      await assertCarriedOnce(t, route);
      const { rows } = await t.database.db.query<{
        amount_raw: string;
        lamports: string;
        share: string;
        flat: string;
      }>(
        `SELECT accrual.amount_raw, accrual.lamports, transfer.integrator_percent_share_raw AS share,
                transfer.integrator_flat_share_lamports AS flat
           FROM reward_accruals accrual JOIN transfers transfer ON transfer.id = accrual.transfer_id
          WHERE accrual.transfer_id = $1`,
        [route.id],
      );
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.amount_raw, rows[0]!.share);
      assert.equal(rows[0]!.lamports, rows[0]!.flat);
      assert.ok(BigInt(rows[0]!.lamports) > 0n);
    }
  });

  const cases: { term: string; tamper: Tamper }[] = [
    {
      term: 'percentage fee',
      tamper: async () => ({ terms: { percentFeeBps: 0, flatFeePerHopLamports: 0n } }),
    },
    { term: 'flat fee', tamper: async () => ({ terms: { flatFeePerHopLamports: 0n } }) },
    {
      term: 'recipient',
      tamper: async () => {
        const substitute = (await generateKeyPairSigner()).address;
        const token = await ata(substitute, usdc);
        return { terms: { recipient: substitute, recipientToken: token }, createdForOthers: [token] };
      },
    },
    {
      term: 'recipient token account',
      tamper: async (route) => {
        const account = await plainTokenAccount(t, route.source, route.recipient, usdc);
        return {
          terms: { recipientToken: account },
          createRecipientTokenAccount: false,
          createdForOthers: [account],
        };
      },
    },
    { term: 'hop count', tamper: async () => ({ terms: { hopCount: 5 } }) },
    { term: 'interval', tamper: async () => ({ terms: { intervalSecs: 1 } }) },
    {
      term: 'first release',
      tamper: async (_, quoted) => ({ terms: { firstReleaseAt: quoted.firstReleaseAt - 100n } }),
    },
    {
      term: 'deadline',
      tamper: async (_, quoted) => ({ terms: { deadlineAt: quoted.deadlineAt + 86_400n } }),
    },
    {
      term: 'keeper',
      tamper: async () => ({ terms: { keeper: (await generateKeyPairSigner()).address } }),
    },
    {
      term: "integrator's share of the percentage fee",
      tamper: async (route) => ({
        terms: { integratorShareBps: 10_000, integratorWallet: route.source.address },
        integratorFeeToken: await ata(route.source.address, usdc),
      }),
    },
    {
      term: 'integrator fee token account',
      tamper: async (route) => ({ integratorFeeToken: await ata(route.source.address, usdc) }),
    },
    {
      term: 'integrator wallet',
      tamper: async (route) => ({ terms: { integratorWallet: route.source.address } }),
    },
    {
      term: 'platform fee token account',
      tamper: async (route) => {
        const account = await plainTokenAccount(t, route.source, t.platform.configAddress, usdc);
        return { platformFeeToken: account, createdForOthers: [account] };
      },
    },
    { term: 'amount', tamper: async (route) => ({ terms: { amount: route.amountRaw * 2n } }) },
  ];
  for (const { term, tamper } of cases) {
    test(`${term} changed, reported through confirm-broadcast: never run, recoverable, rescued whole`, async () => {
      const route = await quote(t, caller, usdc);
      await expectRefused(t, caller, route, { tamper, term, report: 'confirm-broadcast' });
    });
  }

  test('another mint at the transfer’s address: never run, rescued whole in that mint', async () => {
    const route = await quote(t, caller, usdc);
    const other = await createMint(t.chain, { decimals: 6 });
    await t.chain.cheats.setTokenAccount(route.source.address, other, { amount: route.amountRaw });
    await expectRefused(t, caller, route, {
      tamper: async () => {
        // The platform's fee account of that mint must exist: the source creates it.
        const feeToken = await ata(t.platform.configAddress, other);
        await send(t, route.source, [
          getCreateAssociatedTokenIdempotentInstruction({
            payer: route.source,
            ata: feeToken,
            owner: t.platform.configAddress,
            mint: other,
          }),
        ]);
        const recipientToken = await ata(route.recipient, other);
        return {
          mint: other,
          terms: { recipientToken },
          platformFeeToken: feeToken,
          integratorFeeToken: feeToken,
          createdForOthers: [recipientToken, feeToken],
        };
      },
      term: 'mint',
      report: 'confirm-broadcast',
    });
    assert.equal(await tokens(t, route.source.address, other), route.amountRaw, 'the other mint came back');
  });

  test('fees zeroed on a native SOL route, never reported: the reconciler refuses it alone', async () => {
    const route = await quote(t, caller, SOL_MINT as Address);
    await expectRefused(t, caller, route, {
      tamper: async () => ({ terms: { percentFeeBps: 0, flatFeePerHopLamports: 0n } }),
      term: 'percentage fee',
      report: 'reconciler',
    });
  });

  test('screening turned off on a cluster that screens every route', async () => {
    const screened = await createTestApp({ platform: { settings: { screeningRequired: true } } });
    try {
      const screenedCaller = await screened.newCaller('test', UNLIMITED);
      const mint = await createMint(screened.chain, { decimals: 6 });
      const route = await quoteRoute(screened, screenedCaller, { hops: HOPS, mint, arrivalSeconds: ARRIVAL });
      await expectRefused(screened, screenedCaller, route, {
        tamper: async () => ({ terms: { screeningRequired: false } }),
        term: 'screening',
        report: 'confirm-broadcast',
      });
    } finally {
      await screened.close();
    }
  });
});
