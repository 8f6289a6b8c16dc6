import {
  type Address,
  appendTransactionMessageInstructions,
  type Base64EncodedWireTransaction,
  type Blockhash,
  compileTransaction,
  createNoopSigner,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  type Instruction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
} from '@solana/kit';
import {
  setTransactionMessageComputeUnitPrice,
  updateOrAppendSetComputeUnitLimitInstruction,
} from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import {
  ORCHESTRATOR_ACCOUNT_SIZE,
  ROUTE_ACCOUNT_SIZE,
  STEP_ACCOUNT_SIZE,
  TOKEN_ACCOUNT_SIZE,
} from '../../src/chain/router/accounts.ts';
import { MAX_HOPS_IN_ADD_HOPS_TX, MAX_HOPS_IN_CREATE_ROUTE_TX } from '../../src/chain/router/bundle.ts';
import { COMPUTE_UNIT_LIMITS } from '../../src/chain/router/footprint.ts';
import {
  getAddHopsInstruction,
  getCreateRouteInstruction,
  getInitOrchestratorInstruction,
  getInitStepsInstruction,
} from '../../src/chain/router/instructions.ts';
import { findRouteAddresses } from '../../src/chain/router/pda.ts';
import { hopBudgetPrice, keeperFundingLamports } from '../../src/domain/priority-fees.ts';
import { routeSchedule } from '../../src/domain/route.ts';

/**
 * What prepare does for the first prepare of a fresh SPL-token route, written directly with
 * `@solana/kit` and the router program's instruction builders, with nothing of the service
 * around it: the same JSON-RPC calls against the same endpoint (blockhash, clock, recent priority
 * fees, rent, the route's and the source's accounts, one simulation per transaction), then the
 * same transactions built and partially signed by the fresh intermediate accounts. Every read is
 * issued at once, then every simulation at once: the least waiting the work allows.
 */

const CLOCK_SYSVAR = 'SysvarC1ock11111111111111111111111111111111' as Address;
const MAX_COMPUTE_UNIT_LIMIT = 1_400_000;

export interface BaselinePlatform {
  programAddress: Address;
  configAddress: Address;
  screeningRequired: boolean;
  routeGraceSeconds: number;
  priorityFeeFloor: bigint;
  priorityFeeCap: bigint;
  hopPriorityBudgetMultiplier: number;
}

/** The terms of a created transfer, as the API answers them. */
export interface BaselineTransfer {
  id: number;
  hops: number;
  amountRaw: bigint;
  percentFeeBps: number;
  flatFeeLamportsPerHop: bigint;
  arrivalSeconds: number;
  sourceOwner: Address;
  recipientWallet: Address;
  tokenMint: Address;
}

/** One group of the bundle: its transactions in base64, in broadcast order. */
export interface BaselineBundle {
  keeperFundingTx: Base64EncodedWireTransaction;
  routeInitTxs: Base64EncodedWireTransaction[];
  orchestratorInitTx: Base64EncodedWireTransaction;
  sessionInitTxs: Base64EncodedWireTransaction[];
}

/** A prepare done directly against a JSON-RPC endpoint; see the file's comment. */
export function createPrepareBaseline(rpcUrl: string, platform: BaselinePlatform) {
  const rpc = createSolanaRpc(rpcUrl);
  const commitment = 'confirmed';

  return async function prepare(transfer: BaselineTransfer): Promise<BaselineBundle> {
    const source = createNoopSigner(transfer.sourceOwner);
    const mint = transfer.tokenMint;
    const ata = (owner: Address) =>
      findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }).then(([a]) => a);
    const [addresses, sourceToken, feeToken, recipientToken, keeper, hopSigners] = await Promise.all([
      findRouteAddresses(
        { source: source.address, routeId: BigInt(transfer.id), hopCount: transfer.hops },
        platform.programAddress,
      ),
      ata(source.address),
      // The platform's fees settle into the config account's token account of the mint.
      ata(platform.configAddress),
      ata(transfer.recipientWallet),
      generateKeyPairSigner(),
      Promise.all(Array.from({ length: transfer.hops - 1 }, generateKeyPairSigner)),
    ]);
    const route = addresses.route[0];
    const rent = (size: number) => rpc.getMinimumBalanceForRentExemption(BigInt(size), { commitment }).send();
    const [lifetime, clock, fees, keeperRent, , , , , routeAccounts, sourceAccounts] = await Promise.all([
      rpc.getLatestBlockhash({ commitment }).send(),
      rpc.getAccountInfo(CLOCK_SYSVAR, { encoding: 'base64', commitment }).send(),
      rpc.getRecentPrioritizationFees([source.address, route]).send(),
      rent(0),
      rent(ROUTE_ACCOUNT_SIZE),
      rent(TOKEN_ACCOUNT_SIZE),
      rent(ORCHESTRATOR_ACCOUNT_SIZE),
      rent(STEP_ACCOUNT_SIZE),
      rpc
        .getMultipleAccounts(
          [
            route,
            addresses.orchestrator[0],
            keeper.address,
            addresses.custody[0],
            ...addresses.steps.map(([step]) => step),
          ],
          { encoding: 'base64', commitment },
        )
        .send(),
      rpc
        .getMultipleAccounts(
          [source.address, sourceToken, feeToken, recipientToken, platform.configAddress],
          {
            encoding: 'base64',
            commitment,
          },
        )
        .send(),
    ]);
    if (routeAccounts.value[0] !== null || sourceAccounts.value[4] === null) {
      throw new Error('the baseline builds the first deployment of a route, on a set-up platform');
    }
    const t0 = Buffer.from(clock.value!.data[0], 'base64').readBigInt64LE(32);

    // The 75th percentile of the recent prices, within the service's floor and cap.
    const prices = fees.map((fee) => fee.prioritizationFee).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const observed = prices[Math.min(prices.length - 1, Math.floor(0.75 * prices.length))] ?? 0n;
    const price =
      observed < platform.priorityFeeFloor
        ? platform.priorityFeeFloor
        : observed > platform.priorityFeeCap
          ? platform.priorityFeeCap
          : observed;
    const terms = {
      routeId: BigInt(transfer.id),
      hopCount: transfer.hops,
      amount: transfer.amountRaw,
      percentFeeBps: transfer.percentFeeBps,
      integratorShareBps: 0,
      flatFeePerHopLamports: transfer.flatFeeLamportsPerHop,
      ...routeSchedule({
        t0,
        arrivalSeconds: transfer.arrivalSeconds,
        hops: transfer.hops,
        graceSeconds: platform.routeGraceSeconds,
      }),
      keeper: keeper.address,
      recipient: transfer.recipientWallet,
      recipientToken,
      integratorWallet: platform.configAddress,
      screeningRequired: platform.screeningRequired,
      // The config's screening deposit (after its tag and three keys), the most the source agrees to.
      maxDepositLamports: platform.screeningRequired
        ? Buffer.from(sourceAccounts.value[4]!.data[0], 'base64').readBigUInt64LE(104)
        : 0n,
    };
    const hopsInCreate = hopSigners.slice(0, MAX_HOPS_IN_CREATE_ROUTE_TX);
    const addHops = [];
    for (
      let first = MAX_HOPS_IN_CREATE_ROUTE_TX;
      first < hopSigners.length;
      first += MAX_HOPS_IN_ADD_HOPS_TX
    ) {
      const hops = hopSigners.slice(first, first + MAX_HOPS_IN_ADD_HOPS_TX);
      addHops.push(
        getAddHopsInstruction(
          { source, route, mint, existingHopCount: first, hops },
          platform.programAddress,
        ),
      );
    }

    const message = (instructions: Instruction[], version: 0 | 'legacy', units: number) =>
      pipe(
        createTransactionMessage({ version }),
        (m) => setTransactionMessageFeePayerSigner(source, m),
        (m) =>
          setTransactionMessageLifetimeUsingBlockhash(
            {
              blockhash: lifetime.value.blockhash as Blockhash,
              lastValidBlockHeight: lifetime.value.lastValidBlockHeight,
            },
            m,
          ),
        (m) => appendTransactionMessageInstructions(instructions, m),
        (m) => setTransactionMessageComputeUnitPrice(price, m),
        (m) => updateOrAppendSetComputeUnitLimitInstruction(units, m),
      );
    const build = async (instructions: Instruction[], version: 0 | 'legacy', fallbackUnits: number) => {
      const simulated = await rpc
        .simulateTransaction(
          getBase64EncodedWireTransaction(
            compileTransaction(message(instructions, version, MAX_COMPUTE_UNIT_LIMIT)),
          ),
          { encoding: 'base64', sigVerify: false, replaceRecentBlockhash: true, commitment },
        )
        .send();
      const units =
        simulated.value.err === null && simulated.value.unitsConsumed !== undefined
          ? Math.ceil(Number(simulated.value.unitsConsumed) * 1.1) + 1_000
          : fallbackUnits;
      return getBase64EncodedWireTransaction(
        await partiallySignTransactionMessageWithSigners(message(instructions, version, units)),
      );
    };

    const [keeperFundingTx, createRouteTx, orchestratorInitTx, addHopsTxs, sessionInitTx] = await Promise.all(
      [
        build(
          [
            getCreateAssociatedTokenIdempotentInstruction({
              payer: source,
              ata: feeToken,
              owner: platform.configAddress,
              mint,
            }),
            getTransferSolInstruction({
              source,
              destination: keeper.address,
              amount: keeperFundingLamports({
                hops: transfer.hops,
                rentExemptMinimum: keeperRent,
                hopComputeUnitLimit: COMPUTE_UNIT_LIMITS.executeStep,
                budgetMicroLamportsPerCu: hopBudgetPrice(price, {
                  capMicroLamportsPerCu: platform.priorityFeeCap,
                  hopBudgetMultiplier: platform.hopPriorityBudgetMultiplier,
                }),
              }),
            }),
          ],
          0,
          COMPUTE_UNIT_LIMITS.keeperFunding,
        ),
        build(
          [
            getCreateRouteInstruction(
              {
                source,
                route: addresses.route,
                custody: addresses.custody,
                sourceToken,
                mint,
                config: platform.configAddress,
                platformFeeToken: feeToken,
                integratorFeeToken: feeToken,
                hops: hopsInCreate,
                terms,
              },
              platform.programAddress,
            ),
          ],
          0,
          COMPUTE_UNIT_LIMITS.createRoute,
        ),
        build(
          [
            getInitOrchestratorInstruction(
              { source, orchestrator: addresses.orchestrator },
              platform.programAddress,
            ),
          ],
          'legacy',
          COMPUTE_UNIT_LIMITS.orchestratorInit,
        ),
        Promise.all(addHops.map((instruction) => build([instruction], 0, COMPUTE_UNIT_LIMITS.addHops))),
        build(
          [
            getCreateAssociatedTokenIdempotentInstruction({
              payer: source,
              ata: recipientToken,
              owner: transfer.recipientWallet,
              mint,
            }),
            getInitStepsInstruction(
              {
                source,
                route,
                orchestrator: addresses.orchestrator[0],
                recipientHolder: recipientToken,
                steps: addresses.steps.map((pda, index) => ({ index, pda })),
              },
              platform.programAddress,
            ),
          ],
          0,
          COMPUTE_UNIT_LIMITS.sessionInit,
        ),
      ],
    );
    return {
      keeperFundingTx,
      routeInitTxs: [createRouteTx, ...addHopsTxs],
      orchestratorInitTx,
      sessionInitTxs: [sessionInitTx],
    };
  };
}
