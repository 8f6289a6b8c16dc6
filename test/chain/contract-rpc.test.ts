// The chain contract on the RPC client, talking to the local JSON-RPC endpoint.
import { startLocalChain } from '../../src/chain/local/start.ts';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import { createManualClock } from '../../src/domain/clock.ts';
import { chainContract } from './contract.ts';
import { slotsMs } from './helpers.ts';

chainContract('RPC client against the local endpoint', async () => {
  const clock = createManualClock(new Date('2026-04-01T00:00:00Z'));
  const local = await startLocalChain({ rpcPort: 0, clock, autoTick: false });
  return {
    chain: createRpcChain({ rpcUrl: local.rpcUrl as string, maxAttempts: 1 }),
    cheats: local.cheats,
    advanceSlots: (slots) => clock.advance(slotsMs(slots)),
    close: () => local.close(),
  };
});
