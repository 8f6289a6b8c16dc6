import type { Address } from '@solana/kit';
import type { Route } from '../chain/router/accounts.ts';
import type {
  AccountReader,
  BlockHeightReader,
  BlockhashReader,
  ClockReader,
  PriorityFeeReader,
  SignatureStatusReader,
  TransactionReader,
  TransactionSender,
  TransactionSimulator,
} from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import type { PriorityFeePolicy } from '../domain/priority-fees.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';
import type { Db } from '../store/db.ts';
import type { HopStore } from '../store/hops.ts';
import type { TransferStore } from '../store/transfers.ts';

/*
 * What the keeper's work on a route (src/use-cases/advance-hop.ts) needs, and what it reports.
 */

/** What screening a route before its first hop decided (see src/use-cases/screening.ts). */
export type ScreeningOutcome = 'verified' | 'flagged' | 'unavailable';

/** The keeper's stores, chain, clock and settings. */
export interface KeeperDeps {
  db: Pick<Db, 'transaction'>;
  chain: AccountReader &
    ClockReader &
    BlockhashReader &
    BlockHeightReader &
    SignatureStatusReader &
    TransactionReader &
    TransactionSender &
    TransactionSimulator &
    PriorityFeeReader;
  hops: HopStore;
  transfers: Pick<TransferStore, 'markRecoverable'>;
  programAddress: Address;
  /** How the keeper's transactions are priced: floor, cap, and the budget the routes were funded with. */
  priorityFees: PriorityFeePolicy;
  /** Screens a route that awaits its verdict, and records the verdict on chain. */
  screen(transfer: Transfer & { route: RouteRecord }, route: Route): Promise<ScreeningOutcome>;
  clock: Clock;
  /** How often a sent hop's status is read while it has not landed. */
  pollMs?: number;
  /** Counts what happened, for metrics and logs. */
  observe?(event: KeeperEvent): void;
  /** A number in [0, 1) that spreads retries out (Math.random unless a test fixes it). */
  random?: () => number;
}

/** What the keeper reports about its work on a route. */
export type KeeperEvent =
  | { kind: 'route_screened'; transferId: number; outcome: Exclude<ScreeningOutcome, 'unavailable'> }
  /** `resent`: the bytes were signed and stored by an earlier attempt (whose worker may have died). */
  | { kind: 'hop_sent'; transferId: number; step: number; signature: string; resent: boolean }
  /**
   * `recovered`: it had landed before this attempt, whose predecessor stopped before recording it;
   * `settled`: the last hop, the transfer is complete.
   */
  | {
      kind: 'hop_landed';
      transferId: number;
      step: number;
      signature: string;
      lateSeconds: number;
      recovered: boolean;
      settled: boolean;
    }
  | { kind: 'hop_retried'; transferId: number; step: number; reason: string }
  | { kind: 'route_failed'; transferId: number; reason: string }
  | { kind: 'keeper_low'; transferId: number; lamports: bigint };
