// Sending and simulating signed transactions, and the recent fees that price their compute units.
import { type Base64EncodedWireTransaction, getBase58Decoder, type Signature } from '@solana/kit';
import { ChainError } from '../errors.ts';
import type {
  PriorityFeeReader,
  TransactionSender,
  TransactionSimulator,
  WireTransactionInput,
} from '../types.ts';
import type { RpcClient } from './client.ts';
import { plainError } from './failures.ts';

function wireBase64(transaction: WireTransactionInput): Base64EncodedWireTransaction {
  return typeof transaction === 'string'
    ? transaction
    : (Buffer.from(transaction.buffer, transaction.byteOffset, transaction.byteLength).toString(
        'base64',
      ) as Base64EncodedWireTransaction);
}

function firstSignature(transaction: WireTransactionInput): Signature {
  const bytes = typeof transaction === 'string' ? Buffer.from(transaction, 'base64') : transaction;
  // One byte of signature count (any transaction has fewer than 128 signatures), then the first.
  return getBase58Decoder().decode(bytes.subarray(1, 65)) as Signature;
}

/** The sender, simulator and priority-fee reader of the chain interface over an RPC client. */
export function createTransactionSends(
  client: RpcClient,
): TransactionSender & TransactionSimulator & PriorityFeeReader {
  const { rpc, call, defaultCommitment } = client;
  return {
    async sendTransaction(transaction, o) {
      const wire = wireBase64(transaction);
      try {
        return await call(
          'sendTransaction',
          (abortSignal) =>
            rpc
              .sendTransaction(wire, {
                encoding: 'base64',
                skipPreflight: o?.skipPreflight ?? false,
                preflightCommitment: o?.preflightCommitment ?? defaultCommitment,
              })
              .send({ abortSignal }),
          o,
        );
      } catch (error) {
        // The bytes already landed (a resend): that is success for the sender.
        if (error instanceof ChainError && error.context.transactionError === 'AlreadyProcessed') {
          return firstSignature(transaction);
        }
        throw error;
      }
    },
    async simulateTransaction(transaction, o) {
      const wire = wireBase64(transaction);
      const { value } = await call(
        'simulateTransaction',
        (abortSignal) =>
          rpc
            .simulateTransaction(wire, {
              encoding: 'base64',
              sigVerify: o?.sigVerify ?? false,
              replaceRecentBlockhash: o?.replaceRecentBlockhash ?? false,
              commitment: defaultCommitment,
            } as Parameters<typeof rpc.simulateTransaction>[1] & { encoding: 'base64' })
            .send({ abortSignal }),
        o,
      );
      return {
        err: plainError(value.err),
        logs: value.logs ?? [],
        unitsConsumed: value.unitsConsumed ?? null,
        returnData: value.returnData && {
          programAddress: value.returnData.programId,
          data: new Uint8Array(Buffer.from(value.returnData.data[0], 'base64')),
        },
        replacementBlockhash: value.replacementBlockhash ?? null,
      };
    },
    async getRecentPrioritizationFees(addresses, o) {
      const fees = await call(
        'getRecentPrioritizationFees',
        (abortSignal) => rpc.getRecentPrioritizationFees(addresses).send({ abortSignal }),
        o,
      );
      return fees.map(({ slot, prioritizationFee }) => ({ slot, prioritizationFee }));
    },
  };
}
