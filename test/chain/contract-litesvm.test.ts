// The chain contract on the in-process LiteSVM chain.
import { startLocalChain } from '../../src/chain/local/start.ts';
import { createManualClock } from '../../src/domain/clock.ts';
import { chainContract } from './contract.ts';
import { slotsMs } from './helpers.ts';

chainContract('LiteSVM in process', async () => {
  const clock = createManualClock(new Date('2026-04-01T00:00:00Z'));
  const local = await startLocalChain({ serve: false, clock, autoTick: false });
  return {
    chain: local.chain,
    cheats: local.cheats,
    advanceSlots: (slots) => clock.advance(slotsMs(slots)),
    close: () => local.close(),
  };
});
