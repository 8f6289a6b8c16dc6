// Reads of the chain's progress: blockhashes, block height, slot and the Clock sysvar.
import type { Blockhash } from '@solana/kit';
import { CLOCK_SYSVAR, decodeClockAccount } from '../accounts.ts';
import type { AccountReader, BlockHeightReader, BlockhashReader, ClockReader } from '../types.ts';
import type { RpcClient } from './client.ts';

/** The block and clock readers of the chain interface over an RPC client (the clock is an account). */
export function createBlockReads(
  client: RpcClient,
  accounts: Pick<AccountReader, 'getAccount'>,
): BlockhashReader & BlockHeightReader & ClockReader {
  const { rpc, call, commitmentOf } = client;
  return {
    async getLatestBlockhash(o) {
      const { value } = await call(
        'getLatestBlockhash',
        (abortSignal) => rpc.getLatestBlockhash({ commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
      return { blockhash: value.blockhash, lastValidBlockHeight: value.lastValidBlockHeight };
    },
    async isBlockhashValid(blockhash: Blockhash, o) {
      const { value } = await call(
        'isBlockhashValid',
        (abortSignal) =>
          rpc.isBlockhashValid(blockhash, { commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
      return value;
    },
    async getBlockHeight(o) {
      return call(
        'getBlockHeight',
        (abortSignal) => rpc.getBlockHeight({ commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
    },
    async getSlot(o) {
      return call(
        'getSlot',
        (abortSignal) => rpc.getSlot({ commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
    },
    async getClock(o) {
      return decodeClockAccount(await accounts.getAccount(CLOCK_SYSVAR, o));
    },
  };
}
