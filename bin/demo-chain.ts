import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Address,
  createDefaultRpcTransport,
  createSolanaRpcFromTransport,
  isSolanaError,
  type RpcTransport,
  type Signature,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
} from '@solana/kit';
import { decodeRouteAccount, findRouteAddress } from '../clients/typescript/src/index.ts';
import { isWeather } from '../clients/typescript/src/send.ts';

/*
 * What the demo reads of the chain itself, as a wallet would: its clock, a route's schedule, when a
 * transaction landed. A cluster's endpoint (or the embedded chain's mainnet-like profile) has bad
 * moments, so every call is tried again after weather, as the TypeScript client's own calls are.
 */

const ATTEMPTS = 5;
const BACKOFF_MS = 250;

/** An HTTP transport that sends a request again after a 429, a 5xx or a lost connection. */
function patientTransport(url: string): RpcTransport {
  const transport = createDefaultRpcTransport({ url });
  return (async (config: Parameters<RpcTransport>[0]) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await transport(config);
      } catch (error) {
        if (attempt >= ATTEMPTS || config.signal?.aborted || !isWeather(error)) throw error;
        const retryAfter = isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)
          ? Number(error.context.headers.get('retry-after'))
          : Number.NaN;
        await sleep(retryAfter > 0 ? retryAfter * 1000 : BACKOFF_MS * 2 ** (attempt - 1));
      }
    }
  }) as RpcTransport;
}

/** The demo's RPC client of the chain at `url`. */
export function createDemoRpc(url: string) {
  return createSolanaRpcFromTransport(patientTransport(url));
}

export type DemoRpc = ReturnType<typeof createDemoRpc>;

const CLOCK_SYSVAR = 'SysvarC1ock11111111111111111111111111111111' as Address;

/** The chain's clock in unix seconds: the Clock sysvar's `unix_timestamp` (an i64 at byte 32). */
export async function chainNow(rpc: DemoRpc): Promise<bigint> {
  const { value } = await rpc.getAccountInfo(CLOCK_SYSVAR, { encoding: 'base64' }).send();
  if (!value) throw new Error('the chain has no Clock sysvar');
  return Buffer.from(value.data[0], 'base64').readBigInt64LE(32);
}

/** Moves a local chain's clock (the `surfnet_timeTravel` cheat code). */
export async function timeTravel(rpcUrl: string, unixSeconds: bigint) {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'surfnet_timeTravel',
      params: [{ absoluteTimestamp: Number(unixSeconds) * 1000 }],
    }),
  });
  const body = (await response.json()) as { error?: { message: string } };
  if (body.error) throw new Error(`--time-travel needs the local chain: ${body.error.message}`);
}

/** Whether the router program is deployed at `programAddress`. */
export async function isProgram(rpc: DemoRpc, programAddress: Address): Promise<boolean> {
  const { value } = await rpc.getAccountInfo(programAddress, { encoding: 'base64' }).send();
  return value?.executable === true;
}

/** When a route's hops fall due, in unix seconds of the chain's clock, as its account on chain says. */
export interface RouteSchedule {
  /** Hop `step + 1` (0-based `step`) is due then. */
  dueAt(step: number): bigint;
}

/**
 * The schedule of the route of `source`'s transfer, once its account shows (a node a moment behind
 * the one that confirmed the route's creation may not have it yet).
 */
export async function readRouteSchedule(
  rpc: DemoRpc,
  programAddress: Address,
  source: Address,
  transferId: number,
): Promise<RouteSchedule> {
  const address = await findRouteAddress(programAddress, source, transferId);
  for (let attempt = 1; ; attempt++) {
    const { value } = await rpc.getAccountInfo(address, { encoding: 'base64' }).send();
    const route = value && decodeRouteAccount(Buffer.from(value.data[0], 'base64'));
    if (route) {
      return { dueAt: (step) => route.firstReleaseAt + BigInt(step) * route.intervalSecs };
    }
    if (attempt >= 10) throw new Error(`the route of transfer ${transferId} is not at ${address}`);
    await sleep(500);
  }
}

/** The chain's clock (unix seconds) of the block a confirmed transaction landed in. */
export async function blockTimeOf(rpc: DemoRpc, signature: string): Promise<bigint> {
  const transaction = await rpc
    .getTransaction(signature as Signature, {
      commitment: 'confirmed',
      encoding: 'base64',
      maxSupportedTransactionVersion: 0,
    })
    .send();
  if (transaction?.blockTime == null) throw new Error(`the chain has no block time for ${signature}`);
  return transaction.blockTime;
}

/** What a landed transaction cost its fee payer in network fees, and how many signatures it carries. */
export async function feeOf(
  rpc: DemoRpc,
  signature: string,
): Promise<{ lamports: bigint; signatures: number }> {
  const transaction = await rpc
    .getTransaction(signature as Signature, {
      commitment: 'confirmed',
      encoding: 'json',
      maxSupportedTransactionVersion: 0,
    })
    .send();
  if (!transaction?.meta) throw new Error(`the chain has no record of ${signature}`);
  return { lamports: transaction.meta.fee, signatures: transaction.transaction.signatures.length };
}

/** Solana Explorer's names of the public clusters, by genesis hash (mainnet-beta is its default). */
const EXPLORER_CLUSTERS = new Map<string, string | null>([
  ['5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d', null],
  ['EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG', 'devnet'],
  ['4uhcVJyU9pJkvQyS88uRDiswHXSCkY3zQawwpjk2NsNY', 'testnet'],
]);

/**
 * Links into Solana Explorer for the chain at `rpcUrl`. A public cluster, told by its genesis hash,
 * by its name; any other chain (the local one included) as Explorer's custom cluster at `rpcUrl`,
 * which the page reads from the browser, so a chain on loopback is seen from this machine.
 */
export async function createExplorer(rpc: DemoRpc, rpcUrl: string) {
  const cluster = EXPLORER_CLUSTERS.get(await rpc.getGenesisHash().send());
  const query =
    cluster === undefined
      ? `?cluster=custom&customUrl=${encodeURIComponent(rpcUrl)}`
      : cluster === null
        ? ''
        : `?cluster=${cluster}`;
  return {
    /** What the links open: the cluster's name, or the custom one's URL. */
    cluster: cluster === undefined ? `a custom cluster at ${rpcUrl}` : (cluster ?? 'mainnet-beta'),
    transaction: (signature: string) => `https://explorer.solana.com/tx/${signature}${query}`,
  };
}
