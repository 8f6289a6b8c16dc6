// `platform deploy`: the one admin command that talks to the chain itself rather than to the
// service, since the service cannot run its platform before the router program is on the cluster.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type Address, isAddress } from '@solana/kit';
import { isChainError } from '../src/chain/errors.ts';
import {
  ROUTER_PROGRAM_VARIANTS,
  type RouterProgramVariant,
  routerProgramPath,
} from '../src/chain/router/program.ts';
import { createRpcChain } from '../src/chain/rpc-chain.ts';
import type { AccountReader } from '../src/chain/types.ts';
import { loadCliDefaults } from '../src/cli-defaults.ts';
import { generateKeypair, type KeypairBytes, parseKeypairSetting } from '../src/platform/keypair.ts';
import { closeBuffer, findBufferAddress, readBuffer } from '../src/platform/program-buffer.ts';
import { deployProgram, type ProgramDeployResult } from '../src/platform/program-deploy.ts';
import { PlatformTransactionError } from '../src/platform/send.ts';

export const DEPLOY_USAGE = `  platform deploy [--rpc <url>] [--admin-keypair <key>] [--program-keypair <file>]
                  [--program-id <address>] [--elf v0|v3] [--priority-fee <micro-lamports/CU>]
                  [--concurrency <n>]
                                                                (deploys the router program through the
                                                                 upgradeable loader, the admin as upgrade
                                                                 authority, or upgrades it; talks to the
                                                                 chain, not to the service)
  platform deploy --close-buffer [--rpc <url>] [--admin-keypair <key>]
                                                                (returns the rent of a buffer an interrupted
                                                                 deploy left behind)`;

export const DEPLOY_OPTIONS = `Options of platform deploy:
  --rpc <url>                the cluster's JSON-RPC endpoint (default $RPC_URL)
  --admin-keypair <key>      pays, and is the upgrade authority: a solana-keygen file or its JSON array
                             (default $PLATFORM_ADMIN_KEYPAIR)
  --program-keypair <file>   the program's own key, needed the first time only; generated there when the
                             file does not exist (default $DATA_DIR/router-program-keypair.json)
  --program-id <address>     the program to upgrade (default $ROUTER_PROGRAM_ID, else the program keypair's)
  --elf v0|v3                SBPF v0 (default: loads on every cluster) or v3 (clusters with SBPF v3)
  --priority-fee <n>         compute-unit price of its transactions in micro-lamports (default 0)
  --concurrency <n>          write transactions in flight at once, 1 to 32 (default 8; fewer for an
                             endpoint that limits requests)`;

export interface DeployFlags {
  rpc?: string | undefined;
  'admin-keypair'?: string | undefined;
  'program-keypair'?: string | undefined;
  'program-id'?: string | undefined;
  elf?: string | undefined;
  'priority-fee'?: string | undefined;
  concurrency?: string | undefined;
  'close-buffer'?: boolean | undefined;
}

/** The program's keypair file: read when it exists; generated there when no program id says otherwise. */
async function programKey(
  path: string,
  programId: string | undefined,
  progress: (line: string) => void,
): Promise<KeypairBytes | null> {
  if (existsSync(path)) return parseKeypairSetting(path);
  if (programId) return null;
  const key = generateKeypair();
  await mkdir(dirname(path), { recursive: true });
  // 'wx': never over a key that appeared meanwhile.
  await writeFile(path, `${JSON.stringify(key.toKeygenArray())}\n`, { mode: 0o600, flag: 'wx' });
  progress(
    `Generated the program's keypair ${key.address} in ${path} (keep it: it is the program's address)`,
  );
  return key;
}

/** What a failed run leaves: the buffer it wrote, which the next run resumes from. */
async function leftoverNote(chain: AccountReader, admin: Address): Promise<string> {
  const buffer = await readBuffer(chain, admin).catch(() => null);
  if (!buffer) return '';
  return ` The buffer ${await findBufferAddress(admin)} keeps what was written (${buffer.lamports} lamports of rent): run the same command again to resume, or \`platform deploy --close-buffer\` to take the rent back.`;
}

/** The command line and the environment, checked. */
function settingsOf(flags: DeployFlags, usage: (message: string) => Error) {
  const defaults = loadCliDefaults();
  const rpcUrl = flags.rpc ?? defaults.rpcUrl;
  if (!rpcUrl) throw usage('platform deploy needs the cluster: pass --rpc or set RPC_URL');
  const adminSetting = flags['admin-keypair'] ?? defaults.adminKeypair;
  if (!adminSetting)
    throw usage('platform deploy needs the admin key: pass --admin-keypair or set PLATFORM_ADMIN_KEYPAIR');
  let adminKey: KeypairBytes;
  try {
    adminKey = parseKeypairSetting(adminSetting);
  } catch (error) {
    throw usage(`--admin-keypair / PLATFORM_ADMIN_KEYPAIR ${(error as Error).message}`);
  }
  const variant = (flags.elf ?? 'v0') as RouterProgramVariant;
  if (!ROUTER_PROGRAM_VARIANTS.includes(variant)) throw usage('--elf must be v0 or v3');
  const priorityFee = flags['priority-fee'] ?? '0';
  if (!/^\d+$/.test(priorityFee))
    throw usage('--priority-fee must be micro-lamports per compute unit, a whole number');
  const concurrency = Number(flags.concurrency ?? '8');
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 32)
    throw usage('--concurrency must be a whole number from 1 to 32');
  const programId = flags['program-id'] ?? defaults.routerProgramId;
  if (programId !== undefined && !isAddress(programId))
    throw usage('--program-id / ROUTER_PROGRAM_ID must be an address');
  return {
    rpcUrl,
    chain: createRpcChain({ rpcUrl }),
    adminKey,
    variant,
    microLamportsPerCu: BigInt(priorityFee),
    concurrency,
    programId,
    keyPath: resolve(flags['program-keypair'] ?? join(defaults.dataDir, 'router-program-keypair.json')),
  };
}

const print = (stream: NodeJS.WritableStream, output: object) =>
  stream.write(`${JSON.stringify(output, null, 2)}\n`);

/**
 * Runs `platform deploy`: prints its result as JSON (on stderr with exit status 1 when refused or
 * failed); progress on stderr.
 */
export async function platformDeploy(flags: DeployFlags, usage: (message: string) => Error): Promise<number> {
  const { rpcUrl, chain, adminKey, variant, microLamportsPerCu, concurrency, programId, keyPath } =
    settingsOf(flags, usage);
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const admin = await adminKey.signer();
  if (flags['close-buffer']) {
    const closed = await closeBuffer({ chain, admin, microLamportsPerCu });
    const message = closed
      ? `Closed the admin's buffer: ${closed.lamports} lamports back to ${admin.address}, in transaction ${closed.signature}.`
      : `The admin ${admin.address} has no buffer on this cluster; nothing to do.`;
    print(process.stdout, { action: closed ? 'closed' : 'none', message });
    return 0;
  }
  const programKeypair = await programKey(keyPath, programId, progress);
  const programAddress = (programId ?? programKeypair?.address) as Address;
  let result: ProgramDeployResult;
  try {
    result = await deployProgram({
      chain,
      admin,
      programAddress,
      programSigner: programKeypair && (await programKeypair.signer()),
      elf: new Uint8Array(await readFile(routerProgramPath(variant))),
      microLamportsPerCu,
      concurrency,
      progress,
    });
  } catch (error) {
    if (!(error instanceof PlatformTransactionError || isChainError(error))) throw error;
    const what = isChainError(error)
      ? `The chain at ${rpcUrl} failed a request (${error.code}: ${error.message.replace(/\.$/, '')})`
      : error.message;
    const message = `${what}.${await leftoverNote(chain, admin.address)}`;
    print(process.stderr, { action: 'failed', message });
    return 1;
  }
  const refused = result.action === 'refused';
  print(refused ? process.stderr : process.stdout, {
    action: result.action,
    message: result.message,
    programId: result.programAddress,
    programDataAddress: result.programDataAddress,
    upgradeAuthority: result.upgradeAuthority,
    elf: variant,
    programKeypair: programKeypair?.address === programAddress ? keyPath : null,
    signature: result.signature,
    maxDataLen: result.maxDataLen === null ? null : String(result.maxDataLen),
    writes: result.writes,
    spentLamports: String(result.spentLamports),
  });
  return refused ? 1 : 0;
}
