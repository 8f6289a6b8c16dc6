// The chain interface the service codes against. Each capability is its own small interface, so a
// caller asks only for what it needs (`deps: { chain: MintReader & RentReader }`), and tests can
// hand it any object that has those methods. `Chain` is all of them together, implemented by
// createRpcChain over any Solana JSON-RPC endpoint, the embedded local chain's included.
//
// Every method takes an AbortSignal; every failure is a ChainError (see errors.ts).
import type {
  Address,
  Base64EncodedWireTransaction,
  Blockhash,
  Commitment,
  EncodedAccount,
  Lamports,
  MicroLamports,
  Signature,
  TransactionError,
} from '@solana/kit';

/** Options every chain call accepts. */
export interface CallOptions {
  signal?: AbortSignal;
}

/** Options of calls that read state. */
export interface ReadOptions extends CallOptions {
  /** Defaults to the implementation's commitment (`confirmed` for RPC). */
  commitment?: Commitment;
}

/** A serialized, signed transaction: raw bytes or their base64 text. */
export type WireTransactionInput = Uint8Array | Base64EncodedWireTransaction;

/** The base fields of an SPL Token or Token-2022 mint. */
export interface MintInfo {
  address: Address;
  /** The token program that owns the mint. */
  programAddress: Address;
  decimals: number;
  supply: bigint;
  mintAuthority: Address | null;
  freezeAuthority: Address | null;
}

/** Reads mints. Throws CHAIN_ACCOUNT_NOT_FOUND when absent, CHAIN_INVALID_ACCOUNT when not a mint. */
export interface MintReader {
  getMintDecimals(mint: Address, options?: ReadOptions): Promise<number>;
  getMint(mint: Address, options?: ReadOptions): Promise<MintInfo>;
}

/** Reads the rent sysvar's figures. */
export interface RentReader {
  /** Lamports an account of `dataLength` bytes must hold to be rent exempt. */
  getMinimumBalanceForRentExemption(dataLength: number | bigint, options?: ReadOptions): Promise<Lamports>;
}

/** Reads raw accounts; a missing account is null. */
export interface AccountReader {
  getAccount(address: Address, options?: ReadOptions): Promise<EncodedAccount | null>;
  /** Same order as `addresses`; any number of addresses (batched under the hood). */
  getAccounts(addresses: readonly Address[], options?: ReadOptions): Promise<(EncodedAccount | null)[]>;
}

/** Reads SOL balances (0 for a missing account). */
export interface BalanceReader {
  getBalance(address: Address, options?: ReadOptions): Promise<Lamports>;
}

/** The base fields of an SPL Token or Token-2022 token account. */
export interface TokenAccountInfo {
  address: Address;
  programAddress: Address;
  mint: Address;
  owner: Address;
  amount: bigint;
  delegate: Address | null;
  delegatedAmount: bigint;
  state: 'initialized' | 'frozen';
  closeAuthority: Address | null;
  /** Rent-exempt reserve of a wrapped-SOL account, else null. */
  isNative: bigint | null;
}

/** A token amount in base units with the mint's decimals. */
export interface TokenAmount {
  amount: bigint;
  decimals: number;
}

/** Reads token accounts. */
export interface TokenAccountReader {
  /** Null when absent; CHAIN_INVALID_ACCOUNT when the account is not a token account. */
  getTokenAccount(address: Address, options?: ReadOptions): Promise<TokenAccountInfo | null>;
  /** CHAIN_ACCOUNT_NOT_FOUND when absent; CHAIN_INVALID_ACCOUNT when not a token account. */
  getTokenAccountBalance(address: Address, options?: ReadOptions): Promise<TokenAmount>;
}

/** A blockhash to sign with, and the last block height at which it is still accepted. */
export interface BlockhashLifetime {
  blockhash: Blockhash;
  lastValidBlockHeight: bigint;
}

/** Reads blockhashes. */
export interface BlockhashReader {
  getLatestBlockhash(options?: ReadOptions): Promise<BlockhashLifetime>;
  isBlockhashValid(blockhash: Blockhash, options?: ReadOptions): Promise<boolean>;
}

/** Reads the chain's progress. */
export interface BlockHeightReader {
  getBlockHeight(options?: ReadOptions): Promise<bigint>;
  getSlot(options?: ReadOptions): Promise<bigint>;
}

/** The Clock sysvar: what on-chain programs see as "now". */
export interface ChainClock {
  slot: bigint;
  epoch: bigint;
  /** Unix seconds. */
  unixTimestamp: bigint;
}

/** Reads the Clock sysvar. */
export interface ClockReader {
  getClock(options?: ReadOptions): Promise<ChainClock>;
}

/** Where a transaction stands. */
export interface SignatureStatus {
  slot: bigint;
  err: TransactionError | null;
  confirmationStatus: Commitment | null;
}

/** Reads signature statuses; null for a signature the chain does not know (yet). */
export interface SignatureStatusReader {
  getSignatureStatuses(
    signatures: readonly Signature[],
    options?: CallOptions & { searchTransactionHistory?: boolean },
  ): Promise<(SignatureStatus | null)[]>;
}

/** A token balance before or after a transaction. */
export interface TransactionTokenBalance {
  accountIndex: number;
  account: Address;
  mint: Address;
  owner: Address | null;
  programAddress: Address | null;
  amount: bigint;
  decimals: number;
}

/** A landed transaction. */
export interface ChainTransaction {
  signature: Signature;
  slot: bigint;
  /** Unix seconds, when known. */
  blockTime: bigint | null;
  err: TransactionError | null;
  logs: readonly string[];
  /** Every program the transaction invoked, top level and CPI, in first-invocation order. */
  invokedPrograms: readonly Address[];
  fee: Lamports;
  computeUnitsConsumed: bigint | null;
  /** Static keys followed by keys loaded from address lookup tables (writable, then read-only). */
  accountKeys: readonly Address[];
  preBalances: readonly Lamports[];
  postBalances: readonly Lamports[];
  preTokenBalances: readonly TransactionTokenBalance[];
  postTokenBalances: readonly TransactionTokenBalance[];
}

/** Reads landed transactions; null when unknown. */
export interface TransactionReader {
  getTransaction(signature: Signature, options?: CallOptions): Promise<ChainTransaction | null>;
}

/** Options of sendTransaction. */
export interface SendOptions extends CallOptions {
  skipPreflight?: boolean;
  preflightCommitment?: Commitment;
}

/** The lowest prioritization fee paid in one recent slot, as `getRecentPrioritizationFees` lists it. */
export interface RecentPrioritizationFee {
  slot: bigint;
  /** Micro-lamports per compute unit. */
  prioritizationFee: MicroLamports;
}

/** Reads recent prioritization fees, to price a transaction's compute units. */
export interface PriorityFeeReader {
  /**
   * The fees of the recent slots the node remembers (up to 150), counting only transactions that
   * lock every one of `addresses` (at most 128) as writable, or any transaction when it is empty.
   */
  getRecentPrioritizationFees(
    addresses: readonly Address[],
    options?: CallOptions,
  ): Promise<RecentPrioritizationFee[]>;
}

/** Sends signed transactions. */
export interface TransactionSender {
  /**
   * Broadcasts a signed transaction and returns its signature. Sending bytes that already landed
   * is not an error: it returns the signature again. Preflight failures throw
   * CHAIN_PREFLIGHT_FAILED (or CHAIN_BLOCKHASH_NOT_FOUND) with the logs in `context`.
   */
  sendTransaction(transaction: WireTransactionInput, options?: SendOptions): Promise<Signature>;
}

/** Result of a simulation. */
export interface SimulationResult {
  err: TransactionError | null;
  logs: readonly string[];
  unitsConsumed: bigint | null;
  returnData: { programAddress: Address; data: Uint8Array } | null;
  /** The blockhash put in when `replaceRecentBlockhash` was asked for. */
  replacementBlockhash: BlockhashLifetime | null;
}

/** Simulates transactions. */
export interface TransactionSimulator {
  simulateTransaction(
    transaction: WireTransactionInput,
    options?: CallOptions & { sigVerify?: boolean; replaceRecentBlockhash?: boolean },
  ): Promise<SimulationResult>;
}

/** Everything the service asks of a chain. */
export type Chain = MintReader &
  RentReader &
  AccountReader &
  BalanceReader &
  TokenAccountReader &
  BlockhashReader &
  BlockHeightReader &
  ClockReader &
  SignatureStatusReader &
  TransactionReader &
  PriorityFeeReader &
  TransactionSender &
  TransactionSimulator;
