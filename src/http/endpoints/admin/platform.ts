import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../../domain/errors.ts';
import type { PlatformAdmin } from '../../../platform/admin.ts';
import { type EarningsDeps, withdrawEarnings } from '../../../platform/earnings.ts';
import type { Platform } from '../../../platform/platform.ts';
import type { ConfigValues, PlatformStatus } from '../../../platform/status.ts';
import { errorResponses } from '../../schemas/common.ts';
import { address as addressInput, amountRawInput } from '../../schemas/transfers.ts';

/** How long the status waits for the chain; init is bounded by its transaction's blockhash instead. */
const STATUS_DEADLINE_MS = 10_000;

const lamports = z.string().regex(/^\d+$/).describe('Lamports, as a decimal string.');
const address = z.string();

const configValuesSchema = z.object({
  admin: address,
  screeningAuthority: address,
  platformWallet: address,
  screeningDepositLamports: lamports,
});

const walletSchema = z.object({ address, lamports });

const statusSchema = z.object({
  cluster: z.enum(['mainnet', 'devnet', 'testnet', 'localnet']),
  ready: z
    .boolean()
    .describe(
      'True when nothing keeps routes from being created and settled, nor reward claims from being paid.',
    ),
  program: z.object({
    address,
    programDataAddress: address,
    deployed: z.boolean(),
    upgradeable: z.boolean(),
    upgradeAuthority: address.nullable(),
    adminIsUpgradeAuthority: z.boolean(),
  }),
  config: z.object({
    address,
    exists: z.boolean(),
    matches: z.boolean().describe("Whether the config on chain holds the service's keys."),
    differences: z.array(
      z.enum(['admin', 'screeningAuthority', 'platformWallet', 'screeningDepositLamports']),
    ),
    onChain: configValuesSchema.nullable(),
    expected: configValuesSchema,
  }),
  wallets: z.object({ admin: walletSchema, screeningAuthority: walletSchema, feeWallet: walletSchema }),
  settings: z.object({
    screeningRequired: z.boolean(),
    routeGraceSeconds: z.int(),
    priorityFeeCapMicroLamportsPerCu: z.string(),
  }),
  problems: z.array(
    z.object({
      code: z.string(),
      message: z.string(),
      role: z.enum(['admin', 'screeningAuthority', 'feeWallet']).optional(),
    }),
  ),
});

const initSchema = z.object({
  action: z.enum(['initialized', 'updated', 'unchanged', 'refused']),
  signature: z.string().nullable(),
  message: z.string(),
  platform: statusSchema,
});

const withdrawBodySchema = z
  .object({
    destination: addressInput('wallet address').describe('The wallet that receives the earnings.'),
    lamports: amountRawInput.optional().describe('Lamports to take from the protocol config.'),
    mint: addressInput('mint address').optional().describe('The mint whose tokens to take.'),
    amountRaw: amountRawInput
      .optional()
      .describe('Raw units of `mint` to take (the native mint’s arrive as SOL).'),
  })
  .strict();

const withdrawSchema = z.object({
  signature: z.string(),
  destination: address,
  lamports,
  tokens: z.object({ mint: address, amountRaw: z.string() }).nullable(),
  message: z.string(),
});

const presentValues = (values: ConfigValues) => ({
  ...values,
  screeningDepositLamports: String(values.screeningDepositLamports),
});

function presentStatus(status: PlatformStatus, platform: Platform): z.infer<typeof statusSchema> {
  const wallet = (role: keyof PlatformStatus['wallets']) => ({
    address: status.wallets[role].address,
    lamports: String(status.wallets[role].lamports),
  });
  return {
    cluster: status.cluster,
    ready: status.problems.length === 0,
    program: status.program,
    config: {
      address: status.config.address,
      exists: status.config.exists,
      matches: status.config.matches,
      differences: status.config.differences,
      onChain: status.config.onChain && presentValues(status.config.onChain),
      expected: presentValues(status.config.expected),
    },
    wallets: {
      admin: wallet('admin'),
      screeningAuthority: wallet('screeningAuthority'),
      feeWallet: wallet('feeWallet'),
    },
    settings: {
      screeningRequired: platform.screeningRequired,
      routeGraceSeconds: platform.routeGraceSeconds,
      priorityFeeCapMicroLamportsPerCu: String(platform.priorityFeeCapMicroLamportsPerCu),
    },
    problems: status.problems,
  };
}

/** Operator endpoints: the platform's keys and protocol config on chain, and its own earnings. */
export async function adminPlatformEndpoints(
  app: FastifyInstance,
  deps: { platform: Platform; platformAdmin: PlatformAdmin; earnings: EarningsDeps },
) {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  const { platform, platformAdmin } = deps;

  routes.get('/platform', { schema: { response: { 200: statusSchema, ...errorResponses } } }, async () =>
    presentStatus(await platformAdmin.status({ signal: AbortSignal.timeout(STATUS_DEADLINE_MS) }), platform),
  );

  routes.post(
    '/platform/init',
    { schema: { response: { 200: initSchema, ...errorResponses } } },
    async () => {
      const result = await platformAdmin.init();
      return {
        action: result.action,
        signature: result.signature,
        message: result.message,
        platform: presentStatus(result.status, platform),
      };
    },
  );

  routes.post(
    '/platform/withdraw',
    { schema: { body: withdrawBodySchema, response: { 200: withdrawSchema, ...errorResponses } } },
    async (request) => {
      const { destination, lamports = 0n, mint, amountRaw } = request.body;
      if ((mint === undefined) !== (amountRaw === undefined)) {
        throw new AppError('MH_016', 'Give `mint` and `amountRaw` together.', {
          param: mint === undefined ? 'mint' : 'amountRaw',
        });
      }
      const tokens =
        mint !== undefined && amountRaw !== undefined && amountRaw > 0n ? { mint, amountRaw } : null;
      if (lamports === 0n && !tokens) {
        throw new AppError(
          'MH_016',
          'Nothing to withdraw: give `lamports`, or `mint` and `amountRaw`, above 0.',
          {
            param: 'lamports',
          },
        );
      }
      const result = await withdrawEarnings(deps.earnings, { destination, lamports, tokens });
      return {
        signature: result.signature,
        destination: result.destination,
        lamports: String(result.lamports),
        tokens: result.tokens && { mint: result.tokens.mint, amountRaw: String(result.tokens.amountRaw) },
        message: result.message,
      };
    },
  );
}
