import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Address, address, generateKeyPairSigner } from '@solana/kit';

const TOKEN_2022_PROGRAM_ADDRESS = address('TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb');

import { createMintLookup, createSolCostEstimator } from '../../src/chain/quote-reads.ts';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { createMint } from '../helpers/chain.ts';

const SOL_MINT = 'So11111111111111111111111111111111111111112';
/** The default rent: (128 + data bytes) × 6,960 lamports for two years of rent exemption. */
const rent = (bytes: number) => (128 + bytes) * 6960;

/**
 * The SOL side the estimate must show for `hops` hops, re-derived from the program's account
 * sizes, every item counted in full: custody, the intermediate accounts, the platform's fee
 * account for the mint, and the recipient's token account (none for native SOL, whose last hop
 * unwraps into the recipient's wallet; nor the source's wrapped-SOL account, which the route's
 * creation opens and closes again in one transaction); the
 * transaction fees include the keeper's margin of one more hop, which comes back. With a floor of
 * 0 the bundle pays no priority fee, but the keeper's hops have a priority budget: per hop and one
 * more, 25,000 compute units at 8 times an escalation step of 10,000 micro-lamports (2,000
 * lamports); hops landing at the floor leave all of it to come back.
 */
function expectedSol(hops: number, flatFee: number, mint: 'native' | 'spl') {
  const routeInit = rent(736) + hops * rent(72) + rent(0);
  const orchestrator = rent(56);
  const ata = (mint === 'native' ? hops + 1 : hops + 2) * rent(165);
  // A native route's CreateRoute transaction also wraps the SOL, so it creates one hop fewer.
  const addHopsTxs = Math.ceil(Math.max(0, hops - 1 - (mint === 'native' ? 4 : 5)) / 8);
  const signatures = 1 + (1 + addHopsTxs + (hops - 1)) + 1 + 1 + hops + 1;
  const hopBudget = (hops + 1) * 2_000;
  const required = routeInit + orchestrator + ata + signatures * 5000 + hopBudget + flatFee;
  const refundable = routeInit + orchestrator + hops * rent(165) + 5000 + hopBudget;
  return {
    requiredSolUpFrontLamports: required,
    breakdown: {
      routeInitRentLamports: routeInit,
      orchestratorRentLamports: orchestrator,
      ataRentLamports: ata,
      transactionFeesLamports: signatures * 5000,
      priorityFeesLamports: hopBudget,
      protocolFlatFeeLamports: flatFee,
    },
    refundableLamports: refundable,
    netCostLamports: required - refundable,
  };
}

/** Settings that lift rate limits, for tests that make many calls (limits have their own tests). */
const UNLIMITED = { rateLimitMultiplier: 1000 };

const wallet = async () => (await generateKeyPairSigner()).address;

describe('POST /transfers/estimate', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
  });
  after(() => t.close());

  test('SOL with no options: decimals from the chain, default 7 hops, the fixed SOL price, every field', async () => {
    const response = await caller.post('/api/v1/transfers/estimate', {
      tokenMint: SOL_MINT,
      amountRaw: '1000000000',
    });
    assert.equal(response.statusCode, 200);
    // 1 SOL at 150 USD: standard tier (100 bps), fee 0.01 SOL, 30% to the integrator.
    assert.deepEqual(response.json(), {
      tier: 'standard',
      percentFeeBps: 100,
      percentFeeRaw: '10000000',
      flatFeeLamportsPerHop: 10000,
      totalFlatFeeLamports: 70000,
      integratorPercentShare: '3000000',
      integratorFlatShare: 21000,
      usdEquivalent: 150,
      isTestMode: true,
      tokens: { amountRaw: '1000000000', feeRaw: '10000000', netDeliveredRaw: '990000000', decimals: 9 },
      sol: expectedSol(7, 70000, 'native'),
    });
  });

  test('a client price wins; tier boundaries are exact', async () => {
    const at = async (amountRaw: string) =>
      (
        await caller.post('/api/v1/transfers/estimate', {
          tokenMint: usdc,
          amountRaw,
          tokenPriceUsd: 1,
          hops: 3,
        })
      ).json();
    const justBelow = await at('99999999');
    assert.equal(justBelow.tier, 'micro');
    assert.equal(justBelow.percentFeeBps, 150);
    assert.equal(justBelow.percentFeeRaw, '1500000'); // ceil(99,999,999 × 150 / 10,000)
    const exactly = await at('100000000');
    assert.equal(exactly.tier, 'standard');
    assert.equal(exactly.usdEquivalent, 100);
    assert.equal((await at('10000000000')).tier, 'pro');
    assert.equal((await at('250000000000')).tier, 'institutional');
    assert.deepEqual(exactly.tokens, {
      amountRaw: '100000000',
      feeRaw: '1000000',
      netDeliveredRaw: '99000000',
      decimals: 6,
    });
    assert.deepEqual(exactly.sol, expectedSol(3, 30000, 'spl'));
  });

  test('10 hops: the SOL side grows with the route', async () => {
    const response = await caller.post('/api/v1/transfers/estimate', {
      tokenMint: usdc,
      amountRaw: '5000000000',
      tokenPriceUsd: 1,
      hops: 10,
    });
    assert.deepEqual(response.json().sol, expectedSol(10, 100000, 'spl'));
  });

  test('the integration default hops and fee overrides apply', async () => {
    const custom = await t.newCaller('live', {
      defaultHops: 4,
      fees: {
        integratorShareBps: 5000,
        flatFeeLamportsPerHop: '20000',
        tiers: [{ name: 'flat', minUsd: '0', percentFeeBps: 50 }],
      },
    });
    const body = (
      await custom.post('/api/v1/transfers/estimate', {
        tokenMint: usdc,
        amountRaw: '2000000',
        tokenPriceUsd: 1,
      })
    ).json();
    assert.equal(body.tier, 'flat');
    assert.equal(body.percentFeeRaw, '10000');
    assert.equal(body.integratorPercentShare, '5000');
    assert.equal(body.flatFeeLamportsPerHop, 20000);
    assert.equal(body.totalFlatFeeLamports, 80000);
    assert.equal(body.integratorFlatShare, 40000);
    assert.equal(body.isTestMode, false);
    assert.deepEqual(body.sol, expectedSol(4, 80000, 'spl'));
  });

  test('tokenDecimals must agree with the mint on chain (MH_016)', async () => {
    const ok = await caller.post('/api/v1/transfers/estimate', {
      tokenMint: usdc,
      amountRaw: '2000000',
      tokenPriceUsd: 1,
      tokenDecimals: 6,
    });
    assert.equal(ok.statusCode, 200);
    const wrong = await caller.post('/api/v1/transfers/estimate', {
      tokenMint: usdc,
      amountRaw: '2000000',
      tokenPriceUsd: 1,
      tokenDecimals: 9,
    });
    assert.equal(wrong.statusCode, 400);
    assert.equal(wrong.json().error.code, 'MH_016');
    assert.equal(wrong.json().error.param, 'tokenDecimals');
    assert.match(wrong.json().error.message, /mint on chain has 6 decimals/);
  });

  test('MH_010: malformed, unknown and unsupported mints, and no price', async () => {
    const token2022 = await createMint(t.chain, { decimals: 6, programAddress: TOKEN_2022_PROGRAM_ADDRESS });
    const cases: [unknown, string][] = [
      ['not-a-mint', 'tokenMint'],
      [await wallet(), 'tokenMint'],
      [token2022, 'tokenMint'],
    ];
    for (const [tokenMint, param] of cases) {
      const response = await caller.post('/api/v1/transfers/estimate', {
        tokenMint,
        amountRaw: '1000000',
        tokenPriceUsd: 1,
      });
      assert.equal(response.statusCode, 400, String(tokenMint));
      assert.equal(response.json().error.code, 'MH_010');
      assert.equal(response.json().error.param, param);
    }
    const unpriced = await caller.post('/api/v1/transfers/estimate', {
      tokenMint: usdc,
      amountRaw: '1000000',
    });
    assert.equal(unpriced.json().error.code, 'MH_010');
    assert.equal(unpriced.json().error.param, 'tokenPriceUsd');
  });

  test('MH_012, MH_013 and MH_016 for amounts and hops', async () => {
    const estimate = (body: object) =>
      caller
        .post('/api/v1/transfers/estimate', { tokenMint: usdc, tokenPriceUsd: 1, ...body })
        .then((r) => r.json().error);
    const belowMinimum = await estimate({ amountRaw: '999999' });
    assert.deepEqual(belowMinimum, {
      code: 'MH_012',
      message: 'Amount is worth less than the minimum of 1 USD.',
      requestId: belowMinimum.requestId,
      param: 'amountRaw',
    });
    assert.equal((await estimate({ amountRaw: '0' })).code, 'MH_012');
    // Native SOL: the recipient's wallet must end rent exempt, whatever the USD value.
    const sol = (amountRaw: string) =>
      caller
        .post('/api/v1/transfers/estimate', { tokenMint: SOL_MINT, amountRaw, tokenPriceUsd: 10_000 })
        .then((r) => r.json());
    // About 9 USD: the micro tier, 150 bps. 904,446 - ceil(1.5%) = 890,879 delivered.
    const tooLittle = (await sol('904446')).error;
    assert.equal(tooLittle.code, 'MH_012');
    assert.equal(tooLittle.param, 'amountRaw');
    assert.match(tooLittle.message, /at least 890880 lamports/);
    assert.equal((await sol('904447')).tokens.netDeliveredRaw, '890880');
    for (const amountRaw of ['-1', '1.5', 'abc', '18446744073709551616', '', 1000000]) {
      const error = await estimate({ amountRaw });
      assert.equal(error.code, 'MH_016', String(amountRaw));
      assert.equal(error.param, 'amountRaw');
    }
    for (const hops of [2, 11, 0]) {
      const error = await estimate({ amountRaw: '5000000', hops });
      assert.equal(error.code, 'MH_013', String(hops));
      assert.equal(error.param, 'hops');
    }
    assert.equal((await estimate({ amountRaw: '5000000', hops: '5' })).code, 'MH_016');
    assert.equal((await estimate({ amountRaw: '5000000', hops: 4.5 })).code, 'MH_016');
    assert.equal((await estimate({ amountRaw: '5000000', tokenPriceUsd: -1 })).param, 'tokenPriceUsd');
    assert.equal((await estimate({ amountRaw: '5000000', tokenDecimals: 19 })).param, 'tokenDecimals');
  });

  test('the largest u64 amount is priced exactly', async () => {
    const body = (
      await caller.post('/api/v1/transfers/estimate', {
        tokenMint: usdc,
        amountRaw: '18446744073709551615',
        tokenPriceUsd: 1,
      })
    ).json();
    assert.equal(body.tier, 'institutional');
    assert.equal(body.percentFeeRaw, '64563604257983431'); // ceil((2^64 - 1) × 35 / 10,000)
    assert.equal(body.tokens.netDeliveredRaw, (18446744073709551615n - 64563604257983431n).toString());
  });
});

describe('estimate edge cases', () => {
  test('a mint created after a failed lookup is found on the next request', async () => {
    const t = await createTestApp();
    try {
      const caller = await t.newCaller();
      const signer = await generateKeyPairSigner();
      const before = await caller.post('/api/v1/transfers/estimate', {
        tokenMint: signer.address,
        amountRaw: '5000000',
        tokenPriceUsd: 1,
      });
      assert.equal(before.json().error.code, 'MH_010');
      const mint = await createMint(t.chain, { decimals: 6 });
      const after = await caller.post('/api/v1/transfers/estimate', {
        tokenMint: mint,
        amountRaw: '5000000',
        tokenPriceUsd: 1,
      });
      assert.equal(after.statusCode, 200);
    } finally {
      await t.close();
    }
  });

  test('a price too small to compute with is refused, not a 500', async () => {
    const t = await createTestApp();
    try {
      const caller = await t.newCaller();
      for (const tokenPriceUsd of [5e-324, 1e-200, 0]) {
        const response = await caller.post('/api/v1/transfers/estimate', {
          tokenMint: SOL_MINT,
          amountRaw: '5000000',
          tokenPriceUsd,
        });
        assert.equal(response.statusCode, 400, String(tokenPriceUsd));
        assert.equal(response.json().error.param, 'tokenPriceUsd');
      }
    } finally {
      await t.close();
    }
  });
});

describe('the keeper’s priority-fee budget in the estimate', () => {
  test('counted in priorityFeesLamports at the budget’s price, and in refundableLamports but for the hops at the floor', async () => {
    const policy = {
      floorMicroLamportsPerCu: 20_000n,
      capMicroLamportsPerCu: 100_000n,
      hopBudgetMultiplier: 8,
    };
    const t = await createTestApp();
    const priced = await createTestApp({
      solCosts: createSolCostEstimator({ chain: t.chain.chain, priorityFees: policy }),
    });
    try {
      const body = { tokenMint: SOL_MINT, amountRaw: '1000000000', hops: 3 };
      const [free, paid] = await Promise.all(
        [t, priced].map(async (app) => {
          const response = await (await app.newCaller()).post('/api/v1/transfers/estimate', body);
          assert.equal(response.statusCode, 200, response.body);
          return response.json().sol;
        }),
      );
      // The bundle: 156,000 compute units (keeper funding 1,000, route creation 65,000, the
      // orchestrator 10,000, one session transaction 80,000) at the floor, 3,120 lamports. The
      // keeper's budget: 8 × the floor is above the cap, so 4 hop transactions of 25,000 units at
      // 100,000 micro-lamports, 2,500 lamports each. Hops landing at the floor pay 3 × 500 of it.
      const bundle = 3_120;
      const budget = 4 * 2_500;
      const atFloor = 3 * 500;
      assert.equal(paid.breakdown.priorityFeesLamports, bundle + budget);
      assert.equal(free.breakdown.priorityFeesLamports, 4 * 2_000, 'a floor of 0: 8 × a 10,000 step');
      assert.equal(paid.refundableLamports - free.refundableLamports, budget - atFloor - 4 * 2_000);
      assert.equal(
        paid.requiredSolUpFrontLamports - free.requiredSolUpFrontLamports,
        bundle + budget - 4 * 2_000,
      );
      assert.equal(paid.netCostLamports - free.netCostLamports, bundle + atFloor);
    } finally {
      await priced.close();
      await t.close();
    }
  });
});

describe('estimate when the chain cannot answer', () => {
  test('with every chain read failing the estimate is MH_091, retryable', async () => {
    const unreachable = createRpcChain({ rpcUrl: 'http://127.0.0.1:9', maxAttempts: 1, timeoutMs: 500 });
    const t = await createTestApp({
      mints: createMintLookup(unreachable),
      solCosts: createSolCostEstimator({
        chain: unreachable,
        priorityFees: { floorMicroLamportsPerCu: 0n, capMicroLamportsPerCu: 0n, hopBudgetMultiplier: 1 },
      }),
    });
    try {
      const caller = await t.newCaller();
      const response = await caller.post('/api/v1/transfers/estimate', {
        tokenMint: SOL_MINT,
        amountRaw: '1000000000',
      });
      assert.equal(response.statusCode, 503);
      assert.equal(response.json().error.code, 'MH_091');
      assert.equal(response.headers['retry-after'], '5');
    } finally {
      await t.close();
    }
  });

  test('decimals fall back to 9 for the native mint and 6 otherwise (decision C4)', async () => {
    const unreachable = createRpcChain({ rpcUrl: 'http://127.0.0.1:9', maxAttempts: 1, timeoutMs: 500 });
    const t = await createTestApp({ mints: createMintLookup(unreachable) });
    try {
      const caller = await t.newCaller('test', UNLIMITED);
      const sol = await caller.post('/api/v1/transfers/estimate', {
        tokenMint: SOL_MINT,
        amountRaw: '1000000000',
      });
      assert.equal(sol.json().tokens.decimals, 9);
      const other = await caller.post('/api/v1/transfers/estimate', {
        tokenMint: await wallet(),
        amountRaw: '5000000',
        tokenPriceUsd: 1,
      });
      assert.equal(other.json().tokens.decimals, 6);
      const given = await caller.post('/api/v1/transfers/estimate', {
        tokenMint: await wallet(),
        amountRaw: '5000000000',
        tokenPriceUsd: 1,
        tokenDecimals: 9,
      });
      assert.equal(given.json().tokens.decimals, 9);
    } finally {
      await t.close();
    }
  });
});

describe('POST /transfers and reading transfers', () => {
  let t: TestApp;
  let caller: Caller;
  let usdc: Address;
  let source: Address;
  let recipient: Address;
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    usdc = await createMint(t.chain, { decimals: 6 });
    source = await wallet();
    recipient = await wallet();
  });
  after(() => t.close());

  const createBody = (extra: object = {}) => ({
    tokenMint: usdc,
    amountRaw: '250000000',
    amountTokens: '250',
    sourceOwner: source,
    recipientWallet: recipient,
    tokenPriceUsd: 1,
    ...extra,
  });

  test('creates a quote: the whole body, the row and its event', async () => {
    const response = await caller.post(
      '/api/v1/transfers',
      createBody({ externalId: 'order-1001', tokenSymbol: 'USDC', hops: 5 }),
    );
    assert.equal(response.statusCode, 200);
    const body = response.json();
    assert.match(body.supportBundleId, /^TR-[2-9A-HJ-NP-Z]{4}-[2-9A-HJ-NP-Z]{4}$/);
    assert.deepEqual(body, {
      id: body.id,
      externalId: 'order-1001',
      supportBundleId: body.supportBundleId,
      tokenMint: usdc,
      tokenSymbol: 'USDC',
      amountRaw: '250000000',
      amountTokens: '250',
      sourceOwner: source,
      recipientWallet: recipient,
      fundingStrategy: 'signed_bundle',
      hops: 5,
      arrivalSeconds: 600,
      pricingTier: 'standard',
      percentFeeBps: 100,
      totalFlatFeeLamports: 50000,
      status: 'quote',
      isTest: true,
      quotedAt: '2026-06-01T12:00:00.000Z',
      depositReceivedAt: null,
      completedAt: null,
      expiresAt: '2026-06-01T12:15:00.000Z',
      createdAt: '2026-06-01T12:00:00.000Z',
    });

    const { rows } = await t.database.db.query(
      `SELECT amount_raw, percent_fee_raw, net_delivered_raw, integrator_percent_share_raw, total_flat_fee_lamports,
              integrator_flat_share_lamports, token_decimals, token_price_usd, price_source, status, phase
         FROM transfers WHERE id = $1`,
      [body.id],
    );
    assert.deepEqual(rows, [
      {
        amount_raw: '250000000',
        percent_fee_raw: '2500000',
        net_delivered_raw: '247500000',
        integrator_percent_share_raw: '750000',
        total_flat_fee_lamports: '50000',
        integrator_flat_share_lamports: '15000',
        token_decimals: 6,
        token_price_usd: '1',
        price_source: 'client',
        status: 'quote',
        phase: 'quoted',
      },
    ]);

    const read = await caller.get(`/api/v1/transfers/${body.id}`);
    const extended = {
      ...body,
      phase: 'quoted',
      progress: { hopsCompleted: 0, hopsTotal: 5 },
      lastError: null,
      recovery: null,
      signatures: { routeInit: [], sessionInit: [], hops: [] },
    };
    assert.deepEqual(read.json(), extended);
    assert.deepEqual((await caller.get('/api/v1/transfers/by-external/order-1001')).json(), extended);

    const events = await t.database.db.query<{
      type: string;
      sequence: number;
      payload: Record<string, unknown>;
    }>('SELECT type, sequence, payload FROM events WHERE transfer_id = $1 ORDER BY sequence', [body.id]);
    assert.equal(events.rows.length, 1);
    const [event] = events.rows;
    assert.equal(event!.type, 'transfer.quote_created');
    assert.deepEqual(event!.payload, {
      id: event!.payload.id,
      type: 'transfer.quote_created',
      createdAt: '2026-06-01T12:00:00.000Z',
      isTest: true,
      apiVersion: 'v1',
      sequence: 1,
      data: { transfer: extended },
    });
    assert.match(String(event!.payload.id), /^evt_/);
  });

  test('amountTokens must equal amountRaw at the mint decimals; it is stored canonical', async () => {
    const equal = await caller.post(
      '/api/v1/transfers',
      createBody({ amountRaw: '1500000', amountTokens: '1.50' }),
    );
    assert.equal(equal.json().amountTokens, '1.5');
    const wrong = await caller.post(
      '/api/v1/transfers',
      createBody({ amountRaw: '1500001', amountTokens: '1.5' }),
    );
    assert.equal(wrong.statusCode, 400);
    assert.equal(wrong.json().error.code, 'MH_016');
    assert.equal(wrong.json().error.param, 'amountTokens');
    assert.match(wrong.json().error.message, /expected "1.500001"/);
  });

  test('validation codes: wallets MH_011, externalId MH_015, arrival MH_014/MH_016, hops MH_013', async () => {
    const error = async (extra: object) =>
      (await caller.post('/api/v1/transfers', createBody(extra))).json().error;
    const expectations: [object, string, string][] = [
      [{ sourceOwner: 'nope' }, 'MH_011', 'sourceOwner'],
      [{ recipientWallet: '0OIl0OIl0OIl0OIl0OIl0OIl0OIl0OIl' }, 'MH_011', 'recipientWallet'],
      [{ recipientWallet: 'So1111111111111111111111111111111111111111' }, 'MH_011', 'recipientWallet'],
      [{ externalId: 'has space' }, 'MH_015', 'externalId'],
      [{ externalId: 'x'.repeat(129) }, 'MH_015', 'externalId'],
      [{ externalId: '' }, 'MH_015', 'externalId'],
      [{ arrivalSeconds: 59 }, 'MH_014', 'arrivalSeconds'],
      [{ hops: 10, arrivalSeconds: 149 }, 'MH_014', 'arrivalSeconds'],
      [{ arrivalSeconds: 7 * 24 * 3600 + 1 }, 'MH_016', 'arrivalSeconds'],
      [{ hops: 1 }, 'MH_013', 'hops'],
      [{ amountTokens: 'one' }, 'MH_016', 'amountTokens'],
      [{ tokenSymbol: 'A-VERY-LONG-SYMBOL' }, 'MH_016', 'tokenSymbol'],
      [{ amountRaw: '500000', amountTokens: '0.5' }, 'MH_012', 'amountRaw'],
    ];
    for (const [extra, code, param] of expectations) {
      const got = await error(extra);
      assert.equal(got.code, code, JSON.stringify(extra));
      assert.equal(got.param, param, JSON.stringify(extra));
    }
    const missing = await caller.post('/api/v1/transfers', { tokenMint: usdc, amountRaw: '1' });
    assert.equal(missing.json().error.code, 'MH_016');
    assert.equal(missing.json().error.param, 'amountTokens');
    const minimum = await caller.post('/api/v1/transfers', createBody({ hops: 10, arrivalSeconds: 150 }));
    assert.equal(minimum.statusCode, 200);
  });

  test('default arrival is the integration setting, raised to the hop minimum', async () => {
    const quick = await t.newCaller('test', { ...UNLIMITED, defaultArrivalSeconds: 60 });
    const created = await quick.post('/api/v1/transfers', createBody({ hops: 10 }));
    assert.equal(created.json().arrivalSeconds, 150);
    const standard = await quick.post('/api/v1/transfers', createBody({ hops: 3 }));
    assert.equal(standard.json().arrivalSeconds, 60);
  });

  test('a repeated externalId returns the same transfer; other parameters are MH_033', async () => {
    const first = await caller.post('/api/v1/transfers', createBody({ externalId: 'order-2002' }));
    const again = await caller.post('/api/v1/transfers', createBody({ externalId: 'order-2002' }));
    assert.equal(again.statusCode, 200);
    assert.deepEqual(again.json(), first.json());
    const changed = await caller.post(
      '/api/v1/transfers',
      createBody({ externalId: 'order-2002', amountRaw: '260000000', amountTokens: '260' }),
    );
    assert.equal(changed.statusCode, 409);
    assert.equal(changed.json().error.code, 'MH_033');
    assert.equal(changed.json().error.param, 'externalId');
    const live = await t.createKey(caller.integrationId, 'live');
    const inLive = await t.app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: { 'x-api-key': live.key, 'idempotency-key': 'live-create-0001' },
      payload: createBody({ externalId: 'order-2002' }),
    });
    assert.equal(inLive.statusCode, 200, 'externalId is unique per mode');
    assert.notEqual(inLive.json().id, first.json().id);
    const count = await t.database.db.query(
      `SELECT count(*)::int AS n FROM transfers WHERE external_id = 'order-2002'`,
    );
    assert.deepEqual(count.rows, [{ n: 2 }]);
  });

  test('concurrent creates with one externalId make one transfer', async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        caller.post('/api/v1/transfers', createBody({ externalId: 'order-race' })),
      ),
    );
    const ids = new Set(responses.map((response) => response.json().id));
    assert.equal(ids.size, 1);
    for (const response of responses) assert.equal(response.statusCode, 200);
    const events = await t.database.db.query(
      `SELECT count(*)::int AS n FROM events e JOIN transfers t ON t.id = e.transfer_id WHERE t.external_id = 'order-race'`,
    );
    assert.deepEqual(events.rows, [{ n: 1 }]);
  });

  test('a change made elsewhere (another process, an operator) shows in the next read', async () => {
    const created = (await caller.post('/api/v1/transfers', createBody())).json();
    assert.equal((await caller.get(`/api/v1/transfers/${created.id}`)).json().status, 'quote');
    await t.database.db.query(`UPDATE transfers SET status = 'failed', phase = 'failed' WHERE id = $1`, [
      created.id,
    ]);
    assert.equal((await caller.get(`/api/v1/transfers/${created.id}`)).json().status, 'failed');
  });

  test('transfers of another integration or mode are MH_030', async () => {
    const mine = (await caller.post('/api/v1/transfers', createBody({ externalId: 'private-1' }))).json();
    const stranger = await t.newCaller();
    const live = await t.createKey(caller.integrationId, 'live');
    for (const response of [
      await stranger.get(`/api/v1/transfers/${mine.id}`),
      await stranger.get('/api/v1/transfers/by-external/private-1'),
      await t.app.inject({
        method: 'GET',
        url: `/api/v1/transfers/${mine.id}`,
        headers: { 'x-api-key': live.key },
      }),
    ]) {
      assert.equal(response.statusCode, 404);
      assert.equal(response.json().error.code, 'MH_030');
    }
  });

  test('an unknown transfer is MH_030 naming the parameter that was looked up', async () => {
    for (const [path, param, message] of [
      ['/api/v1/transfers/987654321', 'transferId', 'No transfer with id 987654321.'],
      [
        '/api/v1/transfers/by-external/no-such-order',
        'externalId',
        'No transfer with externalId "no-such-order".',
      ],
    ] as const) {
      const response = await caller.get(path);
      assert.equal(response.statusCode, 404);
      assert.deepEqual(response.json(), {
        error: { code: 'MH_030', message, requestId: response.headers['x-request-id'], param },
      });
    }
  });
});

describe('GET /transfers', () => {
  let t: TestApp;
  let caller: Caller;
  const created: { id: number; createdAt: string; supportBundleId: string }[] = [];
  before(async () => {
    t = await createTestApp();
    caller = await t.newCaller('test', UNLIMITED);
    const usdc = await createMint(t.chain, { decimals: 6 });
    const [source, recipient] = [await wallet(), await wallet()];
    for (let index = 0; index < 7; index++) {
      const response = await caller.post('/api/v1/transfers', {
        tokenMint: usdc,
        amountRaw: String(10_000_000 + index),
        amountTokens: (10 + index / 1_000_000).toFixed(6),
        sourceOwner: source,
        recipientWallet: recipient,
        tokenPriceUsd: 1,
        externalId: `list-${index}`,
      });
      created.push(response.json());
      t.clock.advance(60_000);
    }
    // Two created in the same instant: ties are broken by id, newest first.
    t.clock.advance(-60_000);
    created.push(
      (
        await caller.post('/api/v1/transfers', {
          tokenMint: usdc,
          amountRaw: '20000000',
          amountTokens: '20',
          sourceOwner: source,
          recipientWallet: recipient,
          tokenPriceUsd: 1,
        })
      ).json(),
    );
    await t.database.db.query(
      `UPDATE transfers SET status = 'completed', phase = 'settled' WHERE external_id IN ('list-1', 'list-4')`,
    );
    // Another integration's and mode's transfers never show up.
    const stranger = await t.newCaller();
    await stranger.post('/api/v1/transfers', {
      tokenMint: usdc,
      amountRaw: '10000000',
      amountTokens: '10',
      sourceOwner: source,
      recipientWallet: recipient,
      tokenPriceUsd: 1,
    });
  });
  after(() => t.close());

  const ids = async (query: string) => {
    const response = await caller.get(`/api/v1/transfers${query}`);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    return { ids: body.items.map((item: { id: number }) => item.id), pagination: body.pagination };
  };

  test('newest first with exact totals, limit and offset', async () => {
    const all = created.map((transfer) => transfer.id).reverse();
    // The last two share createdAt; the higher id comes first.
    const expected = [all[0], all[1], ...all.slice(2)];
    assert.deepEqual(await ids(''), {
      ids: expected,
      pagination: { total: 8, limit: 50, offset: 0, hasMore: false },
    });
    assert.deepEqual(await ids('?limit=3&offset=2'), {
      ids: expected.slice(2, 5),
      pagination: { total: 8, limit: 3, offset: 2, hasMore: true },
    });
    assert.deepEqual(await ids('?limit=3&offset=5'), {
      ids: expected.slice(5, 8),
      pagination: { total: 8, limit: 3, offset: 5, hasMore: false },
    });
    assert.deepEqual(await ids('?offset=20'), {
      ids: [],
      pagination: { total: 8, limit: 50, offset: 20, hasMore: false },
    });
  });

  test('filters combine with AND; fromDate inclusive, toDate exclusive', async () => {
    const completed = await ids('?status=completed');
    assert.deepEqual(completed.ids, [created[4]!.id, created[1]!.id]);
    assert.equal(completed.pagination.total, 2);
    const window = await ids(`?fromDate=${created[2]!.createdAt}&toDate=${created[5]!.createdAt}`);
    assert.deepEqual(window.ids, [created[4]!.id, created[3]!.id, created[2]!.id]);
    const both = await ids(`?status=completed&fromDate=${created[2]!.createdAt}`);
    assert.deepEqual(both.ids, [created[4]!.id]);
    assert.deepEqual((await ids('?externalId=list-3')).ids, [created[3]!.id]);
    assert.deepEqual((await ids(`?supportBundleId=${created[6]!.supportBundleId}`)).ids, [created[6]!.id]);
    assert.deepEqual((await ids('?externalId=unknown')).pagination.total, 0);
  });

  test('items are the extended shape', async () => {
    const response = (await caller.get('/api/v1/transfers?limit=1')).json();
    assert.deepEqual(Object.keys(response.items[0]).slice(-5), [
      'phase',
      'progress',
      'lastError',
      'recovery',
      'signatures',
    ]);
  });

  test('a settled transfer reports a recovery object (decision C1)', async () => {
    const settled = (await caller.get(`/api/v1/transfers/${created[1]!.id}`)).json();
    assert.deepEqual(settled.recovery, {
      canRescue: false,
      rescuableLamports: 0,
      rescuableAccounts: [],
      canReclaimRent: false,
      reclaimableLamports: 0,
    });
  });
});
