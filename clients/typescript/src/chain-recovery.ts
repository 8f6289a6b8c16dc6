import {
  type Address,
  address,
  assertIsSendableTransaction,
  assertIsTransactionWithinSizeLimit,
  compileTransaction,
  fetchEncodedAccounts,
  type GetLatestBlockhashApi,
  type GetMinimumBalanceForRentExemptionApi,
  type GetMultipleAccountsApi,
  type GetTransactionApi,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getI64Decoder,
  getSignatureFromTransaction,
  getU64Decoder,
  type MaybeEncodedAccount,
  type Rpc,
  type Signature,
  type SimulateTransactionApi,
  signTransactionMessageWithSigners,
  type TransactionPartialSigner,
} from '@solana/kit';
import { findAssociatedTokenPda, getTokenSize, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { assertRecoveryAllowed, ChainRecoveryError } from './chain-recovery-error.ts';
import {
  type PlannedTransaction,
  planChainRecovery,
  recoveryTransactionMessage,
} from './chain-recovery-plan.ts';
import { computeUnitLimit, MAX_COMPUTE_UNIT_LIMIT } from './landing/index.ts';
import {
  type ChainRecoveryKind,
  decodeOrchestratorAccount,
  decodeRecoveryReturn,
  decodeRouteAccount,
  findLiveStepAddresses,
  findOrchestratorAddress,
  findRouteAddress,
  liveTokenAccounts,
  NATIVE_MINT_ADDRESS,
  type RecoveryReturn,
  type RouteAccount,
  type RouteStatus,
} from './router.ts';
import { type LandingRpcApi, landSigned } from './send.ts';

/*
 * A source wallet's way out that needs nothing of the service: it reads its route on chain, asks
 * the router program for everything back (Rescue, or Reclaim after the route ended), signs and
 * sends the transactions itself, and reads what came back from the confirmed transactions.
 */

/** What a recovery from the chain asks of an RPC node (`createSolanaRpc` answers all of it). */
export type ChainRecoveryRpc = Rpc<
  GetMultipleAccountsApi &
    GetMinimumBalanceForRentExemptionApi &
    GetLatestBlockhashApi &
    SimulateTransactionApi &
    GetTransactionApi &
    LandingRpcApi
>;

/** A route: its address, or the source wallet and the transfer's id it was derived from. */
export type RouteLocator = Address | { source: Address; transferId: number | bigint };

export interface ChainRecoveryOptions {
  /** The route's source wallet: the only key the program accepts; it signs and pays every transaction. */
  signer: TransactionPartialSigner;
  rpc: ChainRecoveryRpc;
  /** The router program's address on this cluster. */
  programAddress: Address;
  route: RouteLocator;
  /** A priority fee, in micro-lamports per compute unit (default none). */
  computeUnitPrice?: bigint;
  /** Commitment of the reads, and at which each transaction lands before the next is sent (default `confirmed`). */
  commitment?: 'confirmed' | 'finalized';
  signal?: AbortSignal;
  onProgress?: (progress: ChainRecoveryProgress) => void | Promise<void>;
}

/** What {@link rescueFromChain} or {@link reclaimRentFromChain} is doing, for a progress display or a log. */
export type ChainRecoveryProgress =
  /** The route was read and the program allows the recovery: `transactions` to sign and send. */
  | { kind: 'planned'; route: Address; status: RouteStatus; transactions: number }
  /** Transaction `index` of `count` landed and is confirmed. */
  | { kind: 'confirmed'; index: number; count: number; transaction: ChainRecoveryTransaction };

/** One confirmed transaction of a recovery and what it gave the source, read from its metadata. */
export interface ChainRecoveryTransaction {
  signature: Signature;
  /** The network fee the source paid for it. */
  fee: bigint;
  /**
   * What the source's wallet gained, the fee added back: the route's rent, refunded flat fee and
   * deposit, and on a native-SOL route the unwrapped SOL too.
   */
  lamports: bigint;
  /** Tokens the route's token accounts gave back (base units; on a native-SOL route, unwrapped into `lamports`). */
  tokens: bigint;
  /**
   * The program's own account of the instruction (its return data); null in a native-SOL
   * transaction that unwraps the SOL after it, since every instruction resets return data.
   */
  recovery: RecoveryReturn | null;
}

/** The answer of {@link rescueFromChain} and {@link reclaimRentFromChain}. */
export interface ChainRecoveryResult {
  route: Address;
  /**
   * The route's status when read, before anything was sent; `closed` when no route account is
   * left (an earlier run, or the service, returned everything; or no route was ever created there).
   */
  status: RouteStatus | 'closed';
  /** Every transaction sent, in order (none when nothing was left). */
  transactions: ChainRecoveryTransaction[];
  /** Tokens back, all transactions together. */
  tokens: bigint;
  /** Lamports the source's wallet gained, all transactions together, network fees added back. */
  lamports: bigint;
  /** Network fees the source paid. */
  fees: bigint;
  /**
   * What stays behind: the route's keeper and its balance when read. Only the service holds the
   * keeper's key, so only the service's rescue or reclaim can sweep it back. Null when the route
   * was already closed.
   */
  keeper: { address: Address; lamports: bigint } | null;
}

const CLOCK_SYSVAR_ADDRESS = address('SysvarC1ock11111111111111111111111111111111');
/** Offset of `unix_timestamp` in the Clock sysvar (after slot, epoch start, epoch, leader schedule epoch). */
const CLOCK_UNIX_TIMESTAMP_OFFSET = 32;
/** Offset of `amount` in an SPL Token account. */
const TOKEN_AMOUNT_OFFSET = 64;

/** The route account as read, with the chain's clock at the read. */
interface RouteRead {
  address: Address;
  route: RouteAccount | null;
  chainTime: bigint;
}

/** Reads the route account and the chain's clock in one call. */
async function readRoute(options: ChainRecoveryOptions): Promise<RouteRead> {
  const { route: locator, programAddress } = options;
  const address =
    typeof locator === 'string'
      ? locator
      : await findRouteAddress(programAddress, locator.source, locator.transferId);
  const [account, clock] = await fetchEncodedAccounts(options.rpc, [address, CLOCK_SYSVAR_ADDRESS], {
    commitment: options.commitment ?? 'confirmed',
    ...(options.signal ? { abortSignal: options.signal } : {}),
  });
  if (!clock?.exists) throw new Error('the RPC node did not answer the Clock sysvar');
  const chainTime = getI64Decoder().decode(clock.data, CLOCK_UNIX_TIMESTAMP_OFFSET);
  if (!account?.exists) return { address, route: null, chainTime };
  const route = account.programAddress === programAddress ? decodeRouteAccount(account.data) : null;
  if (!route) {
    throw new ChainRecoveryError(
      'not_a_route',
      `account ${address} is not a route of program ${programAddress}`,
      {
        route: address,
      },
    );
  }
  return { address, route, chainTime };
}

const tokenAmount = (account: MaybeEncodedAccount | undefined) =>
  account?.exists && account.data.length === getTokenSize()
    ? getU64Decoder().decode(account.data, TOKEN_AMOUNT_OFFSET)
    : 0n;

/** Reads what the plan depends on: the orchestrator, the keeper, the source's token account, the route's token balances. */
async function planFor(
  kind: ChainRecoveryKind,
  options: ChainRecoveryOptions,
  address: Address,
  route: RouteAccount,
) {
  const { programAddress, signer, rpc } = options;
  const tokenAccounts = liveTokenAccounts(route);
  const [orchestrator, sourceAta, steps] = await Promise.all([
    findOrchestratorAddress(programAddress, signer.address),
    findAssociatedTokenPda({
      owner: signer.address,
      mint: route.mint,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    }).then(([address]) => address),
    findLiveStepAddresses(programAddress, address, route),
  ]);
  const [orchestratorAccount, keeperAccount, sourceAtaAccount, ...tokenAccountsRead] =
    await fetchEncodedAccounts(rpc, [orchestrator, route.keeper, sourceAta, ...tokenAccounts], {
      commitment: options.commitment ?? 'confirmed',
      ...(options.signal ? { abortSignal: options.signal } : {}),
    });
  const openRoutes =
    orchestratorAccount?.exists && orchestratorAccount.programAddress === programAddress
      ? decodeOrchestratorAccount(orchestratorAccount.data)?.openRoutes
      : undefined;
  const tokensBack = tokenAccountsRead.some((account) => tokenAmount(account) > 0n);
  const native = route.mint === NATIVE_MINT_ADDRESS;
  const unwrap =
    tokensBack && native
      ? {
          holder: await generateKeyPairSigner(),
          rent: await rpc
            .getMinimumBalanceForRentExemption(BigInt(getTokenSize()))
            .send(options.signal ? { abortSignal: options.signal } : {}),
        }
      : null;
  const transactions = planChainRecovery({
    kind,
    programAddress,
    source: signer,
    routeAddress: address,
    route,
    orchestrator,
    steps,
    // The program counts this route among the open ones until the route account closes.
    closeOrchestrator: openRoutes !== undefined && openRoutes - (route.inOrchestrator ? 1 : 0) === 0,
    sourceToken: unwrap?.holder.address ?? sourceAta,
    openSourceToken: tokensBack && !native && !sourceAtaAccount?.exists,
    unwrap,
  });
  const keeper = {
    address: route.keeper,
    lamports: keeperAccount?.exists ? BigInt(keeperAccount.lamports) : 0n,
  };
  return { transactions, keeper };
}

/** Measures a transaction's compute units by simulating it (signatures unchecked); null when it would fail. */
async function simulatedUnits(
  options: ChainRecoveryOptions,
  message: ReturnType<typeof recoveryTransactionMessage>,
): Promise<number | null> {
  const { value } = await options.rpc
    .simulateTransaction(getBase64EncodedWireTransaction(compileTransaction(message)), {
      encoding: 'base64',
      sigVerify: false,
      replaceRecentBlockhash: true,
      commitment: options.commitment ?? 'confirmed',
    })
    .send(options.signal ? { abortSignal: options.signal } : {});
  return value.err === null && value.unitsConsumed !== undefined ? Number(value.unitsConsumed) : null;
}

/**
 * Signs one planned transaction with the source (and the fresh account it opens), its compute
 * budget first and its limit from simulating it; lands it (sent again until confirmed, or a
 * `LandingError`) and reads what it gave the source from its metadata.
 */
async function sendPlanned(
  options: ChainRecoveryOptions,
  routeAddress: Address,
  planned: PlannedTransaction,
): Promise<ChainRecoveryTransaction> {
  const { rpc, signal } = options;
  const commitment = options.commitment ?? 'confirmed';
  const call = signal ? { abortSignal: signal } : {};
  const { value: lifetime } = await rpc.getLatestBlockhash({ commitment }).send(call);
  const messageWith = (computeUnits: number) =>
    recoveryTransactionMessage({
      signer: options.signer,
      instructions: planned.instructions,
      lifetime,
      computeUnits,
      computeUnitPrice: options.computeUnitPrice,
    });
  const probe = messageWith(MAX_COMPUTE_UNIT_LIMIT);
  // Checked before the wallet is asked: the limit's size does not depend on its value.
  assertIsTransactionWithinSizeLimit(compileTransaction(probe));
  // A failing simulation leaves the verdict to the send: its preflight answers the program's error.
  const units = computeUnitLimit(await simulatedUnits(options, probe), planned.fallbackUnits);
  const signed = await signTransactionMessageWithSigners(messageWith(units), call);
  assertIsSendableTransaction(signed);
  const signature = await landSigned(
    rpc,
    {
      base64: getBase64EncodedWireTransaction(signed),
      signature: getSignatureFromTransaction(signed),
      validUntil: lifetime.lastValidBlockHeight,
    },
    { commitment, signal },
  );
  return { signature, ...(await landed(options, routeAddress, signature)) };
}

/** What a confirmed transaction gave the source, from its metadata: balances before and after, and return data. */
async function landed(options: ChainRecoveryOptions, routeAddress: Address, signature: Signature) {
  const transaction = await options.rpc
    .getTransaction(signature, {
      commitment: options.commitment ?? 'confirmed',
      encoding: 'json',
      maxSupportedTransactionVersion: 0,
    })
    .send(options.signal ? { abortSignal: options.signal } : {});
  const meta = transaction?.meta;
  if (!meta) throw new Error(`transaction ${signature} is confirmed but its metadata could not be read`);
  const fee = BigInt(meta.fee);
  // The source pays the fees: it is the first account of the transaction.
  const lamports = BigInt(meta.postBalances[0] ?? 0n) - BigInt(meta.preBalances[0] ?? 0n) + fee;
  // Every route token account the transaction touches closes: what it held went to the source.
  const after = new Map(
    (meta.postTokenBalances ?? []).map((b) => [b.accountIndex, BigInt(b.uiTokenAmount.amount)]),
  );
  const tokens = (meta.preTokenBalances ?? [])
    .filter((balance) => balance.owner === routeAddress)
    .reduce(
      (sum, balance) => sum + BigInt(balance.uiTokenAmount.amount) - (after.get(balance.accountIndex) ?? 0n),
      0n,
    );
  const returned = meta.returnData;
  const recovery =
    returned && returned.programId === options.programAddress
      ? decodeRecoveryReturn(getBase64Encoder().encode(returned.data[0]))
      : null;
  return { fee, lamports, tokens, recovery };
}

/** Reads the route, checks the program allows `kind` now, then plans, signs and sends it. */
async function recoverFromChain(
  kind: ChainRecoveryKind,
  options: ChainRecoveryOptions,
): Promise<ChainRecoveryResult> {
  const read = await readRoute(options);
  const result: ChainRecoveryResult = {
    route: read.address,
    status: read.route?.status ?? 'closed',
    transactions: [],
    tokens: 0n,
    lamports: 0n,
    fees: 0n,
    keeper: null,
  };
  if (!read.route) return result;
  assertRecoveryAllowed(kind, read.address, read.route, options.signer.address, read.chainTime);
  const { transactions, keeper } = await planFor(kind, options, read.address, read.route);
  result.keeper = keeper;
  await options.onProgress?.({
    kind: 'planned',
    route: read.address,
    status: read.route.status,
    transactions: transactions.length,
  });
  for (const [index, planned] of transactions.entries()) {
    const transaction = await sendPlanned(options, read.address, planned);
    result.transactions.push(transaction);
    result.tokens += transaction.tokens;
    result.lamports += transaction.lamports;
    result.fees += transaction.fee;
    await options.onProgress?.({ kind: 'confirmed', index, count: transactions.length, transaction });
  }
  return result;
}

/**
 * Rescues a route from the chain alone, with no call to the service (stopped, or unreachable):
 * when the program allows it now (the route is `deploying`, `failed`, `flagged`, `rescued`, or
 * `active` past its deadline), every token goes back to the source's token account (opened when
 * missing; native SOL arrives unwrapped) with the flat fee, any screening deposit and the rent of
 * every route account, the orchestrator config's too when no other route of the source is open.
 * Signs each transaction with the source, its compute budget first and its limit from simulating
 * it, and lands them in order as the service lands its own (the same bytes sent again every 2 s),
 * each confirmed before the next. Throws a {@link ChainRecoveryError} when the program would
 * refuse (`before_deadline` names the deadline), a `LandingError` when a transaction did not land
 * (refused in preflight, failed, or expired: run again for what is left); answers
 * `status: 'closed'` and no transaction when nothing is left. The keeper's leftover stays behind:
 * only the service can sign it away.
 */
export function rescueFromChain(options: ChainRecoveryOptions): Promise<ChainRecoveryResult> {
  return recoverFromChain('rescue', options);
}

/**
 * Reclaims the rent of a route that ended (`settled`, or `rescued` with accounts left) from the
 * chain alone: every account of the route closes to the source (any tokens sent to them since go
 * to its token account), the orchestrator config too when no other route of the source is open.
 * Works as {@link rescueFromChain} does; the keeper's leftover stays behind.
 */
export function reclaimRentFromChain(options: ChainRecoveryOptions): Promise<ChainRecoveryResult> {
  return recoverFromChain('reclaim', options);
}
