import type { Address } from '@solana/kit';
import { percentFee, splitFee } from './fees.ts';

/*
 * A route's terms: what the service put into a CreateRoute it prepared, and the check that a route
 * found on chain is one of those (decisions, "A route that is not the one quoted"). The service
 * runs only a route it verified term by term; anything else at a transfer's route address was
 * deployed by someone else, with terms nobody quoted.
 */

/** What a route fixes at its creation and carries unchanged on chain. */
interface FixedRouteTerms {
  mint: Address;
  /** Tokens taken into custody, base units. */
  amount: bigint;
  /** Steps, 3 to 10. */
  hopCount: number;
  /** Step i is due at firstReleaseAt + i * intervalSecs (unix seconds of the chain's clock). */
  firstReleaseAt: bigint;
  /** After this instant the route cannot execute and the source may rescue it. */
  deadlineAt: bigint;
  keeper: Address;
  /** The recipient's wallet; on a native-mint route it receives the net amount as SOL. */
  recipient: Address;
  /**
   * The recipient's token account for the mint (usually its associated token account); null on a
   * native-mint route, which needs none (the program refuses one there and requires one elsewhere).
   */
  recipientToken: Address | null;
  /** Where the platform's flat fee settles (the protocol config account). */
  platformWallet: Address;
  platformFeeToken: Address;
  integratorWallet: Address;
  integratorFeeToken: Address;
}

/** The terms a prepare put into a route's creation: the only ones the service will run. */
export interface PreparedRouteTerms extends FixedRouteTerms {
  percentFeeBps: number;
  /** The integrator's share of both fees on chain, in basis points of the fee. */
  integratorShareBps: number;
  flatFeePerHopLamports: bigint;
  intervalSecs: number;
  /** Holds the config's screening deposit until the screening authority decides. */
  screeningRequired: boolean;
  /**
   * The largest screening deposit the source agrees to hold: creation fails (`DepositAboveMaximum`)
   * when the config asks for more, e.g. after a change since the bundle was built.
   */
  maxDepositLamports: bigint;
}

/** What the program stored of a route's terms at its creation (the route account's fixed fields). */
export interface OnChainRouteTerms extends FixedRouteTerms {
  netAmount: bigint;
  platformFeeTokens: bigint;
  integratorFeeTokens: bigint;
  platformFlatLamports: bigint;
  integratorFlatLamports: bigint;
  intervalSecs: bigint;
  screening: 'none' | 'pending' | 'verified' | 'flagged';
  depositLamports: bigint;
}

/** The first term in which a route on chain differs from what a prepare quoted. */
export interface TermDifference {
  /** The term in words, e.g. "recipient" or "flat fee". */
  term: string;
  quoted: string;
  found: string;
}

interface Check {
  term: string;
  quoted: string;
  found: string;
  matches: boolean;
}

const same = (term: string, quoted: unknown, found: unknown): Check => ({
  term,
  quoted: String(quoted),
  found: String(found),
  matches: String(quoted) === String(found),
});

/**
 * The checks of one prepared terms against a route on chain, in the order a difference is named:
 * what moves, how far and to whom, the fees, the schedule, who cranks it, where fees settle,
 * screening. Fee amounts are the program's own arithmetic on the prepared terms (the platform's
 * shares are the totals less the integrator's).
 */
function checks(prepared: PreparedRouteTerms, found: OnChainRouteTerms): Check[] {
  const fee = percentFee(prepared.amount, prepared.percentFeeBps);
  const flat = prepared.flatFeePerHopLamports * BigInt(prepared.hopCount);
  const screened = found.screening !== 'none';
  // The program holds the config's deposit, never above the agreed maximum; without screening, none.
  const depositAgreed = prepared.screeningRequired
    ? found.depositLamports <= prepared.maxDepositLamports
    : found.depositLamports === 0n;
  return [
    same('mint', prepared.mint, found.mint),
    same('amount', prepared.amount, found.amount),
    same('hop count', prepared.hopCount, found.hopCount),
    same('recipient', prepared.recipient, found.recipient),
    same('recipient token account', prepared.recipientToken ?? 'none', found.recipientToken ?? 'none'),
    same('percentage fee', fee, found.platformFeeTokens + found.integratorFeeTokens),
    same('flat fee', flat, found.platformFlatLamports + found.integratorFlatLamports),
    same(
      "integrator's share of the percentage fee",
      splitFee(fee, prepared.integratorShareBps).integrator,
      found.integratorFeeTokens,
    ),
    same(
      "integrator's share of the flat fee",
      splitFee(flat, prepared.integratorShareBps).integrator,
      found.integratorFlatLamports,
    ),
    same('net amount', prepared.amount - fee, found.netAmount),
    same('first release', prepared.firstReleaseAt, found.firstReleaseAt),
    same('interval', prepared.intervalSecs, found.intervalSecs),
    same('deadline', prepared.deadlineAt, found.deadlineAt),
    same('keeper', prepared.keeper, found.keeper),
    same('platform fee destination', prepared.platformWallet, found.platformWallet),
    same('platform fee token account', prepared.platformFeeToken, found.platformFeeToken),
    same('integrator wallet', prepared.integratorWallet, found.integratorWallet),
    same('integrator fee token account', prepared.integratorFeeToken, found.integratorFeeToken),
    same('screening', prepared.screeningRequired ? 'required' : 'off', screened ? 'required' : 'off'),
    {
      term: 'screening deposit',
      quoted: prepared.screeningRequired ? `at most ${prepared.maxDepositLamports} lamports` : '0 lamports',
      found: `${found.depositLamports} lamports`,
      matches: depositAgreed,
    },
  ];
}

/**
 * Whether a route on chain is one the service prepared (any of its prepares): null when it is,
 * else the first term that differs from the prepare it is closest to (fewest differences, the
 * latest on a tie). With no prepared terms at all, nothing matches.
 */
export function unquotedTerm(
  prepared: readonly PreparedRouteTerms[],
  found: OnChainRouteTerms,
): TermDifference | null {
  let closest: { difference: TermDifference; count: number } | null = null;
  for (const terms of prepared) {
    const differing = checks(terms, found).filter((check) => !check.matches);
    const [first] = differing;
    if (!first) return null;
    if (closest === null || differing.length <= closest.count) {
      closest = {
        difference: { term: first.term, quoted: first.quoted, found: first.found },
        count: differing.length,
      };
    }
  }
  return closest?.difference ?? { term: 'route', quoted: 'none prepared', found: 'a route on chain' };
}

/** MH_031's message for a route that is not the one quoted. */
export function unquotedRouteMessage(difference: TermDifference): string {
  return `The route on chain is not the one quoted: its ${difference.term} is ${difference.found}, the quote's ${difference.quoted}. It is not run; the source can rescue everything it holds once the program allows it.`;
}
