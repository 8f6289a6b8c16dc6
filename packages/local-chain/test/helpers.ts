// Helpers for the chain's own tests: temporary data directories, a wallet's view of the endpoint
// through @solana/kit's RPC client, closing a web3.js connection.
import { type EventEmitter, once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Address, createSolanaRpc, fetchEncodedAccount, type Signature } from '@solana/kit';
import { fetchSysvarClock } from '@solana/sysvars';
import type { Connection } from '@solana/web3.js';
import type { LocalChain } from '../src/index.ts';
import type { SignedTransaction } from '../src/testing.ts';

/** A fresh temporary directory, removed by the returned cleanup. */
export async function tempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Closes a web3.js 1.x Connection's WebSocket, which the library offers no way to: it would
 * reconnect to the chain once it stops; a close (code 1000) first is what ends it.
 */
export async function closeConnection(connection: Connection): Promise<void> {
  const socket = Reflect.get(connection, '_rpcWebSocket') as EventEmitter & { ready: boolean; close(): void };
  if (!socket.ready) return;
  const closed = once(socket, 'close');
  socket.close();
  await closed;
}

/** What a wallet reads of a local chain and sends to it, through @solana/kit's RPC client. */
export function walletOf(local: LocalChain) {
  const rpc = createSolanaRpc(local.rpcUrl);
  return {
    rpc,
    /** The Clock sysvar's slot, epoch and unix time. */
    async clock() {
      const { slot, epoch, unixTimestamp } = await fetchSysvarClock(rpc);
      return { slot, epoch, unixTimestamp };
    },
    balance: async (address: Address) => (await rpc.getBalance(address).send()).value,
    account: (address: Address) => fetchEncodedAccount(rpc, address),
    blockhash: async () => (await rpc.getLatestBlockhash().send()).value,
    send: (tx: SignedTransaction) => rpc.sendTransaction(tx.base64, { encoding: 'base64' }).send(),
    transaction: (signature: Signature) =>
      rpc.getTransaction(signature, { encoding: 'base64', maxSupportedTransactionVersion: 0 }).send(),
  };
}
