// Helpers for chain tests: build and sign transactions the way a wallet does, with @solana/kit.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  type Blockhash,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionEncoder,
  type Instruction,
  pipe,
  type Signature,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type TransactionSigner,
} from '@solana/kit';

/** A signed transaction in the forms tests need. */
export interface SignedTransaction {
  bytes: Uint8Array;
  base64: Base64EncodedWireTransaction;
  signature: Signature;
}

/** Builds and signs a v0 transaction paid by `payer` (extra signers come from the instructions). */
export async function signTransaction(
  payer: TransactionSigner,
  instructions: readonly Instruction[],
  lifetime: { blockhash: Blockhash | string; lastValidBlockHeight: bigint },
): Promise<SignedTransaction> {
  const tx = await pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: lifetime.blockhash as Blockhash, lastValidBlockHeight: lifetime.lastValidBlockHeight },
        m,
      ),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => signTransactionMessageWithSigners(m),
  );
  return {
    bytes: new Uint8Array(getTransactionEncoder().encode(tx)),
    base64: getBase64EncodedWireTransaction(tx),
    signature: getSignatureFromTransaction(tx),
  };
}

/** A fresh temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Milliseconds of `slots` slots at the default 400 ms per slot. */
export const slotsMs = (slots: number) => slots * 400;
