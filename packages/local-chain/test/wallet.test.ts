// A wallet's view of the local endpoint: nothing but @solana/kit's RPC client pointed at it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  isSolanaError,
  type KeyPairSigner,
  lamports,
  type Rpc,
  type Signature,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type SolanaRpcApi,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenInstructionAsync,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { type LocalChain, startLocalChain } from '../src/index.ts';
import { manualClock, signTransaction, slotsMs } from '../src/testing.ts';
import { tempDir } from './helpers.ts';

const SOL = 1_000_000_000n;
const clock = manualClock(new Date('2026-03-01T12:00:00Z'));
let data: Awaited<ReturnType<typeof tempDir>>;
let local: LocalChain;
let rpc: Rpc<SolanaRpcApi>;

async function start() {
  local = await startLocalChain({ dataDir: data.dir, rpcPort: 0, clock, autoTick: false });
  rpc = createSolanaRpc(local.rpcUrl as string) as Rpc<SolanaRpcApi>;
}

before(async () => {
  data = await tempDir('wallet-chain');
  await start();
});

after(async () => {
  await local.close();
  await data.cleanup();
});

/** Polls getSignatureStatuses as a wallet does until the transaction is final. */
async function confirm(signature: Signature) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const { value } = await rpc.getSignatureStatuses([signature]).send();
    const status = value[0];
    if (status?.confirmationStatus === 'finalized') {
      assert.equal(status.err, null, `transaction ${signature} failed`);
      return status;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`transaction ${signature} was not confirmed`);
}

async function send(payer: KeyPairSigner, instructions: Parameters<typeof signTransaction>[1]) {
  const { value: lifetime } = await rpc.getLatestBlockhash().send();
  const tx = await signTransaction(payer, instructions, lifetime);
  const signature = await rpc.sendTransaction(tx.base64, { encoding: 'base64' }).send();
  assert.equal(signature, tx.signature);
  await confirm(signature);
  return signature;
}

test('a wallet airdrops, creates a mint and token accounts, transfers, and sees exact balances; restart keeps them', async () => {
  const payer = await generateKeyPairSigner();
  const recipient = await generateKeyPairSigner();
  const mint = await generateKeyPairSigner();

  const airdropSignature = await rpc.requestAirdrop(payer.address, lamports(10n * SOL)).send();
  await confirm(airdropSignature);
  assert.equal((await rpc.getBalance(payer.address).send()).value, 10n * SOL);

  const mintRent = await rpc.getMinimumBalanceForRentExemption(BigInt(getMintSize())).send();
  assert.equal(mintRent, 1_461_600n);
  await send(payer, [
    getCreateAccountInstruction({
      payer,
      newAccount: mint,
      lamports: mintRent,
      space: getMintSize(),
      programAddress: TOKEN_PROGRAM_ADDRESS,
    }),
    getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address }),
  ]);

  const [payerAta] = await findAssociatedTokenPda({
    owner: payer.address,
    mint: mint.address,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  const [recipientAta] = await findAssociatedTokenPda({
    owner: recipient.address,
    mint: mint.address,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  await send(payer, [
    await getCreateAssociatedTokenInstructionAsync({ payer, owner: payer.address, mint: mint.address }),
    await getCreateAssociatedTokenInstructionAsync({ payer, owner: recipient.address, mint: mint.address }),
  ]);
  const transferSignature = await send(payer, [
    getMintToInstruction({
      mint: mint.address,
      token: payerAta,
      mintAuthority: payer,
      amount: 1_000_000_000n,
    }),
    getTransferCheckedInstruction({
      source: payerAta,
      mint: mint.address,
      destination: recipientAta,
      authority: payer,
      amount: 123_456_789n,
      decimals: 6,
    }),
  ]);

  const ataRent = await rpc.getMinimumBalanceForRentExemption(165n).send();
  assert.equal(ataRent, 2_039_280n);
  // Fees: 2 signatures on the mint creation, 1 on each of the other two transactions.
  const expectedPayer = 10n * SOL - mintRent - 2n * ataRent - 10_000n - 5_000n - 5_000n;
  const expected = {
    payer: expectedPayer,
    payerTokens: { amount: '876543211', decimals: 6, uiAmount: 876.543211, uiAmountString: '876.543211' },
    recipientTokens: { amount: '123456789', decimals: 6, uiAmount: 123.456789, uiAmountString: '123.456789' },
  };
  const observe = async () => ({
    payer: (await rpc.getBalance(payer.address).send()).value,
    payerTokens: (await rpc.getTokenAccountBalance(payerAta).send()).value,
    recipientTokens: (await rpc.getTokenAccountBalance(recipientAta).send()).value,
  });
  assert.deepEqual(await observe(), expected);

  const { value: owned } = await rpc
    .getTokenAccountsByOwner(recipient.address, { mint: mint.address }, { encoding: 'jsonParsed' })
    .send();
  assert.equal(owned.length, 1);
  assert.equal(owned[0]?.pubkey, recipientAta);
  assert.deepEqual(owned[0]?.account.data.parsed.info, {
    isNative: false,
    mint: mint.address,
    owner: recipient.address,
    state: 'initialized',
    tokenAmount: expected.recipientTokens,
  });

  const landed = await rpc
    .getTransaction(transferSignature, { maxSupportedTransactionVersion: 0, encoding: 'json' })
    .send();
  assert.ok(landed);
  assert.equal(landed.meta?.err, null);
  assert.equal(landed.meta?.fee, 5_000n);
  assert.deepEqual(
    new Map(landed.meta?.postTokenBalances?.map((b) => [b.owner, b.uiTokenAmount.amount])),
    new Map([
      [payer.address, '876543211'],
      [recipient.address, '123456789'],
    ]),
  );

  // A transaction whose blockhash is 151 slots old is refused, with or without preflight.
  const { value: oldLifetime } = await rpc.getLatestBlockhash().send();
  const stale = await signTransaction(
    payer,
    [getTransferSolInstruction({ source: payer, destination: recipient.address, amount: lamports(1n) })],
    oldLifetime,
  );
  clock.advance(slotsMs(151));
  assert.equal((await rpc.getBlockHeight().send()) > oldLifetime.lastValidBlockHeight, true);
  assert.equal((await rpc.isBlockhashValid(oldLifetime.blockhash).send()).value, false);
  await assert.rejects(
    rpc.sendTransaction(stale.base64, { encoding: 'base64' }).send(),
    (error: unknown) =>
      isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE) &&
      isSolanaError(error.cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND) &&
      Array.isArray(error.context.logs),
  );
  const dropped = await rpc.sendTransaction(stale.base64, { encoding: 'base64', skipPreflight: true }).send();
  assert.equal(dropped, stale.signature);
  assert.deepEqual((await rpc.getSignatureStatuses([dropped]).send()).value, [null]);
  assert.deepEqual(await observe(), expected);

  // Restart on the same data directory: balances, history and time survive.
  const slotBefore = await rpc.getSlot().send();
  await local.close();
  await start();
  assert.deepEqual(await observe(), expected);
  assert.equal((await rpc.getSlot().send()) >= slotBefore, true);
  const again = await rpc
    .getSignatureStatuses([transferSignature], { searchTransactionHistory: true })
    .send();
  assert.equal(again.value[0]?.err, null);
  assert.equal(
    (
      await rpc
        .getTransaction(transferSignature, { maxSupportedTransactionVersion: 0, encoding: 'base64' })
        .send()
    )?.slot,
    landed.slot,
  );
  await send(payer, [
    getTransferSolInstruction({ source: payer, destination: recipient.address, amount: lamports(SOL) }),
  ]);
  assert.equal((await rpc.getBalance(recipient.address as Address).send()).value, SOL);
  assert.equal((await rpc.getBalance(payer.address).send()).value, expectedPayer - SOL - 5_000n);
});
