// The instructions that deploy a route: the source's orchestrator config, the route with its
// custody and intermediate accounts, and its step states.
import {
  type Address,
  getBooleanEncoder,
  getI64Encoder,
  getStructEncoder,
  getU16Encoder,
  getU32Encoder,
  getU64Encoder,
  type Instruction,
  type ProgramDerivedAddress,
  padRightEncoder,
  type TransactionSigner,
} from '@solana/kit';
import { SYSTEM_PROGRAM_ADDRESS } from '@solana-program/system';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { PreparedRouteTerms } from '../../../domain/route-terms.ts';
import { ZERO_ADDRESS } from '../accounts.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../program.ts';
import {
  addressEncoder,
  bytes,
  instruction,
  RouterInstruction,
  readonly,
  signerMeta,
  u8,
  writable,
} from './encoding.ts';

/** Creates the source wallet's orchestrator config (succeeds without change when it exists). */
export function getInitOrchestratorInstruction(
  input: { source: TransactionSigner; orchestrator: ProgramDerivedAddress },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  const [orchestrator, bump] = input.orchestrator;
  return instruction(
    programAddress,
    [signerMeta(input.source), writable(orchestrator), readonly(SYSTEM_PROGRAM_ADDRESS)],
    bytes(RouterInstruction.InitOrchestrator, bump),
  );
}

/**
 * The terms of a route as its CreateRoute carries them (the mint and the fee accounts travel as
 * accounts; the platform's flat fee goes to the config, which the program names itself).
 */
export type RouteTerms = Omit<
  PreparedRouteTerms,
  'mint' | 'platformWallet' | 'platformFeeToken' | 'integratorFeeToken'
> & {
  /** Unique per source wallet; part of the route's address. */
  routeId: bigint;
};

const createRouteEncoder = getStructEncoder([
  ['tag', u8],
  ['routeBump', u8],
  ['custodyBump', u8],
  ['hopCount', u8],
  ['screeningRequired', padRightEncoder(getBooleanEncoder(), 1)],
  ['percentFeeBps', getU16Encoder()],
  ['integratorShareBps', padRightEncoder(getU16Encoder(), 2)],
  ['intervalSecs', getU32Encoder()],
  ['routeId', getU64Encoder()],
  ['amount', getU64Encoder()],
  ['flatFeePerHopLamports', getU64Encoder()],
  ['firstReleaseAt', getI64Encoder()],
  ['deadlineAt', getI64Encoder()],
  ['keeper', addressEncoder],
  ['recipient', addressEncoder],
  ['recipientToken', addressEncoder],
  ['integratorWallet', addressEncoder],
  ['maxDepositLamports', getU64Encoder()],
]);

/**
 * Creates the route and its custody account, takes `amount` tokens from the source's token account
 * into custody, holds the flat fee (and screening deposit) in the route account, and creates the
 * first intermediate accounts at the given fresh addresses (each must sign). The platform's fees
 * will settle into the config account and `platformFeeToken`, which must be a token account the
 * config owns (its associated token account of the mint).
 */
export function getCreateRouteInstruction(
  input: {
    source: TransactionSigner;
    route: ProgramDerivedAddress;
    custody: ProgramDerivedAddress;
    sourceToken: Address;
    mint: Address;
    config: Address;
    platformFeeToken: Address;
    integratorFeeToken: Address;
    hops: readonly TransactionSigner[];
    terms: RouteTerms;
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  const [route, routeBump] = input.route;
  const [custody, custodyBump] = input.custody;
  return instruction(
    programAddress,
    [
      signerMeta(input.source),
      writable(route),
      writable(custody),
      writable(input.sourceToken),
      readonly(input.mint),
      readonly(input.config),
      readonly(input.platformFeeToken),
      readonly(input.integratorFeeToken),
      readonly(SYSTEM_PROGRAM_ADDRESS),
      readonly(TOKEN_PROGRAM_ADDRESS),
      ...input.hops.map((hop) => signerMeta(hop)),
    ],
    new Uint8Array(
      createRouteEncoder.encode({
        tag: RouterInstruction.CreateRoute,
        routeBump,
        custodyBump,
        ...input.terms,
        recipientToken: input.terms.recipientToken ?? ZERO_ADDRESS,
      }),
    ),
  );
}

/**
 * Creates further intermediate accounts of a route still being deployed. `existingHopCount` is
 * the route's `hopsRegistered` as read on chain: a stale or replayed transaction fails.
 */
export function getAddHopsInstruction(
  input: {
    source: TransactionSigner;
    route: Address;
    mint: Address;
    existingHopCount: number;
    hops: readonly TransactionSigner[];
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [
      signerMeta(input.source),
      writable(input.route),
      readonly(input.mint),
      readonly(SYSTEM_PROGRAM_ADDRESS),
      readonly(TOKEN_PROGRAM_ADDRESS),
      ...input.hops.map((hop) => signerMeta(hop)),
    ],
    bytes(RouterInstruction.AddHops, input.existingHopCount),
  );
}

/**
 * Creates step states (idempotent: existing ones are skipped). Needs every intermediate account
 * and the orchestrator config; creating the last step also checks the recipient's token account,
 * so create that first (e.g. CreateAssociatedTokenAccountIdempotent in the same transaction). On a
 * native-mint route `recipientHolder` is the recipient's wallet, which needs nothing.
 */
export function getInitStepsInstruction(
  input: {
    source: TransactionSigner;
    route: Address;
    orchestrator: Address;
    /** The route's last holder: the recipient's token account, or its wallet on a native-mint route. */
    recipientHolder: Address;
    steps: readonly { index: number; pda: ProgramDerivedAddress }[];
  },
  programAddress: Address = ROUTER_PROGRAM_ADDRESS,
): Instruction {
  return instruction(
    programAddress,
    [
      signerMeta(input.source),
      writable(input.route),
      writable(input.orchestrator),
      readonly(input.recipientHolder),
      readonly(SYSTEM_PROGRAM_ADDRESS),
      ...input.steps.map((s) => writable(s.pda[0])),
    ],
    bytes(RouterInstruction.InitSteps, ...input.steps.flatMap((s) => [s.index, s.pda[1]])),
  );
}
