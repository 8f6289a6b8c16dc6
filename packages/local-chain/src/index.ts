// The package's public entry: start a chain, and the types its options and answers use.

export { LedgerInputError, type ProgramDeployment, type TimeTravelTarget } from './cheats.ts';
export type { Clock } from './clock.ts';
export type { Block, EpochInfo, Ledger } from './ledger.ts';
export { parseTokenProgram, type TokenProgramImplementation } from './legacy-token.ts';
export { ChainDataError } from './persistence.ts';
export {
  type ChainProfile,
  type ChainProfileName,
  chainProfile,
  chainProfileFromEnv,
  parseChainProfile,
} from './profile.ts';
export type { ChainLog } from './rpc-subscriptions.ts';
export {
  type LocalChain,
  type LocalChainCheats,
  type LocalChainOptions,
  startLocalChain,
} from './start.ts';
