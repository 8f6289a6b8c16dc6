// A service process's part in a reward claim, run as a process of its own so that a test can kill
// it with SIGKILL at a chosen moment, as a crash would, and start another.
//
// `node test/rewards/claim-process.ts claim`: creates and sends a claim as POST /rewards/claim
// does, through a chain whose sendTransaction kills this process (SIGKILL) right after the
// transaction was sent (KILL=after-send) or right before (KILL=before-send).
// `node test/rewards/claim-process.ts resume`: runs one round of the reward claim worker, as a
// restarted process does, and prints how many claims it took over.
//
// Environment: DATABASE_URL, RPC_URL, FEE_WALLET_KEYPAIR (keygen JSON), NOW (ISO time of the
// process's clock), and for `claim`: INTEGRATION_ID, MODE, API_KEY_ID, IDEMPOTENCY_KEY, KILL.
import { pino } from 'pino';
import { findConfigPda } from '../../src/chain/router/pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../../src/chain/router/program.ts';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import type { Chain } from '../../src/chain/types.ts';
import { keypairFromKeygenJson } from '../../src/platform/keypair.ts';
import { createPostgresDb } from '../../src/store/db.ts';
import { createRewardStore } from '../../src/store/rewards.ts';
import { type ClaimDeps, createClaim, settleClaim } from '../../src/use-cases/claim-rewards.ts';
import { createRewardClaimWorker } from '../../src/workers/reward-claims.ts';

const env = (name: string) => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};

const db = createPostgresDb({ url: env('DATABASE_URL'), poolSize: 2 });
const chain = createRpcChain({ rpcUrl: env('RPC_URL') }) as Chain;
const now = new Date(env('NOW'));
const deps: ClaimDeps = {
  db,
  rewards: createRewardStore(db),
  chain,
  platform: {
    programAddress: ROUTER_PROGRAM_ADDRESS,
    configAddress: (await findConfigPda(ROUTER_PROGRAM_ADDRESS))[0],
    feeWalletSigner: await keypairFromKeygenJson(JSON.parse(env('FEE_WALLET_KEYPAIR'))).signer(),
  },
  clock: { now: () => now },
  pollMs: 20,
};

if (process.argv[2] === 'resume') {
  const worker = createRewardClaimWorker({ ...deps, chain, log: pino({ level: 'silent' }) });
  process.stdout.write(`${JSON.stringify({ resumed: await worker.runOnce() })}\n`);
  await db.close();
} else {
  const kill = env('KILL');
  const dying: ClaimDeps['chain'] = {
    ...chain,
    async sendTransaction(transaction, options) {
      if (kill === 'before-send') process.kill(process.pid, 'SIGKILL');
      const signature = await chain.sendTransaction(transaction, options);
      process.kill(process.pid, 'SIGKILL');
      return signature;
    },
  };
  const claim = await createClaim(
    { ...deps, chain: dying },
    {
      owner: { integrationId: Number(env('INTEGRATION_ID')), mode: env('MODE') as 'test' | 'live' },
      minimumLamports: 1_000_000n,
      request: { apiKeyId: Number(env('API_KEY_ID')), idempotencyKey: env('IDEMPOTENCY_KEY') },
    },
  );
  await settleClaim({ ...deps, chain: dying }, claim, {
    firstSend: true,
    signal: AbortSignal.timeout(10_000),
  });
  throw new Error('the process should have been killed when it sent the claim');
}
