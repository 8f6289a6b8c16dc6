import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import type { Address, Signature } from '@solana/kit';
import { rpcCall, tokenProgramFromEnv } from '@transfer-router/local-chain/testing';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import type { Chain } from '../../src/chain/types.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** The package's `local-chain` command, as `npm run localnet` runs it. */
const LOCAL_CHAIN_COMMAND = join(ROOT, 'node_modules', '.bin', 'local-chain');

/** The local chain in a process of its own, as `npm run localnet` runs it. */
export interface ChainProcess {
  rpcUrl: string;
  wsUrl: string;
  child: ChildProcess;
  /** The service's chain client on its endpoint. */
  chain: Chain;
  /** A raw JSON-RPC call (the cheat methods too); throws on an error answer. */
  rpc<T = unknown>(method: string, params: unknown[]): Promise<T>;
  /** Sends SOL from the faucet; resolves once the airdrop is confirmed. */
  airdrop(address: Address, lamports: bigint): Promise<Signature>;
  /** Moves the chain's clock forward to `ms` (unix milliseconds). */
  travelTo(ms: number): Promise<void>;
  /** Stops it (SIGTERM) and resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts `local-chain` on free ports, in memory, on the profile LOCAL_CHAIN_PROFILE names (and the
 * Token program LOCAL_CHAIN_TOKEN_PROGRAM names, when set), with `programs` deployed (upgradeable
 * by `upgradeAuthority`); resolves once it is ready.
 */
export async function startChainProcess(
  options: { programs?: { programId: Address; path: string }[]; upgradeAuthority?: Address } = {},
): Promise<ChainProcess> {
  const args = ['--port', '0', '--ephemeral', '--quiet'];
  if (process.env.LOCAL_CHAIN_TOKEN_PROGRAM) args.push('--token-program', tokenProgramFromEnv());
  for (const { programId, path } of options.programs ?? []) args.push('--program', `${programId}=${path}`);
  if (options.upgradeAuthority) args.push('--upgrade-authority', options.upgradeAuthority);
  const child = spawn(process.execPath, [LOCAL_CHAIN_COMMAND, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const { rpcUrl, wsUrl } = await new Promise<{ rpcUrl: string; wsUrl: string }>((resolve, reject) => {
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        const ready = /^localnet ready rpcUrl=(\S+) wsUrl=(\S+)/.exec(line);
        if (ready) resolve({ rpcUrl: ready[1]!, wsUrl: ready[2]! });
      });
    }
    void exited.then(() =>
      reject(new Error(`local-chain exited before it was ready:\n${output.join('\n')}`)),
    );
  });
  const rpc = <T>(method: string, params: unknown[]) => rpcCall<T>(rpcUrl, method, params);
  async function airdrop(address: Address, lamports: bigint): Promise<Signature> {
    const signature = await rpc<Signature>('requestAirdrop', [address, Number(lamports)]);
    for (;;) {
      const { value } = await rpc<{ value: ({ confirmationStatus: string } | null)[] }>(
        'getSignatureStatuses',
        [[signature]],
      );
      if (value[0] && value[0].confirmationStatus !== 'processed') return signature;
      await delay(100);
    }
  }
  return {
    rpcUrl,
    wsUrl,
    child,
    chain: createRpcChain({ rpcUrl }),
    rpc,
    airdrop,
    // The clock may have passed `ms` since it was read: there is nothing to move then.
    travelTo: (ms) =>
      rpc<void>('surfnet_timeTravel', [{ absoluteTimestamp: ms }]).catch((error: Error) => {
        if (!error.message.includes('Cannot travel to the past')) throw error;
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
