// The chain interface over any Solana JSON-RPC endpoint, built on @solana/kit's RPC client. Adds
// what a service needs on top of it: a timeout per attempt, retries with jittered exponential
// backoff on transient failures only (timeouts, 429, 5xx, unreachable node, node behind), and one
// error type with stable codes (ChainError) for every failure. The client and its retries are in
// rpc/client.ts, the error translation in rpc/failures.ts, the methods grouped by what they read
// or do in the other modules of rpc/.
import { createAccountReads } from './rpc/accounts.ts';
import { createBlockReads } from './rpc/blocks.ts';
import { createRpcClient, type RpcChainOptions } from './rpc/client.ts';
import { createTransactionReads } from './rpc/transaction-reads.ts';
import { createTransactionSends } from './rpc/transaction-sends.ts';
import type { Chain } from './types.ts';

export type { RpcChainOptions } from './rpc/client.ts';

/** Creates the chain interface over a JSON-RPC endpoint. */
export function createRpcChain(options: RpcChainOptions): Chain {
  const client = createRpcClient(options);
  const accounts = createAccountReads(client);
  return {
    ...accounts,
    ...createBlockReads(client, accounts),
    ...createTransactionReads(client),
    ...createTransactionSends(client),
  };
}
