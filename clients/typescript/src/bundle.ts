import {
  assertIsSendableTransaction,
  assertIsTransactionWithinSizeLimit,
  blockhash,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type Rpc,
  type Signature,
  type TransactionPartialSigner,
} from '@solana/kit';
import {
  type CallOptions,
  type ConfirmBroadcastRequest,
  delay,
  type PreparedTransactionBundle,
  type Transfer,
  type TransferRouterClient,
} from './client.ts';
import { isLandingError } from './landing-error.ts';
import { type LandingRpcApi, type LandOptions, landSigned } from './send.ts';

/** The groups of a prepared bundle, in the order they are broadcast. */
export type BundleGroup = 'keeperFunding' | 'routeInit' | 'orchestratorInit' | 'sessionInit';

/** What {@link signAndBroadcastBundle} is doing, for a progress display or a log. */
export type BroadcastProgress =
  /** A bundle to broadcast: the one given, or one prepare answered (`resumed` after the first). */
  | { kind: 'prepared'; bundle: PreparedTransactionBundle; resumed: boolean }
  /** One transaction landed and is confirmed. */
  | { kind: 'confirmed'; group: BundleGroup; index: number; count: number; signature: Signature }
  /** The keeper's funding is recorded (the first confirm-broadcast call). */
  | { kind: 'keeper_funding_reported'; transfer: Transfer }
  /** The bundle's blockhash expired before `group` landed: prepare is called for a fresh bundle. */
  | { kind: 'blockhash_expired'; group: BundleGroup }
  /** Every signature is reported (the final confirm-broadcast call). */
  | { kind: 'reported'; transfer: Transfer };

/** The RPC a wallet needs to send a bundle's transactions and follow them until they land. */
export interface BroadcastRpc {
  rpc: Rpc<LandingRpcApi>;
}

/** What signing and sending a bundle's transactions takes, whatever the bundle. */
export interface BundleSenderOptions extends BroadcastRpc, LandOptions {
  /** The transfer's `sourceOwner`: the only signature each transaction lacks. */
  signer: TransactionPartialSigner;
}

/** The blockhash a bundle's transactions carry and the last block height they can land at. */
export interface BundleLifetime {
  recentBlockhash: string;
  lastValidBlockHeight: number;
}

/**
 * Signs one transaction of a bundle as it is with the source's signer (the service's own
 * signatures stay, and so does every byte the service built: its compute budget comes first,
 * sized by the service) and lands it: the same signed bytes sent again every 2 s until confirmed.
 * Answers its signature; throws a {@link LandingError} when it did not land.
 */
export function createBundleSender(options: BundleSenderOptions) {
  const { signer } = options;
  return async (bundle: BundleLifetime, base64: string): Promise<Signature> => {
    const lastValidBlockHeight = BigInt(bundle.lastValidBlockHeight);
    const transaction = {
      ...getTransactionDecoder().decode(getBase64Encoder().encode(base64)),
      // The wire format does not say when the blockhash expires; the bundle does.
      lifetimeConstraint: { blockhash: blockhash(bundle.recentBlockhash), lastValidBlockHeight },
    };
    if (!(signer.address in transaction.signatures)) {
      throw new Error(
        `the bundle is not for signer ${signer.address}: its transactions need ${Object.keys(transaction.signatures).join(', ')}`,
      );
    }
    assertIsTransactionWithinSizeLimit(transaction);
    const [signatures] = await signer.signTransactions([transaction], { abortSignal: options.signal });
    const signed = { ...transaction, signatures: { ...transaction.signatures, ...signatures } };
    assertIsSendableTransaction(signed);
    return landSigned(
      options.rpc,
      {
        base64: getBase64EncodedWireTransaction(signed),
        signature: getSignatureFromTransaction(signed),
        validUntil: lastValidBlockHeight,
      },
      options,
    );
  };
}

export interface SignAndBroadcastOptions extends BundleSenderOptions {
  transferId: number;
  /** A bundle prepared earlier (e.g. by your backend); without it, prepare is called first. */
  bundle?: PreparedTransactionBundle;
  /** How many bundles to try before giving up, the first one included (default 5). */
  maxBundles?: number;
  onProgress?: (progress: BroadcastProgress) => void | Promise<void>;
}

/** The answer of {@link signAndBroadcastBundle}. */
export interface BroadcastResult {
  /** The transfer as the final confirm-broadcast answered it: `processing` once deployed. */
  transfer: Transfer;
  /** Everything that landed, from every bundle, as reported. */
  signatures: ConfirmBroadcastRequest;
}

/** A bundle's transactions in broadcast order. */
function transactionsOf(bundle: PreparedTransactionBundle): { group: BundleGroup; base64: string[] }[] {
  return [
    { group: 'keeperFunding', base64: bundle.keeperFundingTx ? [bundle.keeperFundingTx] : [] },
    { group: 'routeInit', base64: bundle.routeInitTxs.map((entry) => entry.base64) },
    { group: 'orchestratorInit', base64: bundle.orchestratorInitTx ? [bundle.orchestratorInitTx] : [] },
    { group: 'sessionInit', base64: bundle.sessionInitTxs },
  ];
}

/** How many more times the final confirm-broadcast is made while the service's node may lag the wallet's. */
const LAGGING_NODE_CALLS = 3;

/** Thrown when a blockhash expired part-way: which group was being sent. */
class BlockhashExpired extends Error {
  readonly group: BundleGroup;
  constructor(group: BundleGroup, cause: unknown) {
    super(`the bundle's blockhash expired while sending ${group}`, { cause });
    this.group = group;
  }
}

/**
 * Deploys a transfer's route as the service expects, from a prepared bundle to `processing`: signs
 * each transaction with the source's `signer` as it is (the service's own signatures stay),
 * sends the groups in order (keeper funding, route creation, orchestrator, sessions), each
 * confirmed before the next; reports the keeper's funding at once (the first confirm-broadcast
 * call) and every signature at the end (the final call). When the blockhash expires part-way, or
 * the final call finds something still missing on chain, it prepares again and broadcasts what
 * the new bundle holds, reporting the signatures of every bundle.
 */
export async function signAndBroadcastBundle(
  client: Pick<TransferRouterClient, 'prepareTransfer' | 'confirmBroadcast'>,
  options: SignAndBroadcastOptions,
): Promise<BroadcastResult> {
  const { transferId } = options;
  const call: CallOptions = options.signal ? { signal: options.signal } : {};
  const signSendConfirm = createBundleSender(options);
  const maxBundles = options.maxBundles ?? 5;
  const progress = async (event: BroadcastProgress) => options.onProgress?.(event);
  const reported: Required<ConfirmBroadcastRequest> = {
    keeperFundingSignature: '',
    routeInitSignatures: [],
    orchestratorInitSignature: '',
    sessionInitSignatures: [],
  };

  /** Broadcasts one bundle's groups in order, recording what lands. */
  async function broadcast(bundle: PreparedTransactionBundle) {
    for (const { group, base64 } of transactionsOf(bundle)) {
      for (const [index, transaction] of base64.entries()) {
        let signature: Signature;
        try {
          signature = await signSendConfirm(bundle, transaction);
        } catch (error) {
          if (isLandingError(error, 'expired')) throw new BlockhashExpired(group, error);
          throw error;
        }
        if (group === 'keeperFunding') reported.keeperFundingSignature = signature;
        if (group === 'routeInit') reported.routeInitSignatures.push(signature);
        if (group === 'orchestratorInit') reported.orchestratorInitSignature = signature;
        if (group === 'sessionInit') reported.sessionInitSignatures.push(signature);
        await progress({ kind: 'confirmed', group, index, count: base64.length, signature });
        if (group === 'keeperFunding') {
          // Recorded at once, so that a resumed deployment never funds the keeper twice.
          const { transfer } = await client.confirmBroadcast(
            transferId,
            { keeperFundingSignature: signature, routeInitSignatures: [] },
            call,
          );
          await progress({ kind: 'keeper_funding_reported', transfer });
        }
      }
    }
  }

  /** The final call's body: every signature that landed, empty fields left out. */
  const finalReport = (): ConfirmBroadcastRequest => ({
    routeInitSignatures: reported.routeInitSignatures,
    ...(reported.keeperFundingSignature ? { keeperFundingSignature: reported.keeperFundingSignature } : {}),
    ...(reported.orchestratorInitSignature
      ? { orchestratorInitSignature: reported.orchestratorInitSignature }
      : {}),
    ...(reported.sessionInitSignatures.length > 0
      ? { sessionInitSignatures: reported.sessionInitSignatures }
      : {}),
  });

  /**
   * The final call, made again a few times while the service still finds something missing: every
   * transaction landed, `confirmed` on the wallet's node, and the service's node may be behind it.
   * Only then is a new bundle prepared (built from the service's reads, it would lag as well).
   */
  async function reportLanded(): Promise<Transfer> {
    for (let again = 0; ; again++) {
      const { transfer } = await client.confirmBroadcast(transferId, finalReport(), call);
      await progress({ kind: 'reported', transfer });
      if (transfer.status !== 'awaiting_signature' || again >= LAGGING_NODE_CALLS) return transfer;
      await delay(1_000 * (again + 1), options.signal);
    }
  }

  let bundle = options.bundle ?? (await client.prepareTransfer(transferId, call)).preparedTxs;
  for (let attempt = 1; ; attempt++) {
    await progress({ kind: 'prepared', bundle, resumed: attempt > 1 });
    let expired = false;
    try {
      await broadcast(bundle);
    } catch (error) {
      if (!(error instanceof BlockhashExpired) || attempt >= maxBundles) throw error;
      await progress({ kind: 'blockhash_expired', group: error.group });
      expired = true;
    }
    if (!expired) {
      const transfer = await reportLanded();
      if (transfer.status !== 'awaiting_signature') return { transfer, signatures: finalReport() };
      if (attempt >= maxBundles) {
        throw new Error(
          `transfer ${transferId} is still ${transfer.status} (phase ${transfer.phase}) after ${attempt} bundles`,
        );
      }
    }
    bundle = (await client.prepareTransfer(transferId, call)).preparedTxs;
  }
}
