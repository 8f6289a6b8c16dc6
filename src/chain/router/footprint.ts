import {
  ORCHESTRATOR_ACCOUNT_SIZE,
  ROUTE_ACCOUNT_SIZE,
  STEP_ACCOUNT_SIZE,
  TOKEN_ACCOUNT_SIZE,
} from './accounts.ts';
import {
  MAX_HOPS_IN_ADD_HOPS_TX,
  MAX_HOPS_IN_CREATE_ROUTE_TX,
  MAX_STEPS_IN_INIT_STEPS_TX,
} from './bundle.ts';

/** Solana's base fee per signature. */
export const LAMPORTS_PER_SIGNATURE = 5_000n;

/**
 * Compute-unit limits the prepared transactions request, per kind, from the measured costs in
 * docs/program.md with headroom; the priority fee is paid on these limits.
 */
export const COMPUTE_UNIT_LIMITS = {
  keeperFunding: 1_000,
  createRoute: 40_000,
  addHops: 25_000,
  orchestratorInit: 10_000,
  sessionInit: 80_000,
  executeStep: 10_000,
} as const;

/**
 * What deploying and running a route of `hops` hops puts on chain and signs: the accounts the
 * source pays rent for (by size), which of them come back after settlement, and the transactions
 * and signatures of the bundle and of the keeper's hops. A `native` route (on the native mint)
 * delivers SOL to the recipient's wallet, so it has no recipient token account.
 */
export function routeFootprint(input: { hops: number; native: boolean }) {
  const { hops } = input;
  const intermediates = hops - 1;
  const addHopsTxs = Math.ceil(
    Math.max(0, intermediates - MAX_HOPS_IN_CREATE_ROUTE_TX) / MAX_HOPS_IN_ADD_HOPS_TX,
  );
  const sessionTxs = Math.ceil(hops / MAX_STEPS_IN_INIT_STEPS_TX);
  return {
    /** The route account, its step states, and the keeper system account (which must stay rent exempt). */
    routeInitAccountSizes: [ROUTE_ACCOUNT_SIZE, ...Array<number>(hops).fill(STEP_ACCOUNT_SIZE), 0],
    orchestratorAccountSize: ORCHESTRATOR_ACCOUNT_SIZE,
    /** Custody, the intermediate accounts and (except on a native route) the recipient's associated token account. */
    tokenAccounts: input.native ? hops : hops + 1,
    tokenAccountSize: TOKEN_ACCOUNT_SIZE,
    /**
     * Token accounts whose rent returns to the source after settlement: all but the recipient's (a
     * native route's last intermediate account is closed at settlement and its rent returns with
     * the route account).
     */
    refundableTokenAccounts: hops,
    /** Signatures: keeper funding, route init (source + one per intermediate account), orchestrator, session, hops. */
    signatures: 1 + (1 + addHopsTxs + intermediates) + 1 + sessionTxs + hops,
    computeUnits:
      COMPUTE_UNIT_LIMITS.keeperFunding +
      COMPUTE_UNIT_LIMITS.createRoute +
      addHopsTxs * COMPUTE_UNIT_LIMITS.addHops +
      COMPUTE_UNIT_LIMITS.orchestratorInit +
      sessionTxs * COMPUTE_UNIT_LIMITS.sessionInit +
      hops * COMPUTE_UNIT_LIMITS.executeStep,
  };
}
