import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type Address,
  blockhash,
  compileTransaction,
  generateKeyPairSigner,
  getTransactionSize,
  type Instruction,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import {
  planChainRecovery,
  type RecoveryPlanInput,
  recoveryTransactionMessage,
} from './chain-recovery-plan.ts';
import { NATIVE_MINT_ADDRESS, type RouteAccount } from './router.ts';

const fresh = async () => (await generateKeyPairSigner()).address;
const freshList = (count: number) => Promise.all(Array.from({ length: count }, fresh));

/** A 10-hop route with every account still open: the largest a recovery handles. */
async function largestRoute(mint: Address): Promise<RouteAccount> {
  const [source, keeper, custody, recipient, wallet, feeToken] = await freshList(6);
  return {
    version: 1,
    status: 'failed',
    hopCount: 10,
    hopsRegistered: 9,
    nextStep: 3,
    routeBump: 255,
    custodyBump: 254,
    screening: 0,
    stepsLive: 0x3ff,
    tokensLive: 0x3ff,
    inOrchestrator: true,
    routeId: 7n,
    source: source!,
    mint,
    recipient: recipient!,
    recipientToken: recipient!,
    keeper: keeper!,
    custody: custody!,
    platformWallet: wallet!,
    platformFeeToken: feeToken!,
    integratorWallet: wallet!,
    integratorFeeToken: feeToken!,
    amount: 1_000n,
    netAmount: 990n,
    platformFeeTokens: 10n,
    integratorFeeTokens: 0n,
    platformFlatLamports: 30_000n,
    integratorFlatLamports: 0n,
    depositLamports: 0n,
    createdAt: 0n,
    firstReleaseAt: 60n,
    intervalSecs: 60n,
    deadlineAt: 4_200n,
    closedAt: 0n,
    hops: await freshList(9),
  };
}

async function planOf(native: boolean): Promise<{ input: RecoveryPlanInput; plan: Instruction[][] }> {
  const source = await generateKeyPairSigner();
  const holder = await generateKeyPairSigner();
  const route = await largestRoute(native ? NATIVE_MINT_ADDRESS : await fresh());
  const input: RecoveryPlanInput = {
    kind: 'rescue',
    programAddress: await fresh(),
    source,
    routeAddress: await fresh(),
    route,
    orchestrator: await fresh(),
    steps: await freshList(10),
    closeOrchestrator: true,
    sourceToken: native ? holder.address : await fresh(),
    openSourceToken: !native,
    unwrap: native ? { holder, rent: 2_039_280n } : null,
  };
  return { input, plan: planChainRecovery(input).map((planned) => planned.instructions) };
}

/** The router instruction of a planned transaction: the one of the program. */
const routerInstruction = (input: RecoveryPlanInput, instructions: Instruction[]) => {
  const found = instructions.find((instruction) => instruction.programAddress === input.programAddress);
  assert.ok(found);
  return found;
};

describe('planChainRecovery', () => {
  for (const native of [false, true]) {
    test(`a 10-hop ${native ? 'native-SOL' : 'SPL'} route: two transactions of at most 1,232 bytes, token accounts first, the orchestrator with the last`, async () => {
      const { input, plan } = await planOf(native);
      assert.equal(plan.length, 2);
      const closed = plan.map((instructions) =>
        routerInstruction(input, instructions)
          .accounts!.slice(5)
          .map((account) => account.address),
      );
      assert.deepEqual(closed.flat(), [input.route.custody, ...input.route.hops, ...input.steps]);
      assert.deepEqual(closed[0]?.length, 12);
      assert.deepEqual(
        plan.map((instructions) => Array.from(routerInstruction(input, instructions).data!)),
        [
          [9, 0],
          [9, 1],
        ],
      );
      for (const instructions of plan) {
        const message = recoveryTransactionMessage({
          signer: input.source,
          instructions,
          lifetime: { blockhash: blockhash('11111111111111111111111111111111'), lastValidBlockHeight: 0n },
          computeUnits: 1_400_000,
          computeUnitPrice: 1_000n,
        });
        assert.ok(getTransactionSize(compileTransaction(message)) <= 1232);
      }
      if (native) {
        // The unwrap follows the rescue in the first transaction; the second ends with the router's.
        assert.equal(plan[0]?.at(-1)?.programAddress, TOKEN_PROGRAM_ADDRESS);
      }
      assert.equal(plan[1]?.at(-1)?.programAddress, input.programAddress);
    });
  }
});
