// What recovery tests do as an integrator and what they check on chain: routes brought to a stage
// (failed by the keeper, overdue, abandoned), rescue and reclaim bundles signed and broadcast as a
// wallet does, and the lamports each party paid to the network.
import assert from 'node:assert/strict';
import {
  type Address,
  type Base64EncodedWireTransaction,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionDecoder,
  type KeyPairSigner,
  type Signature,
} from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { type Caller, SOL_MINT, type TestApp } from '../helpers/app.ts';
import type { QuotedRoute } from '../helpers/route.ts';
import { signAsWallet } from '../helpers/wallet.ts';

/** Rate limits far above what a test sends. */
export const UNLIMITED = { rateLimitMultiplier: 1000 };

/** A rescue or reclaim bundle as prepare answers it. */
export interface RecoveryBundle {
  txs: { base64: string; partialSigners: string[] }[];
  recentBlockhash: string;
  lastValidBlockHeight: number;
  totalLamports: number;
  body: Record<string, unknown>;
}

/** Lamports of an account on the test chain (0 when it does not exist). */
export const lamports = async (t: Pick<TestApp, 'chain'>, address: Address) =>
  BigInt(await t.chain.chain.getBalance(address));

/** The associated token account of an owner for a mint. */
export const ata = async (owner: Address, mint: Address) =>
  (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];

/** An owner's balance in its associated token account of `mint` (0 without one). */
export async function tokens(t: Pick<TestApp, 'chain'>, owner: Address, mint: Address): Promise<bigint> {
  return (await t.chain.chain.getTokenAccount(await ata(owner, mint)))?.amount ?? 0n;
}

const transactionDecoder = getTransactionDecoder();

/** Every fee the network took from transactions `payer` paid for (it signs first), failed ones included. */
export async function feesPaidBy(t: Pick<TestApp, 'chain'>, payer: Address): Promise<bigint> {
  const records = t.chain.ledger.signaturesForAddress(payer, { limit: 100_000 });
  return records
    .filter((record) => Object.keys(transactionDecoder.decode(record.wire).signatures)[0] === payer)
    .reduce((sum, record) => sum + record.fee, 0n);
}

/** The events of a transfer in the outbox, in order. */
export async function eventTypes(t: Pick<TestApp, 'database'>, id: number): Promise<string[]> {
  const { rows } = await t.database.db.query<{ type: string }>(
    'SELECT type FROM events WHERE transfer_id = $1 ORDER BY sequence',
    [id],
  );
  return rows.map((row) => row.type);
}

/** A transfer's keeper and schedule as stored at takeover. */
export async function routeRow(t: Pick<TestApp, 'database'>, id: number) {
  const { rows } = await t.database.db.query<{
    hops: number;
    keeper_address: Address;
    route_address: Address;
    first_release_at: string | null;
    interval_seconds: number | null;
    deadline_at: string | null;
  }>(
    'SELECT hops, keeper_address, route_address, first_release_at, interval_seconds, deadline_at FROM transfers WHERE id = $1',
    [id],
  );
  const row = rows[0]!;
  return {
    hops: row.hops,
    keeper: row.keeper_address,
    route: row.route_address,
    firstReleaseAt: row.first_release_at === null ? null : BigInt(row.first_release_at),
    intervalSeconds: row.interval_seconds,
    deadlineAt: row.deadline_at === null ? null : BigInt(row.deadline_at),
  };
}

/** Moves the chain's clock to `unix` seconds. */
export const travelTo = (t: Pick<TestApp, 'chain'>, unix: bigint) =>
  t.chain.cheats.timeTravel({ absoluteTimestamp: Number(unix) * 1000 });

/**
 * Moves the chain's clock to at least `unix` seconds: a slot (400 ms) is timed from its start, so
 * a clock moved to the second itself may still read the second before.
 */
export const travelPast = (t: Pick<TestApp, 'chain'>, unix: bigint) => travelTo(t, unix + 1n);

/** Runs the route's first `count` hops, each when due, with the keeper. */
export async function runHops(t: TestApp, id: number, count: number): Promise<void> {
  const row = await routeRow(t, id);
  for (let hop = 0; hop < count; hop++) {
    await travelPast(t, row.firstReleaseAt! + BigInt(hop * row.intervalSeconds!));
    assert.equal(await t.keeper.runOnce(), 1, `hop ${hop + 1} runs`);
  }
}

/**
 * Makes the route's last hop fail for good and lets the keeper find out: the recipient's token
 * account is frozen (the route may not deliver into it), the keeper marks the route failed.
 */
export async function failLastHop(
  t: TestApp,
  route: Pick<QuotedRoute, 'id' | 'recipient' | 'mint'>,
): Promise<void> {
  const row = await routeRow(t, route.id);
  await runHops(t, route.id, row.hops - 1);
  await t.chain.cheats.setTokenAccount(route.recipient, route.mint, { state: 'frozen' });
  await travelPast(t, row.firstReleaseAt! + BigInt((row.hops - 1) * row.intervalSeconds!));
  await t.keeper.runOnce();
}

/** Prepares a rescue or reclaim bundle; the call must succeed. */
export async function prepareRecovery(
  caller: Caller,
  id: number,
  kind: 'rescue' | 'reclaim',
): Promise<RecoveryBundle> {
  const response = await caller.post(
    `/api/v1/transfers/${id}/${kind === 'rescue' ? 'rescue' : 'reclaim-rent'}/prepare`,
  );
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  return {
    txs: kind === 'rescue' ? body.rescueTxs : body.reclaimTxs,
    recentBlockhash: body.recentBlockhash,
    lastValidBlockHeight: body.lastValidBlockHeight,
    totalLamports: (kind === 'rescue' ? body.rescuable : body.reclaimable).totalLamports,
    body,
  };
}

/** Adds the wallet's signature to a bundle transaction, as a wallet does; answers it and its signature. */
export async function sign(wallet: KeyPairSigner, base64: string) {
  const signed = await signAsWallet(wallet, base64);
  return {
    wire: getBase64EncodedWireTransaction(signed) as Base64EncodedWireTransaction,
    signature: getSignatureFromTransaction(signed),
  };
}

/** Signs and broadcasts bundle transactions in order (all unless `count`); answers their signatures. */
export async function broadcast(
  t: Pick<TestApp, 'chain'>,
  wallet: KeyPairSigner,
  bundle: RecoveryBundle,
  options: { count?: number; skipPreflight?: boolean } = {},
): Promise<Signature[]> {
  const signatures: Signature[] = [];
  for (const { base64 } of bundle.txs.slice(0, options.count ?? bundle.txs.length)) {
    const { wire, signature } = await sign(wallet, base64);
    await t.chain.chain.sendTransaction(wire, { skipPreflight: options.skipPreflight ?? false });
    signatures.push(signature);
  }
  return signatures;
}

/** Reports rescue signatures. */
export const confirmRescue = (caller: Caller, id: number, rescueSignatures: string[]) =>
  caller.post(`/api/v1/transfers/${id}/rescue/confirm`, { rescueSignatures });

/** Reports reclaim signatures. */
export const confirmReclaim = (caller: Caller, id: number, reclaimSignatures: string[]) =>
  caller.post(`/api/v1/transfers/${id}/reclaim-rent/confirm`, { reclaimSignatures });

/** The transfer as `GET /transfers/{id}` shows it. */
export async function getTransfer(caller: Caller, id: number) {
  const response = await caller.get(`/api/v1/transfers/${id}`);
  assert.equal(response.statusCode, 200, response.body);
  return response.json();
}

/** Asserts an error response's status and code. */
export function assertError(
  response: { statusCode: number; json(): { error: { code: string; param?: string } } },
  status: number,
  code: string,
  param?: string,
) {
  assert.equal(response.statusCode, status, JSON.stringify(response.json()));
  assert.equal(response.json().error.code, code);
  if (param !== undefined) assert.equal(response.json().error.param, param);
}

/** What the source holds before its route, and whether the platform's fee account for the mint exists yet. */
export async function holdings(t: Pick<TestApp, 'chain' | 'platform'>, route: QuotedRoute) {
  const feeToken = await ata(t.platform.configAddress, route.mint);
  return {
    lamports: await lamports(t, route.source.address),
    tokens: route.mint === SOL_MINT ? 0n : await tokens(t, route.source.address, route.mint),
    feeTokenExists: (await t.chain.chain.getAccount(feeToken)) !== null,
  };
}

/**
 * Rescues through the API as an integrator does (prepare, sign and broadcast every transaction,
 * confirm) and checks that the source received exactly what `recovery` announced before, and that
 * the transfer is rescued with its events. Answers the transfer and the signatures.
 */
export async function rescueThroughApi(t: TestApp, caller: Caller, route: QuotedRoute) {
  const announced = (await getTransfer(caller, route.id)).recovery;
  assert.equal(announced.canRescue, true);
  const bundle = await prepareRecovery(caller, route.id, 'rescue');
  assert.equal(bundle.totalLamports, announced.rescuableLamports);
  assert.deepEqual(bundle.body.rescuable, {
    totalLamports: announced.rescuableLamports,
    accounts: announced.rescuableAccounts,
  });
  const lamportsBefore = await lamports(t, route.source.address);
  const feesBefore = await feesPaidBy(t, route.source.address);
  const signatures = await broadcast(t, route.source, bundle);
  const confirmed = await confirmRescue(caller, route.id, signatures);
  assert.equal(confirmed.statusCode, 200, confirmed.body);
  const fees = (await feesPaidBy(t, route.source.address)) - feesBefore;
  assert.equal(
    (await lamports(t, route.source.address)) - lamportsBefore + fees,
    BigInt(announced.rescuableLamports),
    'the source received exactly the rescuable lamports',
  );
  const { transfer } = confirmed.json();
  assert.equal(transfer.phase, 'rescued');
  assert.equal(transfer.status, 'refunded');
  assert.deepEqual(transfer.recovery, {
    canRescue: false,
    rescuableLamports: 0,
    rescuableAccounts: [],
    canReclaimRent: false,
    reclaimableLamports: 0,
  });
  assert.deepEqual((await eventTypes(t, route.id)).slice(-3), [
    'transfer.rescued',
    'transfer.refunded',
    'transfer.phase_changed',
  ]);
  return { transfer, signatures };
}

/**
 * The source holds its tokens again, and its lamports less every fee it and its keeper paid to
 * the network, the rent of the accounts its bundle created for others (the recipient's token
 * account, the platform's fee account) and `forfeited`; it holds no wrapped SOL it did not hold
 * before. Every account of the route is closed and the keeper is empty.
 */
export async function assertMadeWhole(
  t: TestApp,
  route: QuotedRoute,
  before: Awaited<ReturnType<typeof holdings>>,
  forfeited = 0n,
) {
  const row = await routeRow(t, route.id);
  const native = route.mint === SOL_MINT;
  const feeTokenCreated =
    !before.feeTokenExists &&
    (await t.chain.chain.getAccount(await ata(t.platform.configAddress, route.mint))) !== null;
  const othersRent =
    (native ? 0n : await lamports(t, await ata(route.recipient, route.mint))) +
    (feeTokenCreated ? BigInt(await t.chain.chain.getMinimumBalanceForRentExemption(165)) : 0n);
  const networkFees = (await feesPaidBy(t, route.source.address)) + (await feesPaidBy(t, row.keeper));
  assert.equal(
    await lamports(t, route.source.address),
    before.lamports - networkFees - othersRent - forfeited,
    'lamports back less network fees and the rent of others’ accounts',
  );
  assert.equal(await tokens(t, route.source.address, route.mint), before.tokens);
  assert.equal(await lamports(t, row.keeper), 0n, 'the keeper is swept');
  assert.equal(await t.chain.chain.getAccount(row.route), null, 'the route is closed');
}
