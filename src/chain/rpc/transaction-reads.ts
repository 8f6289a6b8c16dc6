// Reads of transactions the chain has seen: where a signature stands, and a landed transaction.
import type { Address, Commitment, Lamports, Signature } from '@solana/kit';
import type {
  ChainTransaction,
  SignatureStatus,
  SignatureStatusReader,
  TransactionReader,
  TransactionTokenBalance,
} from '../types.ts';
import { inPages, type RpcClient } from './client.ts';
import { plainError } from './failures.ts';

const MAX_SIGNATURES_PER_CALL = 256;

/** Asks for a landed transaction in JSON, versioned transactions included. */
function requestTransaction(rpc: RpcClient['rpc'], signature: Signature, commitment: Commitment) {
  return rpc.getTransaction(signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment });
}

/** A landed transaction as `getTransaction` answers it. */
type LandedTransaction = NonNullable<Awaited<ReturnType<ReturnType<typeof requestTransaction>['send']>>>;

/** A token balance as the RPC lists it. */
interface RpcTokenBalance {
  accountIndex: number;
  mint: Address;
  owner?: Address;
  programId?: Address;
  uiTokenAmount: { amount: string; decimals: number };
}

/** Every program the transaction invoked, top level and CPI, in first-invocation order. */
function invokedPrograms(tx: LandedTransaction, keys: readonly Address[]): Address[] {
  const invoked: Address[] = [];
  const note = (index: number) => {
    const program = keys[index];
    if (program && !invoked.includes(program)) invoked.push(program);
  };
  tx.transaction.message.instructions.forEach((ix, i) => {
    note(ix.programIdIndex);
    for (const set of tx.meta?.innerInstructions ?? []) {
      if (set.index === i) for (const inner of set.instructions) note(inner.programIdIndex);
    }
  });
  return invoked;
}

function toChainTransaction(signature: Signature, tx: LandedTransaction): ChainTransaction {
  const meta = tx.meta;
  const loaded = meta?.loadedAddresses;
  const keys = [
    ...tx.transaction.message.accountKeys,
    ...(loaded?.writable ?? []),
    ...(loaded?.readonly ?? []),
  ] as Address[];
  const tokenBalance = (t: RpcTokenBalance): TransactionTokenBalance => ({
    accountIndex: t.accountIndex,
    account: keys[t.accountIndex] as Address,
    mint: t.mint,
    owner: t.owner ?? null,
    programAddress: t.programId ?? null,
    amount: BigInt(t.uiTokenAmount.amount),
    decimals: t.uiTokenAmount.decimals,
  });
  return {
    signature,
    slot: tx.slot,
    blockTime: tx.blockTime,
    err: plainError(meta?.err),
    logs: meta?.logMessages ?? [],
    invokedPrograms: invokedPrograms(tx, keys),
    fee: (meta?.fee ?? 0n) as Lamports,
    computeUnitsConsumed: meta?.computeUnitsConsumed ?? null,
    accountKeys: keys,
    preBalances: meta?.preBalances ?? [],
    postBalances: meta?.postBalances ?? [],
    preTokenBalances: (meta?.preTokenBalances ?? []).map(tokenBalance),
    postTokenBalances: (meta?.postTokenBalances ?? []).map(tokenBalance),
  };
}

/** The signature-status and transaction readers of the chain interface over an RPC client. */
export function createTransactionReads(client: RpcClient): SignatureStatusReader & TransactionReader {
  const { rpc, call, defaultCommitment } = client;
  return {
    async getSignatureStatuses(signatures, o) {
      return inPages(signatures, MAX_SIGNATURES_PER_CALL, (page) =>
        call(
          'getSignatureStatuses',
          (abortSignal) =>
            rpc
              .getSignatureStatuses(page, { searchTransactionHistory: o?.searchTransactionHistory ?? false })
              .send({ abortSignal }),
          o,
        ).then(({ value }) =>
          value.map(
            (status): SignatureStatus | null =>
              status && {
                slot: status.slot,
                err: plainError(status.err),
                confirmationStatus: status.confirmationStatus,
              },
          ),
        ),
      );
    },
    async getTransaction(signature, o) {
      // Only a confirmed transaction can be read: a `processed` default reads at `confirmed`.
      const commitment = defaultCommitment === 'processed' ? 'confirmed' : defaultCommitment;
      const tx = await call(
        'getTransaction',
        (abortSignal) => requestTransaction(rpc, signature, commitment).send({ abortSignal }),
        o,
      );
      return tx ? toChainTransaction(signature, tx) : null;
    },
  };
}
