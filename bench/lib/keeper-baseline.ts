import { setTimeout as delay } from 'node:timers/promises';
import {
  type Address,
  appendTransactionMessageInstruction,
  createKeyPairSignerFromPrivateKeyBytes,
  createSolanaRpc,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import {
  setTransactionMessageComputeUnitPrice,
  updateOrAppendSetComputeUnitLimitInstruction,
} from '@solana-program/compute-budget';
import { decodeRoute } from '../../src/chain/router/accounts.ts';
import { COMPUTE_UNIT_LIMITS } from '../../src/chain/router/footprint.ts';
import { getExecuteStepAccounts, getExecuteStepInstruction } from '../../src/chain/router/instructions.ts';
import { findStepPda } from '../../src/chain/router/pda.ts';

/**
 * The keeper's hops done directly with `@solana/kit` against a JSON-RPC endpoint, with nothing of
 * the service around them (no store, no claims, no records): for each route, its account read once
 * (its hop accounts name each step's `from` and `to`), then hop after hop the same ExecuteStep
 * transaction the keeper sends (its compute-unit price and limit, signed by the route's keeper with
 * a fresh blockhash), sent and confirmed (its status read until it has one) before the next.
 * `concurrency` routes at a time, as one keeper worker advances them.
 */

/** A deployed route as the baseline needs it: its keeper's key and the price its hops pay. */
export interface BaselineRoute {
  address: Address;
  hops: number;
  keeperPrivateKey: Uint8Array;
  microLamportsPerCu: bigint;
}

export function createKeeperBaseline(rpcUrl: string, programAddress: Address) {
  const rpc = createSolanaRpc(rpcUrl);
  const commitment = 'confirmed';

  async function runRoute(route: BaselineRoute) {
    const keeper = await createKeyPairSignerFromPrivateKeyBytes(route.keeperPrivateKey);
    const { value } = await rpc.getAccountInfo(route.address, { encoding: 'base64', commitment }).send();
    const data = decodeRoute(Buffer.from(value!.data[0], 'base64'));
    for (let step = data.nextStep; step < route.hops; step++) {
      const [stepAddress] = await findStepPda(route.address, step, programAddress);
      const { value: lifetime } = await rpc.getLatestBlockhash({ commitment }).send();
      const transaction = await pipe(
        createTransactionMessage({ version: 0 }),
        (message) => setTransactionMessageFeePayerSigner(keeper, message),
        (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
        (message) =>
          appendTransactionMessageInstruction(
            getExecuteStepInstruction(
              {
                keeper,
                index: step,
                accounts: getExecuteStepAccounts(route.address, data, step, stepAddress),
              },
              programAddress,
            ),
            message,
          ),
        (message) => setTransactionMessageComputeUnitPrice(route.microLamportsPerCu, message),
        (message) => updateOrAppendSetComputeUnitLimitInstruction(COMPUTE_UNIT_LIMITS.executeStep, message),
        (message) => signTransactionMessageWithSigners(message),
      );
      const signature = getSignatureFromTransaction(transaction);
      await rpc
        .sendTransaction(getBase64EncodedWireTransaction(transaction), {
          encoding: 'base64',
          preflightCommitment: commitment,
        })
        .send();
      for (;;) {
        const { value: statuses } = await rpc.getSignatureStatuses([signature]).send();
        const status = statuses[0];
        if (status) {
          if (status.err)
            throw new Error(`hop ${step} of ${route.address} failed: ${JSON.stringify(status.err)}`);
          break;
        }
        await delay(10);
      }
    }
  }

  /** Runs every remaining hop of every route, `concurrency` routes at a time. */
  return async function run(routes: readonly BaselineRoute[], concurrency: number): Promise<void> {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < routes.length) await runRoute(routes[next++]!);
      }),
    );
  };
}
