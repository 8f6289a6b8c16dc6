// The chain's profiles. `instant` (the default) confirms every transaction the moment it is sent,
// as development wants. `mainnet` behaves like a cluster: leaders include a sent transaction a slot
// or more later, or never; blocks on minority forks are rolled back; `confirmed` and `finalized`
// follow the tip by a slot or two and by 32 slots; congestion raises the price a transaction must
// pay to be included; the legacy SPL Token program sits at the Token program id; and the endpoint
// itself has bad moments (throttling, failures, slow and stale answers, dropped WebSocket
// subscriptions). Every draw comes from the seed, so a run repeats exactly from it.
import type { FaultPlan } from '@transfer-router/rpc-faults';
import type { TokenProgramImplementation } from './legacy-token.ts';

export type ChainProfileName = 'instant' | 'mainnet';

/** How leaders treat sent transactions and how blocks become final on a mainnet-like chain. */
export interface ClusterBehaviour {
  /** Share of sends no leader receives: the transaction lands only if sent again. */
  dropShare: number;
  /** Share of sends included only 2 to `maxDelaySlots` slots later (the rest: the next slot). */
  delayedShare: number;
  maxDelaySlots: number;
  /** Share of blocks on a minority fork, rolled back when the next slot is produced. */
  forkShare: number;
  /** Share of a rolled-back block's transactions that leaders include again; the rest must be re-sent. */
  forkRequeueShare: number;
  /** Slots after which a block is `finalized`. */
  finalizationSlots: number;
  /** Congestion: how long calm and congested periods last on average, and the going rate's range. */
  congestion: {
    calmMeanSlots: number;
    congestedMeanSlots: number;
    /** Going rate while congested, in micro-lamports per compute unit: drawn in this range. */
    minRate: bigint;
    maxRate: bigint;
    /** Per congested slot, the share of waiting transactions priced below the rate that are dropped. */
    dropShare: number;
  };
}

/**
 * What the endpoint in front of a mainnet-like chain does wrong: the fault proxy's throttling,
 * failures, held and stale answers (the chain itself drops sends and is honest about commitment),
 * and WebSocket connections cut after a random time of mean `socketDropMeanMs`.
 */
export type EndpointWeather = Omit<FaultPlan, 'seed' | 'dropSends' | 'processedFirst' | 'processedForMs'> & {
  socketDropMeanMs: number;
};

/** A profile: its behaviour, the Token program it runs, and the seed of its draws. */
export interface ChainProfile {
  name: ChainProfileName;
  seed: string;
  tokenProgram: TokenProgramImplementation;
  /** Absent: every transaction lands at once and is final at once. */
  cluster?: ClusterBehaviour;
  /** Absent: the endpoint always answers, at once and from the tip. */
  weather?: EndpointWeather;
}

/** Figures of a mainnet day at its usual worst, scaled to a chain in the box (see docs/operations.md). */
export const MAINNET_CLUSTER: ClusterBehaviour = {
  dropShare: 0.05,
  delayedShare: 0.15,
  maxDelaySlots: 5,
  forkShare: 0.02,
  forkRequeueShare: 0.5,
  finalizationSlots: 32,
  congestion: {
    calmMeanSlots: 150,
    congestedMeanSlots: 25,
    minRate: 5_000n,
    maxRate: 50_000n,
    dropShare: 0.05,
  },
};

export const MAINNET_WEATHER: EndpointWeather = {
  rateLimited: 0.01,
  retryAfterSeconds: 1,
  unavailable: 0.002,
  held: 0.002,
  holdMs: 5_000,
  staleEveryMs: 30_000,
  staleForMs: 1_200,
  staleMaxAgeMs: 1_600,
  socketDropMeanMs: 60_000,
};

/** The profile a name and seed stand for. */
export function chainProfile(name: ChainProfileName, seed = 'local-chain'): ChainProfile {
  return name === 'mainnet'
    ? { name, seed, tokenProgram: 'legacy', cluster: MAINNET_CLUSTER, weather: MAINNET_WEATHER }
    : { name, seed, tokenProgram: 'p-token' };
}

/** Checks a profile's name. */
export function parseChainProfile(value: string): ChainProfileName {
  if (value !== 'instant' && value !== 'mainnet') {
    throw new Error(`the chain profile is instant or mainnet, not ${value}`);
  }
  return value;
}

/** The profile `LOCAL_CHAIN_PROFILE` and `LOCAL_CHAIN_SEED` choose (default: instant). */
export function chainProfileFromEnv(env: NodeJS.ProcessEnv = process.env): ChainProfile {
  return chainProfile(
    parseChainProfile(env.LOCAL_CHAIN_PROFILE || 'instant'),
    env.LOCAL_CHAIN_SEED || undefined,
  );
}
