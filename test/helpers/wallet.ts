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
  const sent: BroadcastSignatures = { routeInitSignatures: [] };
  const send = async (base64: string) => {
    const signed = await signAsWallet(wallet, base64);
    await chain.sendTransaction(getBase64EncodedWireTransaction(signed) as Base64EncodedWireTransaction, {
      skipPreflight: options.skipPreflight ?? false,
    });
    return getSignatureFromTransaction(signed);
  };
  if (bundle.keeperFundingTx) sent.keeperFundingSignature = await send(bundle.keeperFundingTx);
  if (options.through === 'keeperFunding') return sent;
  for (const { base64 } of bundle.routeInitTxs) sent.routeInitSignatures.push(await send(base64));
  if (options.through === 'routeInit') return sent;
  if (bundle.orchestratorInitTx) sent.orchestratorInitSignature = await send(bundle.orchestratorInitTx);
  if (options.through === 'orchestratorInit') return sent;
  if (bundle.sessionInitTxs.length > 0) {
    sent.sessionInitSignatures = [];
    for (const base64 of bundle.sessionInitTxs) sent.sessionInitSignatures.push(await send(base64));
  }
  return sent;
}
