import type { Address } from '@solana/kit';
import type { Route } from '../chain/router/accounts.ts';
import { getScreenRouteInstruction, type ScreeningVerdict } from '../chain/router/instructions.ts';
import type { AccountReader, ClockReader } from '../chain/types.ts';
import type { Clock } from '../domain/clock.ts';
import type { RouteRecord, Transfer } from '../domain/transfer.ts';
import type { Platform } from '../platform/platform.ts';
import { sendAndConfirm, type TransactionChain } from '../platform/send.ts';
import type { Db } from '../store/db.ts';
import type { TransferStore } from '../store/transfers.ts';
import type { ScreeningOutcome } from './keeper-deps.ts';
import { readRoute, recoveryOf } from './route-reads.ts';

/** Tells whether an address is clear or flagged; throws when it cannot tell (the provider is down). */
export interface ScreeningProvider {
  screen(address: Address, options?: { signal?: AbortSignal }): Promise<'clear' | 'flagged'>;
}

/**
 * Screens a route that awaits its verdict: both its source and its recipient, as recorded on chain,
 * with the provider,
 * then records the verdict on chain, signed by the screening authority. Verified, the deposit goes
 * back to the source and the hops may run; flagged, the deposit is forfeited, the route never
 * executes, and the transfer becomes `recoverable` so the source can rescue its tokens. A provider
 * that cannot answer is retried later: a route is never waved through. A route flagged on chain
 * whose worker did not live to record it is recorded as it is.
 */
export function createRouteScreening(deps: {
  provider: ScreeningProvider;
  db: Pick<Db, 'transaction'>;
  chain: AccountReader & ClockReader & TransactionChain;
  platform: Pick<Platform, 'programAddress' | 'configAddress' | 'screeningAuthority'>;
  transfers: Pick<TransferStore, 'markRecoverable'>;
  clock: Clock;
}) {
  /**
   * The provider's verdict on the source and recipient the route on chain carries (the wallets its
   * tokens come from and go to, whatever the quote said); null when it cannot tell.
   */
  async function verdictOf(route: Route): Promise<ScreeningVerdict | null> {
    try {
      const results = await Promise.all(
        [route.source, route.recipient].map((address) =>
          deps.provider.screen(address, { signal: AbortSignal.timeout(10_000) }),
        ),
      );
      return results.includes('flagged') ? 'flagged' : 'verified';
    } catch {
      return null;
    }
  }

  return async (transfer: Transfer & { route: RouteRecord }, route: Route): Promise<ScreeningOutcome> => {
    if (route.screening === 'pending') {
      const verdict = await verdictOf(route);
      if (verdict === null) return 'unavailable';
      await sendAndConfirm(deps.chain, deps.platform.screeningAuthority, [
        getScreenRouteInstruction(
          {
            authority: deps.platform.screeningAuthority,
            config: deps.platform.configAddress,
            route: transfer.route.address,
            source: transfer.sourceOwner,
            platformWallet: route.platformWallet,
            verdict,
          },
          deps.platform.programAddress,
        ),
      ]);
      if (verdict === 'verified') return 'verified';
    }
    const snapshot = await readRoute(deps.chain, deps.platform.programAddress, transfer);
    const recovery = recoveryOf(snapshot, (await deps.chain.getClock()).unixTimestamp);
    const now = deps.clock.now();
    await deps.db.transaction((tx) =>
      deps.transfers.markRecoverable(tx, transfer.id, {
        lastError: {
          code: 'MH_031',
          message:
            'Compliance screening flagged this route: it will not execute and its screening deposit is forfeited. The source can rescue its tokens.',
        },
        recovery,
        now,
      }),
    );
    return 'flagged';
  };
}
