import { type Address, isAddress, isSignature, type Signature } from '@solana/kit';
import { z } from 'zod';
import { MAX_ARRIVAL_SECONDS, MAX_HOPS, MIN_HOPS, U64_MAX } from '../../domain/fees.ts';
import { TRANSFER_PHASES, TRANSFER_STATUSES } from '../../domain/transfer.ts';
import type { FieldErrorCodes } from '../errors.ts';

/** The base58 alphabet (no `0`, `O`, `I` or `l`). */
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/**
 * A Solana address: base58 text of exactly 32 bytes, as `@solana/kit` checks it, validated into
 * kit's `Address`. The alphabet and the 32-44 characters every such text has are stated as
 * pattern and lengths, which the OpenAPI document shows.
 */
export const address = (what: string) => {
  const error = `must be a base58-encoded 32-byte ${what}`;
  return z
    .string({ error })
    .min(32, { error })
    .max(44, { error })
    .regex(BASE58, { error })
    .transform((value, context): Address => {
      if (isAddress(value)) return value;
      context.issues.push({ code: 'custom', message: error, input: value });
      return z.NEVER;
    });
};

/** An amount in base units: a decimal integer string that fits in a u64, decoded to bigint. */
export const amountRawInput = z
  .string()
  .regex(/^\d{1,20}$/, { error: 'must be an integer string of base units, e.g. "1500000"', abort: true })
  .refine((value) => BigInt(value) <= U64_MAX, { error: 'must not exceed 18446744073709551615' })
  .transform((value) => BigInt(value));

const rawAmount = z.string().regex(/^\d+$/);
const dateTime = z.iso.datetime();

/** The request fields shared by estimate and create, with the error code each field's rules produce. */
export const pricingFields = {
  tokenMint: address('mint address').describe('Mint of the token; the native mint for SOL.'),
  amountRaw: amountRawInput.describe('Amount in base units (integer string).'),
  tokenDecimals: z
    .int()
    .min(0)
    .max(18)
    .optional()
    .describe('The mint’s decimals. Read from the mint on chain when omitted; must match it when given.'),
  tokenPriceUsd: z
    .number()
    .min(1e-15)
    .max(1e12)
    .optional()
    .describe('USD price of one whole token; wins over the service’s price sources.'),
  hops: z
    .int()
    .min(MIN_HOPS)
    .max(MAX_HOPS)
    .optional()
    .describe('Number of intermediate hops, 3 to 10. Defaults to the integration’s setting (7).'),
};

export const pricingFieldErrors: FieldErrorCodes = { tokenMint: 'MH_010', hops: 'MH_013' };

export const createTransferBody = z
  .object({
    ...pricingFields,
    amountTokens: z
      .string()
      .regex(/^\d+(\.\d+)?$/, { error: 'must be a decimal number such as "1.5"' })
      .max(64)
      .describe('The same amount in whole tokens; must equal amountRaw at the mint’s decimals.'),
    sourceOwner: address('wallet address').describe('Wallet that signs and pays for the deployment.'),
    recipientWallet: address('wallet address').describe('Wallet that receives the tokens.'),
    tokenSymbol: z.string().trim().min(1).max(16).optional().describe('Display only.'),
    arrivalSeconds: z
      .int()
      .min(60)
      .max(MAX_ARRIVAL_SECONDS)
      .optional()
      .describe(
        'Target arrival delay in seconds, at least max(60, 15 × hops), at most 7 days. Defaults to the integration’s setting (600).',
      ),
    externalId: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9._-]+$/, { error: 'may contain only letters, digits, ".", "_" and "-"' })
      .optional()
      .describe(
        'Your identifier; unique per integration and mode. Repeating a create with it returns the same transfer.',
      ),
  })
  .strict();

export const createTransferFieldErrors: FieldErrorCodes = {
  ...pricingFieldErrors,
  sourceOwner: 'MH_011',
  recipientWallet: 'MH_011',
  externalId: 'MH_015',
  arrivalSeconds: { too_small: 'MH_014' },
};

export const estimateBody = z.object(pricingFields).strict();

/** The quote-time fields of a transfer (what create returns). */
export const quoteSchema = z
  .object({
    id: z.int(),
    externalId: z.string().nullable(),
    supportBundleId: z.string().nullable().describe('Human-readable support reference.'),
    tokenMint: z.string(),
    tokenSymbol: z.string().nullable(),
    amountRaw: rawAmount,
    amountTokens: z.string(),
    sourceOwner: z.string(),
    recipientWallet: z.string(),
    fundingStrategy: z.string().nullable().describe('`signed_bundle`: the client signs the prepared bundle.'),
    hops: z.int(),
    arrivalSeconds: z.int(),
    pricingTier: z.string().nullable().describe('`micro`, `standard`, `pro` or `institutional` by default.'),
    percentFeeBps: z.int().nullable(),
    totalFlatFeeLamports: z.int().nullable(),
    status: z.enum(TRANSFER_STATUSES),
    isTest: z.boolean(),
    quotedAt: dateTime.nullable(),
    depositReceivedAt: dateTime.nullable(),
    completedAt: dateTime.nullable(),
    expiresAt: dateTime.nullable(),
    createdAt: dateTime,
  })
  .meta({ id: 'TransferQuote' });

const recoveryAccountKinds = ['route_pda', 'step_state', 'orchestrator_config', 'keeper', 'ata'] as const;

/** The extended transfer (the get operations). */
export const transferSchema = quoteSchema
  .extend({
    phase: z.enum(TRANSFER_PHASES),
    progress: z.object({ hopsCompleted: z.int(), hopsTotal: z.int() }),
    lastError: z
      .object({ code: z.string(), message: z.string(), at: dateTime })
      .nullable()
      .describe('The latest error the service recorded for this transfer.'),
    recovery: z
      .object({
        canRescue: z.boolean(),
        rescuableLamports: z.int(),
        rescuableAccounts: z.array(z.object({ kind: z.enum(recoveryAccountKinds), lamports: z.int() })),
        canReclaimRent: z.boolean(),
        reclaimableLamports: z.int(),
      })
      .nullable()
      .describe('Populated in phases failed, recoverable, settled, rescued and reclaimed; null otherwise.'),
    signatures: z.object({
      routeInit: z.array(z.string()),
      sessionInit: z.array(z.string()),
      hops: z.array(z.string()),
    }),
  })
  .meta({ id: 'Transfer' });

/** The fee estimate. */
export const feeEstimateSchema = z
  .object({
    tier: z.string(),
    percentFeeBps: z.int(),
    percentFeeRaw: rawAmount,
    flatFeeLamportsPerHop: z.int(),
    totalFlatFeeLamports: z.int(),
    integratorPercentShare: rawAmount,
    integratorFlatShare: z.int(),
    usdEquivalent: z.number().describe('Used only for tier selection.'),
    isTestMode: z.boolean(),
    tokens: z.object({
      amountRaw: rawAmount,
      feeRaw: rawAmount,
      netDeliveredRaw: rawAmount,
      decimals: z.int(),
    }),
    sol: z.object({
      requiredSolUpFrontLamports: z.int(),
      breakdown: z.object({
        routeInitRentLamports: z.int(),
        orchestratorRentLamports: z.int(),
        ataRentLamports: z.int(),
        transactionFeesLamports: z.int(),
        priorityFeesLamports: z
          .int()
          .describe(
            "The bundle's transactions at the floor price, and the keeper's priority-fee budget for the route's hops, sized to let their price rise when the network is busy.",
          ),
        protocolFlatFeeLamports: z.int(),
      }),
      refundableLamports: z
        .int()
        .describe(
          "What comes back once the route settled and its rent is reclaimed: the source's rent, the keeper's margin and whatever of its priority-fee budget the hops did not spend (all of it but the hops' fees at the floor price, when they land at it).",
        ),
      netCostLamports: z.int(),
    }),
  })
  .meta({ id: 'FeeEstimate' });

const wireTransaction = z.string().describe('A base64 wire transaction.');

/** The contract's "Prepared transaction bundle". */
export const preparedBundleSchema = z
  .object({
    keeperFundingTx: wireTransaction
      .nullable()
      .describe('Moves SOL to the transfer’s keeper (v0); null once the keeper is funded.'),
    routeInitTxs: z
      .array(z.object({ base64: wireTransaction }))
      .describe(
        'Create the route (v0), partially signed by fresh intermediate accounts; empty once deployed.',
      ),
    orchestratorInitTx: wireTransaction
      .nullable()
      .describe('A legacy transaction creating the source’s orchestrator config; null if it exists.'),
    sessionInitTxs: z
      .array(wireTransaction)
      .describe('Create the step states (v0); those already on chain are left out.'),
    recentBlockhash: z.string().describe('Sign and broadcast before it expires (about 60 seconds).'),
    lastValidBlockHeight: z.int(),
    resume: z.object({
      routeAlreadyDeployed: z.boolean(),
      existingHopCount: z.int().describe('Hops whose path exists on chain (0 before the route exists).'),
      totalHops: z.int(),
      orchestratorAlreadyInitialized: z.boolean(),
      completedStepIndices: z.array(z.int()),
      totalSteps: z.int(),
      keeperAlreadyFunded: z.boolean(),
      nothingToDo: z.boolean().describe('True when every group is null or empty.'),
    }),
  })
  .meta({ id: 'PreparedTransactionBundle' });

/** `{ transfer, preparedTxs }`: what prepare answers. */
export const prepareResponseSchema = z.object({
  transfer: transferSchema,
  preparedTxs: preparedBundleSchema,
});

/** A transaction signature: 64 bytes in base58. */
export const signatureInput = z.string().refine((value): value is Signature => isSignature(value), {
  error: 'must be a base58 transaction signature',
});

/** Recovery transactions: the source's wallet signs and pays; `partialSigners` signed them already. */
const recoveryTransactions = z.array(
  z.object({
    base64: wireTransaction,
    partialSigners: z
      .array(z.string())
      .describe('Signers whose signatures the transaction carries already (the keeper, for its sweep).'),
  }),
);

/** The contract's "Rescue bundle". */
export const rescueBundleSchema = z
  .object({
    rescueTxs: recoveryTransactions.describe(
      'Sign and broadcast in order (v0, the source pays). The last one sweeps the keeper back to the source.',
    ),
    recentBlockhash: z.string().describe('Sign and broadcast before it expires (about 60 seconds).'),
    lastValidBlockHeight: z.int(),
    rescuable: z.object({
      totalLamports: z.int().describe('Lamports the source receives (before its transaction fees).'),
      accounts: z.array(z.object({ kind: z.enum(recoveryAccountKinds), lamports: z.int() })),
    }),
  })
  .meta({ id: 'RescueBundle' });

/** The contract's "Reclaim bundle". */
export const reclaimBundleSchema = z
  .object({
    reclaimTxs: recoveryTransactions.describe('Sign and broadcast in order (v0, the source pays).'),
    recentBlockhash: z.string().describe('Sign and broadcast before it expires (about 60 seconds).'),
    lastValidBlockHeight: z.int(),
    reclaimable: z.object({
      totalLamports: z.int().describe('Lamports the source receives (before its transaction fees).'),
      stepCount: z.int().describe('Step states the bundle closes.'),
    }),
  })
  .meta({ id: 'ReclaimBundle' });

/** What reclaim-rent/confirm answers: each reported signature, confirmed or failed with why. */
export const reclaimConfirmResponseSchema = z.object({
  confirmed: z.array(z.string()),
  failed: z.array(
    z.object({
      signature: z.string(),
      error: z.string().describe('Why it does not count, starting with its error code (e.g. `MH_036: ...`).'),
    }),
  ),
});
