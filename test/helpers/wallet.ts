import { type EventEmitter, once } from 'node:events';
import {
  type Base64EncodedWireTransaction,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  type Signature,
  type Transaction,
} from '@solana/kit';
import {
  type Connection,
  type Keypair,
  Transaction as LegacyTransaction,
  VersionedTransaction,
} from '@solana/web3.js';
import type { TransactionSender } from '../../src/chain/types.ts';

/** What prepare answers as `preparedTxs`. */
export interface Bundle {
  keeperFundingTx: string | null;
  routeInitTxs: { base64: string }[];
  orchestratorInitTx: string | null;
  sessionInitTxs: string[];
  recentBlockhash: string;
  lastValidBlockHeight: number;
  resume: Record<string, unknown> & { nothingToDo: boolean };
}

/** The bundle's groups in broadcast order, with the confirm-broadcast field each one's signature goes to. */
export type Group = 'keeperFunding' | 'routeInit' | 'orchestratorInit' | 'sessionInit';

/** Signs a wire transaction from the service the way a wallet does: adds the wallet's signature. */
export async function signAsWallet(wallet: KeyPairSigner, base64: string): Promise<Transaction> {
  // Bundle transactions carry a blockhash lifetime and fit the size limit; the decoder cannot know.
  const transaction = getTransactionDecoder().decode(getBase64Encoder().encode(base64)) as Parameters<
    KeyPairSigner['signTransactions']
  >[0][number];
  const [signatures] = await wallet.signTransactions([transaction]);
  return { ...transaction, signatures: { ...transaction.signatures, ...signatures } } as Transaction;
}

/** The signatures of a broadcast, in the shape confirm-broadcast takes. */
export interface BroadcastSignatures {
  keeperFundingSignature?: Signature;
  routeInitSignatures: Signature[];
  orchestratorInitSignature?: Signature;
  sessionInitSignatures?: Signature[];
}

/**
 * Sends a bundle's groups in broadcast order with `send` (told whether the transaction is the
 * legacy one), stopping after `through` when given; answers the signatures of what was sent.
 */
async function sendGroups(
  bundle: Bundle,
  send: (base64: string, version: 0 | 'legacy') => Promise<Signature>,
  through?: Group,
): Promise<BroadcastSignatures> {
  const sent: BroadcastSignatures = { routeInitSignatures: [] };
  if (bundle.keeperFundingTx) sent.keeperFundingSignature = await send(bundle.keeperFundingTx, 0);
  if (through === 'keeperFunding') return sent;
  for (const { base64 } of bundle.routeInitTxs) sent.routeInitSignatures.push(await send(base64, 0));
  if (through === 'routeInit') return sent;
  if (bundle.orchestratorInitTx)
    sent.orchestratorInitSignature = await send(bundle.orchestratorInitTx, 'legacy');
  if (through === 'orchestratorInit') return sent;
  if (bundle.sessionInitTxs.length > 0) {
    sent.sessionInitSignatures = [];
    for (const base64 of bundle.sessionInitTxs) sent.sessionInitSignatures.push(await send(base64, 0));
  }
  return sent;
}

/**
 * Signs and broadcasts a bundle's groups in order, as an integrator's wallet does, stopping after
 * `through` when given (`skipPreflight` lets a failing transaction land). Answers the signatures
 * of what was sent.
 */
export async function broadcastBundle(
  chain: TransactionSender,
  wallet: KeyPairSigner,
  bundle: Bundle,
  options: { through?: Group; skipPreflight?: boolean } = {},
): Promise<BroadcastSignatures> {
  return sendGroups(
    bundle,
    async (base64) => {
      const signed = await signAsWallet(wallet, base64);
      await chain.sendTransaction(getBase64EncodedWireTransaction(signed) as Base64EncodedWireTransaction, {
        skipPreflight: options.skipPreflight ?? false,
      });
      return getSignatureFromTransaction(signed);
    },
    options.through,
  );
}

/**
 * Signs and broadcasts a bundle's groups in order with @solana/web3.js 1.x, as wallets built on it
 * do: each v0 transaction deserialized and signed, the legacy one read with `Transaction.from` and
 * signed with `partialSign` (keeps the signatures it carries) or `sign` (recompiles and signs
 * anew), each simulated first as a wallet's preview, sent raw and confirmed with the bundle's blockhash and last valid block height before
 * the next. Answers the signatures of what was sent.
 */
export async function broadcastWithWeb3js(
  connection: Connection,
  wallet: Keypair,
  bundle: Bundle,
  options: { through?: Group; legacySigning?: 'partialSign' | 'sign' } = {},
): Promise<BroadcastSignatures> {
  const lifetime = { blockhash: bundle.recentBlockhash, lastValidBlockHeight: bundle.lastValidBlockHeight };
  return sendGroups(
    bundle,
    async (base64, version) => {
      const bytes = Buffer.from(base64, 'base64');
      let wire: Uint8Array;
      let preview: Awaited<ReturnType<Connection['simulateTransaction']>>;
      if (version === 'legacy') {
        const transaction = LegacyTransaction.from(bytes);
        preview = await connection.simulateTransaction(transaction);
        if (options.legacySigning === 'sign') transaction.sign(wallet);
        else transaction.partialSign(wallet);
        wire = transaction.serialize();
      } else {
        const transaction = VersionedTransaction.deserialize(bytes);
        preview = await connection.simulateTransaction(transaction, { sigVerify: false });
        transaction.sign([wallet]);
        wire = transaction.serialize();
      }
      // Wallets show what a transaction will do before the user approves it.
      if (preview.value.err) {
        throw new Error(`the wallet's preview failed: ${JSON.stringify(preview.value.err)}`);
      }
      const signature = await connection.sendRawTransaction(wire);
      const { value } = await connection.confirmTransaction({ signature, ...lifetime });
      if (value.err) throw new Error(`transaction ${signature} failed: ${JSON.stringify(value.err)}`);
      return signature as Signature;
    },
    options.through,
  );
}

/**
 * Closes a web3.js 1.x Connection's WebSocket: the library has no public way to, and reconnects to
 * a server that goes away; closing it (code 1000) before the chain stops is what ends it.
 */
export async function closeConnection(connection: Connection): Promise<void> {
  const socket = (
    connection as unknown as { _rpcWebSocket: EventEmitter & { ready: boolean; close(): void } }
  )._rpcWebSocket;
  if (!socket.ready) return;
  const closed = once(socket, 'close');
  socket.close();
  await closed;
}
