// Bench of the local chain: sustained rate of confirmed SOL transfers and of getAccountInfo through
// the JSON-RPC endpoint (run as `npm run localnet` runs it, in its own process), beside LiteSVM
// called in process through its public API, which is the limit the endpoint can approach, and the
// service's own chain client (createRpcChain) calling the embedded endpoint one call at a time.
//
// Every measured run is preceded by an untimed warm-up of the same kind (--warmup transfers, a tenth
// of --reads reads), so that each figure is a sustained rate and not a start-up one.
//
//   npx node bench/chain.ts [--transfers 10000] [--reads 100000] [--warmup 10000] [--connections 16]
//                           [--rounds 3]
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type Address,
  appendTransactionMessageInstruction,
  type Blockhash,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionEncoder,
  type KeyPairSigner,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Transaction,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { startLocalChain } from '@transfer-router/local-chain';
import { LiteSVM } from 'litesvm';
import { FailedTransactionMetadata, LiteSvm } from 'litesvm/dist/internal.js';
import { createRpcChain } from '../src/chain/rpc-chain.ts';

const { values: args } = parseArgs({
  options: {
    transfers: { type: 'string', default: '10000' },
    reads: { type: 'string', default: '100000' },
    warmup: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
  },
});
const ROUNDS = Number(args.rounds);
const TRANSFERS = Number(args.transfers);
const READS = Number(args.reads);
const WARMUP = Number(args.warmup);
const CONNECTIONS = Number(args.connections);
const PAYERS = 8;
const SOL = 1_000_000_000n;
/** The package's `local-chain` command, as `npm run localnet` runs it. */
const LOCAL_CHAIN_COMMAND = join('node_modules', '.bin', 'local-chain');

interface SignedTransfer {
  transaction: Transaction;
  bytes: Uint8Array;
  base64: string;
  signature: string;
}

// Transfer `first + n` sends 1,000,000 + first + n lamports: distinct amounts make every
// transaction (and signature) of one chain distinct.
async function signTransfers(
  payers: KeyPairSigner[],
  to: Address,
  blockhash: string,
  count: number,
  first: number,
): Promise<SignedTransfer[]> {
  const out: SignedTransfer[] = [];
  const encoder = getTransactionEncoder();
  for (let n = 0; n < count; n++) {
    const i = first + n;
    const payer = payers[i % payers.length] as KeyPairSigner;
    const tx = await pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: blockhash as Blockhash, lastValidBlockHeight: 0n },
          m,
        ),
      (m) =>
        appendTransactionMessageInstruction(
          getTransferSolInstruction({
            source: payer,
            destination: to,
            amount: lamports(1_000_000n + BigInt(i)),
          }),
          m,
        ),
      (m) => signTransactionMessageWithSigners(m),
    );
    out.push({
      transaction: tx,
      bytes: new Uint8Array(encoder.encode(tx)),
      base64: getBase64EncodedWireTransaction(tx),
      signature: getSignatureFromTransaction(tx),
    });
  }
  return out;
}

const rate = (count: number, ms: number) => Math.round((count / ms) * 1000);

// A minimal keep-alive HTTP/1.1 client, one request in flight per connection. node:http's client
// spends about as much CPU per request as the endpoint does; on a small machine it would measure
// itself instead of the endpoint.
class RawConnection {
  private readonly host: string;
  private socket: Socket;
  private buffer: Buffer = Buffer.alloc(0);
  private pending: ((body: string) => void) | undefined;

  constructor(host: string, port: number) {
    this.host = host;
    this.socket = connect(port, host);
    this.socket.setNoDelay(true);
    this.socket.on('data', (chunk: Buffer) => this.onData(chunk));
  }

  request(body: string): Promise<string> {
    return new Promise((resolve) => {
      this.pending = resolve;
      this.socket.write(
        `POST / HTTP/1.1\r\nHost: ${this.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
  }

  private onData(chunk: Buffer) {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const headerEnd = this.buffer.indexOf('\r\n\r\n');
    if (headerEnd < 0) return;
    const match = /content-length: (\d+)/i.exec(this.buffer.subarray(0, headerEnd).toString('latin1'));
    const length = match ? Number(match[1]) : 0;
    if (this.buffer.length < headerEnd + 4 + length) return;
    const body = this.buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(headerEnd + 4 + length);
    const resolve = this.pending;
    this.pending = undefined;
    resolve?.(body);
  }

  close() {
    this.socket.destroy();
  }
}

async function startEndpoint(): Promise<{ child: ChildProcess; url: URL }> {
  const child = spawn(process.execPath, [LOCAL_CHAIN_COMMAND, '--port', '0', '--ephemeral', '--quiet'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<URL>((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk) => {
      text += chunk;
      const match = /rpcUrl=(\S+)/.exec(text);
      if (match) resolve(new URL(match[1] as string));
    });
    child.once('exit', (code) => reject(new Error(`localnet exited with ${code}`)));
  });
  return { child, url };
}

function rpcBody(id: number, method: string, params: unknown[]): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, params });
}

// Runs an untimed warm-up, then the timed transfers; returns transfers per second.
async function timeTransfers(
  payers: KeyPairSigner[],
  to: Address,
  blockhash: string,
  send: (txs: SignedTransfer[]) => unknown,
): Promise<number> {
  await send(await signTransfers(payers, to, blockhash, WARMUP, 0));
  const txs = await signTransfers(payers, to, blockhash, TRANSFERS, WARMUP);
  const started = performance.now();
  await send(txs);
  return rate(TRANSFERS, performance.now() - started);
}

// Reads a tenth of READS untimed, then READS timed; returns reads per second.
function timeReads(read: () => unknown): number {
  for (let i = 0; i < READS / 10; i++) read();
  const started = performance.now();
  for (let i = 0; i < READS; i++) read();
  return rate(READS, performance.now() - started);
}

async function benchInProcess() {
  // Raw LiteSVM through its native binding: bytes in, nothing else.
  const svm = new LiteSvm();
  svm.setBlockhashCheck(false);
  svm.setTransactionHistory(0n);
  const payers = await Promise.all(Array.from({ length: PAYERS }, () => generateKeyPairSigner()));
  const keyOf = (address: Address) => new Uint8Array(getAddressEncoder().encode(address));
  for (const payer of payers) svm.airdrop(keyOf(payer.address), 1000n * SOL);
  const to = (await generateKeyPairSigner()).address;
  const rawSend = (txs: SignedTransfer[]) => {
    for (const tx of txs) {
      if (svm.sendVersionedTransaction(tx.bytes) instanceof FailedTransactionMetadata)
        throw new Error('raw transfer failed');
    }
  };
  const rawTransfers = await timeTransfers(payers, to, svm.latestBlockhash(), rawSend);
  const key = keyOf(payers[0]?.address as Address);
  const rawReads = timeReads(() => svm.getAccount(key));

  // LiteSVM's public (kit-typed) API: what a program calling LiteSVM in process uses.
  const wrapped = new LiteSVM().withBlockhashCheck(false).withTransactionHistory(0n);
  for (const payer of payers) wrapped.airdrop(payer.address, lamports(1000n * SOL));
  const wrappedSend = (txs: SignedTransfer[]) => {
    for (const tx of txs) {
      if (wrapped.sendTransaction(tx.transaction) instanceof FailedTransactionMetadata)
        throw new Error('public API transfer failed');
    }
  };
  const wrappedTransfers = await timeTransfers(payers, to, wrapped.latestBlockhash(), wrappedSend);
  const wrappedReads = timeReads(() => wrapped.getAccount(payers[0]?.address as Address));

  // The service's chain interface: the RPC client calling the embedded endpoint in the same
  // process, one call at a time (the ledger's checks and records included).
  const local = await startLocalChain({ rpcPort: 0 });
  const chain = createRpcChain({ rpcUrl: local.rpcUrl });
  for (const payer of payers) await local.cheats.airdrop(payer.address, 1000n * SOL);
  const { blockhash } = await chain.getLatestBlockhash();
  const chainTransfers = await timeTransfers(payers, to, blockhash, async (txs) => {
    for (const tx of txs) await chain.sendTransaction(tx.bytes);
  });
  let chainReads = 0;
  for (const count of [READS / 10, READS]) {
    const started = performance.now();
    for (let i = 0; i < count; i++) await chain.getAccount(payers[0]?.address as Address);
    chainReads = rate(count, performance.now() - started);
  }
  await local.close();
  return { rawTransfers, rawReads, wrappedTransfers, wrappedReads, chainTransfers, chainReads };
}

async function benchEndpoint() {
  const { child, url } = await startEndpoint();
  const host = url.hostname;
  const port = Number(url.port);
  const pool = Array.from({ length: CONNECTIONS }, () => new RawConnection(host, port));
  const control = new RawConnection(host, port);
  const call = async (method: string, params: unknown[]) =>
    JSON.parse(await control.request(rpcBody(1, method, params))).result;
  try {
    const payers = await Promise.all(Array.from({ length: PAYERS }, () => generateKeyPairSigner()));
    for (const payer of payers) await call('requestAirdrop', [payer.address, Number(1000n * SOL)]);
    const to = (await generateKeyPairSigner()).address;
    let signed = 0;

    async function transfers(batch: number, count = TRANSFERS) {
      const { value } = await call('getLatestBlockhash', []);
      const txs = await signTransfers(payers, to, value.blockhash, count, signed);
      signed += count;
      const waiting = new Set<string>();
      let next = 0;
      let failures = 0;
      let confirmed = 0;
      let sending = true;
      const started = performance.now();
      const sender = async (connection: RawConnection) => {
        while (next < txs.length) {
          const slice = txs.slice(next, next + batch);
          next += slice.length;
          const requests = slice.map((tx, i) =>
            rpcBody(i, 'sendTransaction', [tx.base64, { encoding: 'base64' }]),
          );
          const answer = JSON.parse(
            await connection.request(batch === 1 ? (requests[0] as string) : `[${requests.join(',')}]`),
          );
          for (const reply of Array.isArray(answer) ? answer : [answer]) {
            if (reply.error) failures++;
            else waiting.add(reply.result);
          }
        }
      };
      const poller = async () => {
        while (sending || waiting.size > 0) {
          const signatures: string[] = [];
          for (const signature of waiting) {
            signatures.push(signature);
            if (signatures.length === 256) break;
          }
          if (signatures.length === 0) {
            await new Promise((resolve) => setImmediate(resolve));
            continue;
          }
          const { value } = await call('getSignatureStatuses', [signatures]);
          value.forEach((status: { confirmationStatus?: string } | null, i: number) => {
            if (status?.confirmationStatus) {
              waiting.delete(signatures[i] as string);
              confirmed++;
            }
          });
        }
      };
      const polling = poller();
      await Promise.all(pool.map(sender));
      sending = false;
      await polling;
      const elapsed = performance.now() - started;
      if (failures > 0 || confirmed !== count)
        throw new Error(`${failures} sends failed, ${confirmed} confirmed`);
      return rate(count, elapsed);
    }

    async function reads(batch: number, count = READS) {
      const request = rpcBody(1, 'getAccountInfo', [payers[0]?.address, { encoding: 'base64' }]);
      const body = batch === 1 ? request : `[${Array.from({ length: batch }, () => request).join(',')}]`;
      let done = 0;
      const started = performance.now();
      await Promise.all(
        pool.map(async (connection) => {
          while (done < count) {
            done += batch;
            const answer = await connection.request(body);
            if (!answer.includes('"lamports"')) throw new Error(`unexpected answer ${answer.slice(0, 200)}`);
          }
        }),
      );
      return rate(done, performance.now() - started);
    }

    await transfers(1, WARMUP);
    const unbatched = await transfers(1);
    await transfers(64, WARMUP);
    const batched = await transfers(64);
    await reads(1, READS / 10);
    const readsUnbatched = await reads(1);
    await reads(100, READS / 10);
    return {
      transfers: unbatched,
      transfersBatched: batched,
      reads: readsUnbatched,
      readsBatched: await reads(100),
    };
  } finally {
    for (const connection of [...pool, control]) connection.close();
    child.kill('SIGTERM');
  }
}

// The machine may be shared: every figure is the best of a few rounds, the least disturbed one.
function best<T extends Record<string, number>>(runs: T[]): T {
  const out: Record<string, number> = {};
  for (const run of runs)
    for (const [key, value] of Object.entries(run)) out[key] = Math.max(out[key] ?? 0, value);
  return out as T;
}
const inProcessRuns = [];
const endpointRuns = [];
for (let round = 0; round < ROUNDS; round++) {
  inProcessRuns.push(await benchInProcess());
  endpointRuns.push(await benchEndpoint());
}
const inProcess = best(inProcessRuns);
const endpoint = best(endpointRuns);
const share = (value: number, limit: number) => `${Math.round((value / limit) * 100)}%`;
// The limit is LiteSVM as a program calls it in process: its public API. The native binding
// underneath (bytes in, no conversions) is shown as well, for reference.
const rows = [
  ['SOL transfers, LiteSVM public API in process (limit)', inProcess.wrappedTransfers, '100%'],
  [
    'SOL transfers, LiteSVM native binding in process',
    inProcess.rawTransfers,
    share(inProcess.rawTransfers, inProcess.wrappedTransfers),
  ],
  [
    'SOL transfers, chain interface (RPC client, one process, one call at a time)',
    inProcess.chainTransfers,
    share(inProcess.chainTransfers, inProcess.wrappedTransfers),
  ],
  [
    `SOL transfers confirmed via endpoint, 1 tx per request, ${CONNECTIONS} connections`,
    endpoint.transfers,
    share(endpoint.transfers, inProcess.wrappedTransfers),
  ],
  [
    'SOL transfers confirmed via endpoint, JSON-RPC batches of 64',
    endpoint.transfersBatched,
    share(endpoint.transfersBatched, inProcess.wrappedTransfers),
  ],
  ['getAccountInfo, LiteSVM public API in process (limit)', inProcess.wrappedReads, '100%'],
  [
    'getAccountInfo, LiteSVM native binding in process',
    inProcess.rawReads,
    share(inProcess.rawReads, inProcess.wrappedReads),
  ],
  [
    'getAccountInfo, chain interface (RPC client, one process, one call at a time)',
    inProcess.chainReads,
    share(inProcess.chainReads, inProcess.wrappedReads),
  ],
  [
    `getAccountInfo via endpoint, 1 per request, ${CONNECTIONS} connections`,
    endpoint.reads,
    share(endpoint.reads, inProcess.wrappedReads),
  ],
  [
    'getAccountInfo via endpoint, JSON-RPC batches of 100',
    endpoint.readsBatched,
    share(endpoint.readsBatched, inProcess.wrappedReads),
  ],
];
process.stdout.write(
  [
    `## Local chain (${TRANSFERS} transfers, ${READS} reads; best of ${ROUNDS} rounds)`,
    '',
    '| measure | per second | of the limit (LiteSVM public API) |',
    '|---|---:|---:|',
    ...rows.map(([name, value, pct]) => `| ${name} | ${Number(value).toLocaleString('en-US')} | ${pct} |`),
    '',
  ].join('\n'),
);
