// The contract of the Chain interface, run on the RPC client (createRpcChain) against the local
// endpoint: the same client production uses against a cluster.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  type Address,
  type Blockhash,
  generateKeyPairSigner,
  type KeyPairSigner,
  lamports,
  type Signature,
} from '@solana/kit';
import { getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
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
import { signTransaction, slotsMs } from '@transfer-router/local-chain/testing';
import { type ChainErrorCode, isChainError } from '../../src/chain/errors.ts';
import type { Chain } from '../../src/chain/types.ts';
import { createManualClock } from '../../src/domain/clock.ts';
import { startTestChain, type TestChain } from '../helpers/chain.ts';

const SOL = 1_000_000_000n;
const SYSTEM_PROGRAM = '11111111111111111111111111111111' as Address;
const ATA_PROGRAM = 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL' as Address;
const NATIVE_MINT = 'So11111111111111111111111111111111111111112' as Address;

function rejectsWith(
  code: ChainErrorCode,
  check?: (error: Parameters<typeof isChainError>[0] & object) => void,
) {
  return (error: unknown) => {
    assert.ok(isChainError(error), `expected a ChainError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    check?.(error);
    return true;
  };
}

describe('chain contract: the RPC client against the local endpoint', () => {
  const clock = createManualClock(new Date('2026-04-01T00:00:00Z'));
  /** Moves the chain's clock forward by `slots` slots. */
  const advanceSlots = (slots: number) => clock.advance(slotsMs(slots));
  let local: TestChain;
  let chain: Chain;

  before(async () => {
    local = await startTestChain({ clock, autoTick: false });
    chain = local.chain;
  });
  after(() => local.close());

  async function funded(sol = 10n): Promise<KeyPairSigner> {
    const signer = await generateKeyPairSigner();
    await local.cheats.airdrop(signer.address, sol * SOL);
    return signer;
  }

  async function transfer(
    from: KeyPairSigner,
    to: Address,
    amount: bigint,
    lifetime?: { blockhash: Blockhash; lastValidBlockHeight: bigint },
  ) {
    return signTransaction(
      from,
      [getTransferSolInstruction({ source: from, destination: to, amount: lamports(amount) })],
      lifetime ?? (await chain.getLatestBlockhash()),
    );
  }

  async function createMint(payer: KeyPairSigner, decimals: number): Promise<Address> {
    const mint = await generateKeyPairSigner();
    const tx = await signTransaction(
      payer,
      [
        getCreateAccountInstruction({
          payer,
          newAccount: mint,
          lamports: await chain.getMinimumBalanceForRentExemption(getMintSize()),
          space: getMintSize(),
          programAddress: TOKEN_PROGRAM_ADDRESS,
        }),
        getInitializeMint2Instruction({ mint: mint.address, decimals, mintAuthority: payer.address }),
      ],
      await chain.getLatestBlockhash(),
    );
    await chain.sendTransaction(tx.bytes);
    return mint.address;
  }

  test('rent figures come from the rent sysvar', async () => {
    assert.equal(await chain.getMinimumBalanceForRentExemption(0), 890_880n);
    assert.equal(await chain.getMinimumBalanceForRentExemption(82n), 1_461_600n);
    assert.equal(await chain.getMinimumBalanceForRentExemption(165), 2_039_280n);
  });

  test('mint decimals and fields are read from the mint account', async () => {
    assert.equal(await chain.getMintDecimals(NATIVE_MINT), 9);
    const payer = await funded();
    const mint = await createMint(payer, 6);
    assert.equal(await chain.getMintDecimals(mint), 6);
    assert.deepEqual(await chain.getMint(mint), {
      address: mint,
      programAddress: TOKEN_PROGRAM_ADDRESS,
      decimals: 6,
      supply: 0n,
      mintAuthority: payer.address,
      freezeAuthority: null,
    });
    const missing = (await generateKeyPairSigner()).address;
    await assert.rejects(
      chain.getMintDecimals(missing),
      rejectsWith('CHAIN_ACCOUNT_NOT_FOUND', (e) =>
        assert.equal((e as { retryable: boolean }).retryable, false),
      ),
    );
    await assert.rejects(chain.getMintDecimals(payer.address), rejectsWith('CHAIN_INVALID_ACCOUNT'));
    await assert.rejects(
      chain.getMintDecimals('not-an-address' as Address),
      rejectsWith('CHAIN_INVALID_ARGUMENT'),
    );
  });

  test('accounts and balances: missing is null / 0, present is exact, batches keep order', async () => {
    const wallet = await funded(3n);
    const missing = (await generateKeyPairSigner()).address;
    assert.equal(await chain.getAccount(missing), null);
    assert.equal(await chain.getBalance(missing), 0n);
    assert.equal(await chain.getBalance(wallet.address), 3n * SOL);
    const account = await chain.getAccount(wallet.address);
    assert.ok(account);
    assert.deepEqual(
      { ...account, data: [...account.data] },
      {
        address: wallet.address,
        data: [],
        executable: false,
        lamports: 3n * SOL,
        programAddress: SYSTEM_PROGRAM,
        space: 0n,
      },
    );
    const token = await chain.getAccount(TOKEN_PROGRAM_ADDRESS);
    assert.equal(token?.executable, true);
    const many = [...Array.from({ length: 120 }, () => missing), wallet.address, missing];
    const got = await chain.getAccounts(many);
    assert.equal(got.length, 122);
    assert.deepEqual(
      got.map((a) => a?.lamports ?? null),
      [...Array.from({ length: 120 }, () => null), 3n * SOL, null],
    );
  });

  test('blockhashes live 150 slots; block height follows slots; the clock sysvar follows time', async () => {
    const latest = await chain.getLatestBlockhash();
    const height = await chain.getBlockHeight();
    assert.equal(latest.lastValidBlockHeight, height + 150n);
    assert.equal(await chain.getSlot(), height);
    assert.equal(await chain.isBlockhashValid(latest.blockhash), true);
    assert.equal(await chain.isBlockhashValid('11111111111111111111111111111111' as Blockhash), false);
    const clockBefore = await chain.getClock();
    assert.equal(clockBefore.slot, height);
    advanceSlots(150);
    assert.equal(await chain.getBlockHeight(), height + 150n);
    assert.equal(await chain.isBlockhashValid(latest.blockhash), true);
    const clockAfter = await chain.getClock();
    assert.equal(clockAfter.slot, height + 150n);
    assert.equal(clockAfter.unixTimestamp - clockBefore.unixTimestamp, 60n); // 150 slots of 400 ms
    advanceSlots(1);
    assert.equal(await chain.isBlockhashValid(latest.blockhash), false);
    assert.notEqual((await chain.getLatestBlockhash()).blockhash, latest.blockhash);
  });

  test('a transfer lands, is final, and is recorded with fee, logs, programs and balances', async () => {
    const payer = await funded(2n);
    const to = await generateKeyPairSigner();
    const tx = await transfer(payer, to.address, SOL);
    assert.equal(await chain.sendTransaction(tx.bytes), tx.signature);
    const slot = await chain.getSlot();
    assert.deepEqual(await chain.getSignatureStatuses([tx.signature]), [
      { slot, err: null, confirmationStatus: 'finalized' },
    ]);
    const landed = await chain.getTransaction(tx.signature);
    assert.ok(landed);
    const clock = await chain.getClock();
    assert.deepEqual(landed, {
      signature: tx.signature,
      slot,
      blockTime: clock.unixTimestamp,
      err: null,
      logs: [
        'Program 11111111111111111111111111111111 invoke [1]',
        'Program 11111111111111111111111111111111 success',
      ],
      invokedPrograms: [SYSTEM_PROGRAM],
      fee: 5000n,
      computeUnitsConsumed: 150n,
      accountKeys: [payer.address, to.address, SYSTEM_PROGRAM],
      preBalances: [2n * SOL, 0n, 1n],
      postBalances: [SOL - 5000n, SOL, 1n],
      preTokenBalances: [],
      postTokenBalances: [],
    });
    assert.equal(await chain.getBalance(to.address), SOL);
    // Resending the same bytes is harmless: same signature, no second effect.
    assert.equal(await chain.sendTransaction(tx.base64), tx.signature);
    assert.equal(await chain.getBalance(to.address), SOL);
    assert.equal(await chain.getBalance(payer.address), SOL - 5000n);
  });

  test('a token transfer records token balances and every invoked program', async () => {
    const payer = await funded();
    const friend = await generateKeyPairSigner();
    const mint = await createMint(payer, 2);
    const [source] = await findAssociatedTokenPda({
      owner: payer.address,
      mint,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const [destination] = await findAssociatedTokenPda({
      owner: friend.address,
      mint,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const setupTx = await signTransaction(
      payer,
      [
        await getCreateAssociatedTokenInstructionAsync({ payer, owner: payer.address, mint }),
        await getCreateAssociatedTokenInstructionAsync({ payer, owner: friend.address, mint }),
        getMintToInstruction({ mint, token: source, mintAuthority: payer, amount: 10_000n }),
      ],
      await chain.getLatestBlockhash(),
    );
    await chain.sendTransaction(setupTx.bytes);
    const setup = await chain.getTransaction(setupTx.signature);
    assert.deepEqual(setup?.invokedPrograms, [ATA_PROGRAM, TOKEN_PROGRAM_ADDRESS, SYSTEM_PROGRAM]);
    const tx = await signTransaction(
      payer,
      [
        getTransferCheckedInstruction({
          source,
          mint,
          destination,
          authority: payer,
          amount: 2_550n,
          decimals: 2,
        }),
      ],
      await chain.getLatestBlockhash(),
    );
    await chain.sendTransaction(tx.bytes);
    const landed = await chain.getTransaction(tx.signature);
    const balances = (
      list: readonly {
        account: Address;
        owner: Address | null;
        mint: Address;
        amount: bigint;
        decimals: number;
      }[] = [],
    ) =>
      list.map(({ account, owner, mint: m, amount, decimals }) => ({
        account,
        owner,
        mint: m,
        amount,
        decimals,
      }));
    const byAccount = <T extends { account: Address }>(list: T[]) =>
      [...list].sort((a, b) => (a.account < b.account ? -1 : 1));
    assert.deepEqual(
      byAccount(balances(landed?.preTokenBalances)),
      byAccount([
        { account: source, owner: payer.address, mint, amount: 10_000n, decimals: 2 },
        { account: destination, owner: friend.address, mint, amount: 0n, decimals: 2 },
      ]),
    );
    assert.deepEqual(
      byAccount(balances(landed?.postTokenBalances)),
      byAccount([
        { account: source, owner: payer.address, mint, amount: 7_450n, decimals: 2 },
        { account: destination, owner: friend.address, mint, amount: 2_550n, decimals: 2 },
      ]),
    );
    assert.deepEqual(landed?.invokedPrograms, [TOKEN_PROGRAM_ADDRESS]);
    assert.deepEqual(await chain.getTokenAccountBalance(destination), { amount: 2_550n, decimals: 2 });
    assert.deepEqual(await chain.getTokenAccount(destination), {
      address: destination,
      programAddress: TOKEN_PROGRAM_ADDRESS,
      mint,
      owner: friend.address,
      amount: 2_550n,
      delegate: null,
      delegatedAmount: 0n,
      state: 'initialized',
      closeAuthority: null,
      isNative: null,
    });
    assert.equal(await chain.getTokenAccount(friend.address), null);
    await assert.rejects(
      chain.getTokenAccountBalance(friend.address),
      rejectsWith('CHAIN_ACCOUNT_NOT_FOUND'),
    );
    await assert.rejects(chain.getTokenAccountBalance(payer.address), rejectsWith('CHAIN_INVALID_ACCOUNT'));
  });

  test('preflight refuses a failing transaction without charging a fee', async () => {
    const payer = await funded(1n);
    const tx = await transfer(payer, (await generateKeyPairSigner()).address, 5n * SOL);
    await assert.rejects(
      chain.sendTransaction(tx.bytes),
      rejectsWith('CHAIN_PREFLIGHT_FAILED', (e) => {
        const { context } = e as { context: { transactionError?: unknown; logs?: readonly string[] } };
        assert.deepEqual(context.transactionError, { InstructionError: [0, { Custom: 1 }] });
        assert.deepEqual(context.logs, [
          'Program 11111111111111111111111111111111 invoke [1]',
          `Transfer: insufficient lamports ${SOL - 5000n}, need ${5n * SOL}`,
          'Program 11111111111111111111111111111111 failed: custom program error: 0x1',
        ]);
      }),
    );
    assert.equal(await chain.getBalance(payer.address), SOL);
    assert.deepEqual(await chain.getSignatureStatuses([tx.signature]), [null]);
  });

  test('without preflight a failing transaction lands with its error and pays the fee', async () => {
    const payer = await funded(1n);
    const tx = await transfer(payer, (await generateKeyPairSigner()).address, 5n * SOL);
    assert.equal(await chain.sendTransaction(tx.bytes, { skipPreflight: true }), tx.signature);
    const [status] = await chain.getSignatureStatuses([tx.signature]);
    assert.deepEqual(status?.err, { InstructionError: [0, { Custom: 1 }] });
    const landed = await chain.getTransaction(tx.signature);
    assert.deepEqual(landed?.err, { InstructionError: [0, { Custom: 1 }] });
    assert.equal(landed?.fee, 5000n);
    assert.equal(await chain.getBalance(payer.address), SOL - 5000n);
  });

  test('an expired blockhash is refused; so are bad signatures and malformed bytes', async () => {
    const payer = await funded(1n);
    const lifetime = await chain.getLatestBlockhash();
    const stale = await transfer(payer, (await generateKeyPairSigner()).address, SOL / 10n, lifetime);
    advanceSlots(151);
    await assert.rejects(
      chain.sendTransaction(stale.bytes),
      rejectsWith('CHAIN_BLOCKHASH_NOT_FOUND', (e) =>
        assert.equal(
          (e as { context: { transactionError?: unknown } }).context.transactionError,
          'BlockhashNotFound',
        ),
      ),
    );
    assert.equal(await chain.getBalance(payer.address), SOL);

    const fresh = await transfer(payer, (await generateKeyPairSigner()).address, SOL / 10n);
    const tampered = fresh.bytes.slice();
    tampered[10] = (tampered[10] as number) ^ 0xff;
    await assert.rejects(chain.sendTransaction(tampered), rejectsWith('CHAIN_SIGNATURE_INVALID'));
    await assert.rejects(
      chain.sendTransaction(Uint8Array.of(1, 2, 3)),
      rejectsWith('CHAIN_INVALID_ARGUMENT'),
    );
    assert.equal(await chain.getBalance(payer.address), SOL);
  });

  test('simulation reports logs and units without changing state, and can replace the blockhash', async () => {
    const payer = await funded(1n);
    const to = (await generateKeyPairSigner()).address;
    const lifetime = await chain.getLatestBlockhash();
    const tx = await transfer(payer, to, SOL / 2n, lifetime);
    const result = await chain.simulateTransaction(tx.bytes);
    assert.deepEqual(result, {
      err: null,
      logs: [
        'Program 11111111111111111111111111111111 invoke [1]',
        'Program 11111111111111111111111111111111 success',
      ],
      unitsConsumed: 150n,
      returnData: null,
      replacementBlockhash: null,
    });
    assert.equal(await chain.getBalance(to), 0n);
    advanceSlots(200);
    assert.equal((await chain.simulateTransaction(tx.base64)).err, 'BlockhashNotFound');
    const replaced = await chain.simulateTransaction(tx.bytes, { replaceRecentBlockhash: true });
    assert.equal(replaced.err, null);
    assert.deepEqual(replaced.replacementBlockhash, await chain.getLatestBlockhash());
    const fresh = await transfer(payer, to, SOL / 2n);
    assert.equal((await chain.simulateTransaction(fresh.bytes, { sigVerify: true })).err, null);
    const tampered = fresh.bytes.slice();
    tampered[10] = (tampered[10] as number) ^ 0xff;
    await assert.rejects(
      chain.simulateTransaction(tampered, { sigVerify: true }),
      rejectsWith('CHAIN_SIGNATURE_INVALID'),
    );
    assert.equal((await chain.simulateTransaction(tampered)).err, null);
  });

  test('statuses of unknown signatures are null, in order, for any number of signatures', async () => {
    const payer = await funded(1n);
    const tx = await transfer(payer, (await generateKeyPairSigner()).address, SOL / 10n);
    await chain.sendTransaction(tx.bytes);
    const unknown = '1111111111111111111111111111111111111111111111111111111111111111' as Signature;
    const statuses = await chain.getSignatureStatuses([
      ...Array.from({ length: 300 }, () => unknown),
      tx.signature,
    ]);
    assert.equal(statuses.length, 301);
    assert.equal(statuses.filter((s) => s === null).length, 300);
    assert.equal(statuses[300]?.err, null);
    assert.equal(await chain.getTransaction(unknown), null);
  });

  test('recent prioritization fees: one per recent slot, in micro-lamports; bad addresses are refused', async () => {
    const payer = await funded(1n);
    advanceSlots(1);
    const priced = await signTransaction(
      payer,
      [
        getSetComputeUnitPriceInstruction({ microLamports: 12_345n }),
        getTransferSolInstruction({ source: payer, destination: payer.address, amount: lamports(1n) }),
      ],
      await chain.getLatestBlockhash(),
    );
    await chain.sendTransaction(priced.bytes);
    const slot = await chain.getSlot();
    const fees = await chain.getRecentPrioritizationFees([payer.address, SYSTEM_PROGRAM]);
    assert.deepEqual(fees.at(-1), { slot, prioritizationFee: 12_345n });
    assert.deepEqual(
      fees.map((fee) => fee.slot),
      Array.from({ length: fees.length }, (_, index) => slot - BigInt(fees.length - 1 - index)),
    );
    await assert.rejects(
      chain.getRecentPrioritizationFees(['not-an-address' as Address]),
      rejectsWith('CHAIN_INVALID_ARGUMENT'),
    );
    await assert.rejects(
      chain.getRecentPrioritizationFees(Array.from({ length: 129 }, () => payer.address)),
      rejectsWith('CHAIN_INVALID_ARGUMENT'),
    );
  });

  test('an aborted signal stops the call with a final error', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(
      chain.getBalance(SYSTEM_PROGRAM, { signal: controller.signal }),
      rejectsWith('CHAIN_ABORTED', (e) => assert.equal((e as { retryable: boolean }).retryable, false)),
    );
  });
});
