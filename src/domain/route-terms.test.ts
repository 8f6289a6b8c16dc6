import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Address } from '@solana/kit';
import {
  type OnChainRouteTerms,
  type PreparedRouteTerms,
  unquotedRouteMessage,
  unquotedTerm,
} from './route-terms.ts';

const a = (name: string) => `${name}1111111111111111111111111111111111111`.slice(0, 44) as Address;

const prepared: PreparedRouteTerms = {
  mint: a('Mint'),
  amount: 123_456_789n,
  hopCount: 3,
  percentFeeBps: 100,
  integratorShareBps: 0,
  flatFeePerHopLamports: 10_000n,
  firstReleaseAt: 1_000n,
  intervalSecs: 200,
  deadlineAt: 5_000n,
  keeper: a('Keeper'),
  recipient: a('Recipient'),
  recipientToken: a('RecipientToken'),
  platformWallet: a('Config'),
  platformFeeToken: a('ConfigToken'),
  integratorWallet: a('Config'),
  integratorFeeToken: a('ConfigToken'),
  screeningRequired: false,
  maxDepositLamports: 0n,
};

/** The route the program creates from `terms`: 1% of 123,456,789 rounded up is 1,234,568. */
function created(terms: PreparedRouteTerms = prepared): OnChainRouteTerms {
  const fee = (terms.amount * BigInt(terms.percentFeeBps) + 9_999n) / 10_000n;
  const integratorFee = (fee * BigInt(terms.integratorShareBps)) / 10_000n;
  const flat = terms.flatFeePerHopLamports * BigInt(terms.hopCount);
  const integratorFlat = (flat * BigInt(terms.integratorShareBps)) / 10_000n;
  return {
    mint: terms.mint,
    amount: terms.amount,
    netAmount: terms.amount - fee,
    platformFeeTokens: fee - integratorFee,
    integratorFeeTokens: integratorFee,
    platformFlatLamports: flat - integratorFlat,
    integratorFlatLamports: integratorFlat,
    hopCount: terms.hopCount,
    firstReleaseAt: terms.firstReleaseAt,
    intervalSecs: BigInt(terms.intervalSecs),
    deadlineAt: terms.deadlineAt,
    keeper: terms.keeper,
    recipient: terms.recipient,
    recipientToken: terms.recipientToken,
    platformWallet: terms.platformWallet,
    platformFeeToken: terms.platformFeeToken,
    integratorWallet: terms.integratorWallet,
    integratorFeeToken: terms.integratorFeeToken,
    screening: terms.screeningRequired ? 'pending' : 'none',
    depositLamports: terms.screeningRequired ? terms.maxDepositLamports : 0n,
  };
}

test('the route a prepare quoted is that route; so is a native route with no recipient token account', () => {
  assert.equal(unquotedTerm([prepared], created()), null);
  const native = { ...prepared, recipientToken: null };
  assert.equal(unquotedTerm([native], created(native)), null);
  const screened = { ...prepared, screeningRequired: true, maxDepositLamports: 2_000_000n };
  assert.equal(unquotedTerm([screened], created(screened)), null);
});

test('each term a creator can choose is named when it differs', () => {
  const cases: [string, Partial<PreparedRouteTerms>][] = [
    ['mint', { mint: a('Other') }],
    ['amount', { amount: 1n }],
    ['hop count', { hopCount: 5 }],
    ['recipient', { recipient: a('Thief'), recipientToken: a('ThiefToken') }],
    ['recipient token account', { recipientToken: a('OtherToken') }],
    ['percentage fee', { percentFeeBps: 0, flatFeePerHopLamports: 0n }],
    ['flat fee', { flatFeePerHopLamports: 0n }],
    ["integrator's share of the percentage fee", { integratorShareBps: 10_000 }],
    ['first release', { firstReleaseAt: 1n }],
    ['interval', { intervalSecs: 1 }],
    ['deadline', { deadlineAt: 99_999n }],
    ['keeper', { keeper: a('OtherKeeper') }],
    ['platform fee destination', { platformWallet: a('Thief') }],
    ['platform fee token account', { platformFeeToken: a('ThiefToken') }],
    ['integrator wallet', { integratorWallet: a('Thief') }],
    ['integrator fee token account', { integratorFeeToken: a('ThiefToken') }],
    ['screening', { screeningRequired: true, maxDepositLamports: 2_000_000n }],
  ];
  for (const [term, change] of cases) {
    const difference = unquotedTerm([prepared], created({ ...prepared, ...change }));
    assert.equal(difference?.term, term, `${term}: ${JSON.stringify(difference)}`);
  }
  assert.deepEqual(unquotedTerm([prepared], created({ ...prepared, intervalSecs: 1 })), {
    term: 'interval',
    quoted: '200',
    found: '1',
  });
});

test('screening off on a screening cluster, and a deposit above the agreed maximum, are named', () => {
  const screened = { ...prepared, screeningRequired: true, maxDepositLamports: 2_000_000n };
  assert.equal(unquotedTerm([screened], created(prepared))?.term, 'screening');
  assert.deepEqual(unquotedTerm([screened], { ...created(screened), depositLamports: 2_000_001n }), {
    term: 'screening deposit',
    quoted: 'at most 2000000 lamports',
    found: '2000001 lamports',
  });
  // Less than the maximum (the config lowered it since) is within what the source agreed to.
  assert.equal(unquotedTerm([screened], { ...created(screened), depositLamports: 1n }), null);
});

test('a route matching any prepare is that route; otherwise the closest prepare names the difference', () => {
  const later = { ...prepared, firstReleaseAt: 1_100n, deadlineAt: 5_100n };
  assert.equal(unquotedTerm([prepared, later], created(prepared)), null);
  assert.equal(unquotedTerm([prepared, later], created(later)), null);
  // The earlier prepare's schedule with another recipient: named against that prepare.
  const stolen = created({ ...prepared, recipient: a('Thief'), recipientToken: a('ThiefToken') });
  assert.equal(unquotedTerm([later, prepared], stolen)?.term, 'recipient');
  assert.deepEqual(unquotedTerm([], created()), {
    term: 'route',
    quoted: 'none prepared',
    found: 'a route on chain',
  });
});

test('the message names the term and what the source can do', () => {
  assert.equal(
    unquotedRouteMessage({ term: 'recipient', quoted: 'A', found: 'B' }),
    "The route on chain is not the one quoted: its recipient is B, the quote's A. It is not run; the source can rescue everything it holds once the program allows it.",
  );
});
