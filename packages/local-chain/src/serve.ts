#!/usr/bin/env node
// The `local-chain` command (`npm run localnet` in the repository): the chain's JSON-RPC endpoint
// alone, without the service.
//
//   local-chain [--port 8899] [--host 127.0.0.1] [--data-dir ./data/chain | --ephemeral]
//               [--program <programId>=<path/to/program.so>]... [--upgrade-authority <address | keypair file>]
//               [--token-program p-token|legacy] [--profile instant|mainnet] [--seed <seed>]
// (--profile and --seed default to LOCAL_CHAIN_PROFILE and LOCAL_CHAIN_SEED; see profile.ts)
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { getAddressDecoder, isAddress } from '@solana/kit';
import { pino } from 'pino';
import type { ProgramDeployment } from './cheats.ts';
import { parseTokenProgram } from './legacy-token.ts';
import { chainProfile, parseChainProfile } from './profile.ts';
import { startLocalChain } from './start.ts';

/**
 * The upgrade authority of the programs given with --program: an address, or a solana-keygen
 * keypair file (its public key, the last 32 of its 64 numbers); none (immutable) when absent.
 */
async function authorityOf(value: string | undefined): Promise<string | null> {
  if (value === undefined) return null;
  if (isAddress(value)) return value;
  let keypair: unknown;
  try {
    keypair = JSON.parse(await readFile(value, 'utf8'));
  } catch {
    throw new Error(`--upgrade-authority expects an address or a keypair file, got ${value}`);
  }
  if (!Array.isArray(keypair) || keypair.length !== 64)
    throw new Error(`--upgrade-authority: ${value} is not a solana-keygen keypair file (64 numbers)`);
  return getAddressDecoder().decode(Uint8Array.from(keypair.slice(32) as number[]));
}

/** Parses the command line, starts the chain, and stops it cleanly on SIGINT/SIGTERM. */
async function main() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '8899' },
      'ws-port': { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      'data-dir': { type: 'string', default: './data/chain' },
      ephemeral: { type: 'boolean', default: false },
      program: { type: 'string', multiple: true, default: [] },
      'upgrade-authority': { type: 'string' },
      quiet: { type: 'boolean', default: false },
      'token-program': { type: 'string' },
      profile: { type: 'string', default: process.env.LOCAL_CHAIN_PROFILE || 'instant' },
      seed: { type: 'string', default: process.env.LOCAL_CHAIN_SEED || undefined },
    },
  });
  const log = pino({ level: values.quiet ? 'warn' : 'info', base: { component: 'localnet' } });
  const upgradeAuthority = await authorityOf(values['upgrade-authority']);
  const programs: ProgramDeployment[] = [];
  for (const spec of values.program) {
    const [programId, path] = spec.split('=');
    if (!programId || !path) throw new Error(`--program expects <programId>=<path.so>, got ${spec}`);
    programs.push({ programId, elf: await readFile(path), upgradeAuthority });
  }
  const local = await startLocalChain({
    dataDir: values.ephemeral ? undefined : values['data-dir'],
    host: values.host,
    rpcPort: Number(values.port),
    wsPort: values['ws-port'] === undefined ? undefined : Number(values['ws-port']),
    programs,
    tokenProgram:
      values['token-program'] === undefined ? undefined : parseTokenProgram(values['token-program']),
    profile: chainProfile(parseChainProfile(values.profile), values.seed),
    log,
  });
  // One plain line that tools (and the bench) can read the addresses from.
  process.stdout.write(`localnet ready rpcUrl=${local.rpcUrl} wsUrl=${local.wsUrl}\n`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping the local chain');
    await local.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
