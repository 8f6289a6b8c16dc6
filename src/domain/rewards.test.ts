import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Address } from '@solana/kit';
import { minimumClaimLamports, planClaim, type WalletFacts } from './rewards.ts';

const NATIVE = 'So11111111111111111111111111111111111111112' as Address;
const A = 'AAAA1111111111111111111111111111111111111111' as Address;
const B = 'BBBB1111111111111111111111111111111111111111' as Address;
const RENT = 2_039_280n;

const facts = (missing: Address[], walletExists = true): WalletFacts => ({
  walletExists,
  missingTokenAccounts: new Set(missing),
  tokenAccountRent: RENT,
  walletRentMinimum: 890_880n,
});
const token = (mint: Address, claimableRaw: bigint) => ({ mint, claimableRaw, native: mint === NATIVE });

test('a claim takes every lamport and every mint whose account exists; the native share goes with the lamports', () => {
  const plan = planClaim({
    claimableLamports: 1_500_000n,
    tokens: [token(B, 7n), token(NATIVE, 40n), token(A, 5n), token(A.replace('A', 'C') as Address, 0n)],
    facts: facts([]),
  });
  assert.deepEqual(plan, {
    lamports: 1_500_000n,
    rentLamports: 0n,
    tokens: [
      { mint: NATIVE, amountRaw: 40n, createAccount: false, native: true },
      { mint: A, amountRaw: 5n, createAccount: false, native: false },
      { mint: B, amountRaw: 7n, createAccount: false, native: false },
    ],
    walletLamports: 1_500_040n,
  });
});

test('a missing token account is created while the lamports cover its rent; a mint they do not cover stays claimable', () => {
  const plan = planClaim({
    claimableLamports: RENT + 1_000_000n,
    tokens: [token(A, 5n), token(B, 7n)],
    facts: facts([A, B]),
  });
  assert.deepEqual(plan, {
    lamports: RENT + 1_000_000n,
    rentLamports: RENT,
    tokens: [{ mint: A, amountRaw: 5n, createAccount: true, native: false }],
    walletLamports: 1_000_000n,
  });
  const both = planClaim({
    claimableLamports: 2n * RENT,
    tokens: [token(A, 5n), token(B, 7n)],
    facts: facts([A]),
  });
  assert.equal(both.rentLamports, RENT);
  assert.equal(both.walletLamports, RENT);
  assert.deepEqual(
    both.tokens.map((planned) => [planned.mint, planned.createAccount]),
    [
      [A, true],
      [B, false],
    ],
  );
});

test('a wallet that does not exist yet receives nothing or at least its rent-exempt minimum', () => {
  const tokens = [token(A, 5n)];
  // 100,000 lamports would be left: too little to open the wallet, so the mint waits.
  const short = planClaim({ claimableLamports: RENT + 100_000n, tokens, facts: facts([A], false) });
  assert.deepEqual(short.tokens, []);
  assert.equal(short.walletLamports, RENT + 100_000n);
  // Exactly the rent: the wallet receives no lamports, only its token account.
  const exact = planClaim({ claimableLamports: RENT, tokens, facts: facts([A], false) });
  assert.equal(exact.walletLamports, 0n);
  assert.equal(exact.tokens.length, 1);
  // A native share can make up the wallet's rent.
  const native = planClaim({
    claimableLamports: RENT + 100_000n,
    tokens: [...tokens, token(NATIVE, 800_000n)],
    facts: facts([A], false),
  });
  assert.equal(native.tokens.length, 2);
  assert.equal(native.walletLamports, 900_000n);
});

test('a claim limited in mints pays the native mint first, then in mint order', () => {
  const plan = planClaim({
    claimableLamports: 1_000_000n,
    tokens: [token(B, 7n), token(A, 5n), token(NATIVE, 1n)],
    facts: facts([]),
    maxMints: 2,
  });
  assert.deepEqual(
    plan.tokens.map((planned) => planned.mint),
    [NATIVE, A],
  );
});

test('the minimum of a claim is the integration’s setting, else the deployment’s', () => {
  assert.equal(minimumClaimLamports({}, 1_000_000n), 1_000_000n);
  assert.equal(minimumClaimLamports({ minimumClaimLamports: 3_000_000 }, 1_000_000n), 3_000_000n);
});
