import {
  ORCHESTRATOR_ACCOUNT_SIZE,
  ROUTE_ACCOUNT_SIZE,
  STEP_ACCOUNT_SIZE,
  TOKEN_ACCOUNT_SIZE,
} from './accounts.ts';
import { hopsInCreateRoute, MAX_HOPS_IN_ADD_HOPS_TX, MAX_STEPS_IN_INIT_STEPS_TX } from './bundle.ts';

/**
 * Compute-unit limits per kind of transaction where simulating it first is impossible (it needs
 * what an earlier transaction of its bundle creates), from the measured costs in docs/program.md
 * with headroom; every other transaction gets what its simulation used plus a margin. They cover
 * the legacy SPL Token program, whose token instructions cost far more than p-token's.
 */
export const COMPUTE_UNIT_LIMITS = {
  keeperFunding: 1_000,
  /** Route creation, 5 intermediates: 51,523 measured on the legacy SPL Token program. */
  createRoute: 65_000,
  /** 4 intermediates: 26,987 measured on the legacy SPL Token program. */
  addHops: 35_000,
  orchestratorInit: 10_000,
  sessionInit: 80_000,
  /** A hop, the settling one included (about 18,600 measured on the legacy SPL Token program). */
  executeStep: 25_000,
  /** Creating an associated token account (its address search included) in a bundle transaction. */
  createTokenAccount: 35_000,
  /** Wrapping SOL in the route's creation: open the account, move the SOL, sync, close it again. */
  wrapSol: 45_000,
  /** A `Rescue` or `Reclaim` of up to 12 accounts with the keeper's sweep (55,424 measured on the legacy SPL Token program). */
  recovery: 70_000,
  /** Closing the source's wrapped-SOL account, which unwraps what a recovery returned into it. */
  closeTokenAccount: 5_000,
} as const;

/**
 * What deploying and running a route of `hops` hops puts on chain and signs, counting every item
 * in full (the estimate knows neither wallet): the accounts the source pays rent for (by size),
 * which of them come back, the signatures of the bundle and of the keeper's hops, plus the one
 * hop's worth the keeper is funded with as a margin, and the compute units of the bundle (the
 * keeper's are paid from its fee budget, src/domain/priority-fees.ts). A `native` route (on the
 * native mint) delivers SOL to the recipient's wallet, so it has no recipient token account. Its
 * bundle may open a wrapped-SOL account for the source, but closes it again in the same
 * transaction, the route's creation: that rent is lent for one transaction and back before the
 * orchestrator and step accounts that later transactions pay for (more than it, at 3 hops or
 * more), so it neither costs the source anything nor adds to the most it must hold.
 */
export function routeFootprint(input: { hops: number; native: boolean }) {
  const { hops } = input;
  const intermediates = hops - 1;
  const addHopsTxs = Math.ceil(
    Math.max(0, intermediates - hopsInCreateRoute(input.native)) / MAX_HOPS_IN_ADD_HOPS_TX,
  );
  const sessionTxs = Math.ceil(hops / MAX_STEPS_IN_INIT_STEPS_TX);
  return {
    /** The route account, its step states, and the keeper system account (which must stay rent exempt). */
    routeInitAccountSizes: [ROUTE_ACCOUNT_SIZE, ...Array<number>(hops).fill(STEP_ACCOUNT_SIZE), 0],
    orchestratorAccountSize: ORCHESTRATOR_ACCOUNT_SIZE,
    /**
     * Custody, the intermediate accounts, the platform's fee account for the mint (the config's),
     * and on an SPL route the recipient's associated token account.
     */
    tokenAccounts: input.native ? hops + 1 : hops + 2,
    tokenAccountSize: TOKEN_ACCOUNT_SIZE,
    /**
     * Token accounts whose rent returns to the source with reclaim: custody and the intermediate
     * accounts after settlement (a native route's last intermediate account is closed at settlement
     * and its rent returns with the route account). Never the recipient's or the platform's.
     */
    refundableTokenAccounts: hops,
    /**
     * Signatures: keeper funding, route init (source + one per intermediate account), orchestrator,
     * session, hops, and the keeper's margin of one more hop.
     */
    signatures: 1 + (1 + addHopsTxs + intermediates) + 1 + sessionTxs + hops + 1,
    /** Signatures of the keeper's margin, which comes back with the keeper's leftover. */
    refundableSignatures: 1,
    bundleComputeUnits:
      COMPUTE_UNIT_LIMITS.keeperFunding +
      COMPUTE_UNIT_LIMITS.createRoute +
      addHopsTxs * COMPUTE_UNIT_LIMITS.addHops +
      COMPUTE_UNIT_LIMITS.orchestratorInit +
      sessionTxs * COMPUTE_UNIT_LIMITS.sessionInit,
  };
}
