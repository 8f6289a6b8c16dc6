import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Blockhash, generateKeyPairSigner } from '@solana/kit';
import type { PlannedToken } from '../domain/rewards.ts';
import { rewardPayoutInstructions, signPayout } from './reward-payout.ts';
import { NATIVE_MINT_ADDRESS } from './router/accounts.ts';
import { findConfigPda } from './router/pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from './router/program.ts';

const LIFETIME = { blockhash: '11111111111111111111111111111111' as Blockhash, lastValidBlockHeight: 1n };

/** Whether a payout of the native mint (or not) and `spl` SPL mints fits one transaction. */
async function fits(input: { native: boolean; spl: number; createAccounts: boolean }): Promise<boolean> {
  const platformWallet = await generateKeyPairSigner();
  const [config] = await findConfigPda(ROUTER_PROGRAM_ADDRESS);
  const spl = await Promise.all(
    Array.from(
      { length: input.spl },
      async (): Promise<PlannedToken> => ({
        mint: (await generateKeyPairSigner()).address,
        amountRaw: 1n,
        createAccount: input.createAccounts,
        native: false,
      }),
    ),
  );
  const tokens = [
    ...(input.native
      ? [{ mint: NATIVE_MINT_ADDRESS, amountRaw: 1n, createAccount: false, native: true }]
      : []),
    ...spl,
  ];
  const instructions = await rewardPayoutInstructions({
    earnings: { programAddress: ROUTER_PROGRAM_ADDRESS, config, platformWallet },
    wallet: (await generateKeyPairSigner()).address,
    plan: { lamports: 5_000_000n, rentLamports: 0n, tokens, walletLamports: 5_000_000n },
    // As long as a claim's seed: `claim-` and 24 hex digits.
    seed: `claim-${'0'.repeat(24)}`,
    tokenAccountRent: 2_039_280n,
  });
  return (await signPayout(platformWallet, instructions, LIFETIME)) !== null;
}

test('one payout holds the native mint and three SPL mints whose accounts it creates, or five whose accounts exist', async () => {
  assert.equal(await fits({ native: true, spl: 3, createAccounts: true }), true);
  assert.equal(await fits({ native: true, spl: 4, createAccounts: true }), false);
  assert.equal(await fits({ native: true, spl: 5, createAccounts: false }), true);
  assert.equal(await fits({ native: true, spl: 6, createAccounts: false }), false);
  // Without the native mint: five SPL mints created, nine existing.
  assert.equal(await fits({ native: false, spl: 5, createAccounts: true }), true);
  assert.equal(await fits({ native: false, spl: 6, createAccounts: true }), false);
  assert.equal(await fits({ native: false, spl: 9, createAccounts: false }), true);
  assert.equal(await fits({ native: false, spl: 10, createAccounts: false }), false);
});
