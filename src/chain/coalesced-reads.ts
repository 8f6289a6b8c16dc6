import type { Signature } from '@solana/kit';
import DataLoader from 'dataloader';
import type { BlockHeightReader, ReadOptions, SignatureStatus, SignatureStatusReader } from './types.ts';

/** Most signatures a node takes in one getSignatureStatuses call. */
const MAX_SIGNATURES_PER_CALL = 256;

/** How long a status read waits for others to share its call. */
const STATUS_WINDOW_MS = 20;

/**
 * The chain for many transactions landing at once (the keeper's routes in flight): each one's
 * landing reads its status and the block height every few hundred milliseconds, so hundreds in
 * flight would make as many calls a second, most of them throttled on a real cluster. Here the
 * status reads made within {@link STATUS_WINDOW_MS} of each other go to the node as one call (by
 * DataLoader, made for exactly this), and callers reading the block height while a read is in
 * flight share its answer. A read that carries its own abort signal goes on its own.
 */
export function withCoalescedReads<C extends SignatureStatusReader & BlockHeightReader>(chain: C): C {
  const statuses = (searchTransactionHistory: boolean) =>
    new DataLoader<Signature, SignatureStatus | null>(
      (signatures) => chain.getSignatureStatuses(signatures, { searchTransactionHistory }),
      {
        cache: false,
        maxBatchSize: MAX_SIGNATURES_PER_CALL,
        batchScheduleFn: (callback) => setTimeout(callback, STATUS_WINDOW_MS),
      },
    );
  const recent = statuses(false);
  const history = statuses(true);
  const heights = new Map<string, Promise<bigint>>();
  const coalesced: SignatureStatusReader & Pick<BlockHeightReader, 'getBlockHeight'> = {
    getSignatureStatuses(signatures, options) {
      if (options?.signal || signatures.length !== 1) return chain.getSignatureStatuses(signatures, options);
      const loader = options?.searchTransactionHistory ? history : recent;
      return loader.loadMany(signatures).then((answers) =>
        answers.map((answer) => {
          if (answer instanceof Error) throw answer;
          return answer;
        }),
      );
    },
    getBlockHeight(options?: ReadOptions) {
      if (options?.signal) return chain.getBlockHeight(options);
      const key = options?.commitment ?? '';
      const inFlight = heights.get(key);
      if (inFlight) return inFlight;
      const read = chain.getBlockHeight(options).finally(() => heights.delete(key));
      heights.set(key, read);
      return read;
    },
  };
  // The chain's other methods stay its own, looked up at each call (tests may wrap them later).
  return Object.assign(Object.create(chain) as C, coalesced);
}
