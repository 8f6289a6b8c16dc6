import {
  type Address,
  createDefaultRpcTransport,
  createSolanaRpc,
  createSolanaRpcFromTransport,
  decompileTransactionMessage,
  generateKeyPairSigner,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  type RpcTransport,
  type Signature,
} from '@solana/kit';
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  ComputeBudgetInstruction,
  getSetComputeUnitLimitInstructionDataDecoder,
  identifyComputeBudgetInstruction,
} from '@solana-program/compute-budget';
import {
  createTransferRouterClient,
  type TransferRouterClient,
  type TransferRouterClientOptions,
} from '../../clients/typescript/src/index.ts';
import { rawToTokens } from '../../src/domain/amounts.ts';
import type { Caller, TestApp } from '../helpers/app.ts';
import { SOL_MINT } from '../helpers/app.ts';
import { tokenBalance } from '../helpers/route.ts';

/** The app listening on a real port of 127.0.0.1, as integrators reach the service. */
export async function listen(t: TestApp): Promise<string> {
  return t.app.listen({ port: 0, host: '127.0.0.1' });
}

/**
 * Stops the service as an outage would: its API stops answering and its keeper stops (tests run
 * workers only through `runOnce`, so no other worker runs); the chain and its RPC endpoint stay.
 */
export async function stopService(t: TestApp): Promise<void> {
  await t.app.close();
  await t.keeper.stop();
}

/** A client of the listening app with `caller`'s key. */
export function clientFor(
  baseUrl: string,
  caller: Caller,
  options: Partial<TransferRouterClientOptions> = {},
): TransferRouterClient {
  return createTransferRouterClient({ baseUrl, apiKey: caller.key, ...options });
}

/** @solana/kit's RPC on the test chain's JSON-RPC endpoint, as a wallet uses it. */
export function kitRpc(t: TestApp) {
  return { rpc: createSolanaRpc(t.chain.rpcUrl) };
}

/** A JSON-RPC request as kit's transport sends it. */
export interface RpcRequest {
  id: unknown;
  method: string;
  params: unknown[];
}

/** A JSON-RPC answer as the endpoint gives it. */
export interface RpcAnswer {
  jsonrpc: '2.0';
  id: unknown;
  result?: unknown;
  error?: unknown;
}

/**
 * @solana/kit's RPC on the test chain's endpoint, each request going through `node`: it answers
 * as a node would, passing the request on (`forward`) or not (a node that drops a send), and may
 * change the answer (a status of its own).
 */
export function scriptedRpc(
  t: TestApp,
  node: (request: RpcRequest, forward: () => Promise<RpcAnswer>) => Promise<RpcAnswer>,
) {
  const endpoint = createDefaultRpcTransport({ url: t.chain.rpcUrl as `http${string}` });
  const transport = ((config: Parameters<RpcTransport>[0]) =>
    node(config.payload as RpcRequest, () => endpoint<RpcAnswer>(config))) as RpcTransport;
  return { rpc: createSolanaRpcFromTransport(transport) };
}

/** The signature of a transaction sent as base64 wire bytes (a `sendTransaction` request's first parameter). */
export const sentSignature = (request: RpcRequest) =>
  getSignatureFromTransaction(
    getTransactionDecoder().decode(getBase64Encoder().encode(String(request.params[0]))),
  );

/** A fresh source wallet with SOL and, for an SPL mint, `tokens` of it. */
export async function fundedWallet(t: TestApp, mint: Address, tokens: bigint): Promise<KeyPairSigner> {
  const wallet = await generateKeyPairSigner();
  await t.chain.cheats.airdrop(wallet.address, 50_000_000_000n);
  if (mint !== SOL_MINT) await t.chain.cheats.setTokenAccount(wallet.address, mint, { amount: tokens });
  return wallet;
}

/**
 * A source funded with SOL and the amount (2 SOL, or 250 tokens of an SPL mint at $1), a fresh
 * recipient, the estimate and the transfer created with the client.
 */
export async function quoteWithClient(
  t: TestApp,
  client: TransferRouterClient,
  route: { mint: Address; hops: number; arrivalSeconds: number },
) {
  const native = route.mint === SOL_MINT;
  const amountRaw = native ? 2_000_000_000n : 250_000_000n;
  const source = await fundedWallet(t, route.mint, amountRaw);
  const recipient = (await generateKeyPairSigner()).address;
  const terms = {
    tokenMint: route.mint,
    amountRaw: String(amountRaw),
    hops: route.hops,
    ...(native ? {} : { tokenPriceUsd: 1 }),
  };
  const estimate = await client.estimateTransfer(terms);
  const created = await client.createTransfer({
    ...terms,
    amountTokens: rawToTokens(amountRaw, estimate.tokens.decimals),
    sourceOwner: source.address,
    recipientWallet: recipient,
    arrivalSeconds: route.arrivalSeconds,
  });
  return { id: created.id, created, estimate, source, recipient, mint: route.mint, hops: route.hops };
}

/** What an owner holds of `mint`: tokens in its associated account, or lamports for native SOL. */
export async function holding(t: TestApp, owner: Address, mint: Address): Promise<bigint> {
  return mint === SOL_MINT ? BigInt(await t.chain.chain.getBalance(owner)) : tokenBalance(t, owner, mint);
}

/**
 * Runs a deployed route's hops as the keeper network does, moving the chain's clock to each hop's
 * due time (the route's schedule: `interval` seconds apart from `deployedAt`).
 */
export async function runHops(
  t: TestApp,
  route: { id: number; hops: number; arrivalSeconds: number; deployedAt: bigint },
  each: { before?: () => unknown; after?: () => Promise<unknown> } = {},
) {
  const interval = BigInt(Math.floor(route.arrivalSeconds / route.hops));
  for (let hop = 1; hop <= route.hops; hop++) {
    const due = route.deployedAt + BigInt(hop) * interval;
    await t.chain.cheats.timeTravel({ absoluteTimestamp: Number(due) * 1000 });
    await each.before?.();
    // Routes of earlier tests may fall due on the same clock: they run too.
    await t.keeper.runOnce();
    const { rows } = await t.database.db.query<{ hops_completed: number }>(
      'SELECT hops_completed FROM transfers WHERE id = $1',
      [route.id],
    );
    if (rows[0]?.hops_completed !== hop)
      throw new Error(`hop ${hop} of transfer ${route.id} did not run when due`);
    await each.after?.();
  }
}

/**
 * A landed transaction's compute budget: the programs of its instructions in order, the unit
 * limit it asked for, and the units it used.
 */
export async function computeBudgetOf(t: TestApp, signature: Signature) {
  const landed = await createSolanaRpc(t.chain.rpcUrl)
    .getTransaction(signature, {
      encoding: 'base64',
      maxSupportedTransactionVersion: 0,
      commitment: 'confirmed',
    })
    .send();
  if (!landed) throw new Error(`transaction ${signature} is not on chain`);
  const message = decompileTransactionMessage(
    getCompiledTransactionMessageDecoder().decode(
      getTransactionDecoder().decode(getBase64Encoder().encode(landed.transaction[0])).messageBytes,
    ),
  );
  const instructions = message.instructions as readonly { programAddress: Address; data?: Uint8Array }[];
  const limit = instructions.find(
    (instruction) =>
      instruction.programAddress === COMPUTE_BUDGET_PROGRAM_ADDRESS &&
      identifyComputeBudgetInstruction(instruction.data!) === ComputeBudgetInstruction.SetComputeUnitLimit,
  );
  return {
    programs: instructions.map((instruction) => instruction.programAddress),
    units: limit ? getSetComputeUnitLimitInstructionDataDecoder().decode(limit.data!).units : null,
    used: Number(landed.meta?.computeUnitsConsumed ?? 0n),
  };
}
