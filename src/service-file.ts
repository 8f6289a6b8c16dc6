import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isProcessRunning } from './data-dir-lock.ts';

/** How the embedded chain behaves: its profile (LOCAL_CHAIN_PROFILE) and the seed of its draws. */
export interface LocalChainProfile {
  name: string;
  seed: string;
}

/** What a running local service tells local tools (the admin CLI, the demo) about itself. */
export interface ServiceFile {
  /** Where the API listens. */
  url: string;
  /** The service's process, so a file left by a killed one is recognised. */
  pid: number;
  /** The JSON-RPC endpoint of the chain it uses (the embedded one's, or RPC_URL). */
  rpcUrl?: string;
  /** The embedded chain's profile; absent with RPC_URL. */
  chainProfile?: LocalChainProfile;
}

/** A profile in words: the seed only matters where the chain draws anything. */
export function describeLocalChainProfile(profile: LocalChainProfile): string {
  return profile.name === 'instant'
    ? 'instant profile'
    : `${profile.name}-like profile, seed ${profile.seed}`;
}

/** Where a running local service says where it listens; it is removed when the service stops. */
export function serviceFilePath(dataDir: string): string {
  return join(dataDir, 'service.json');
}

/** Records where this process listens (written whole: a reader never sees half a file). */
export async function writeServiceFile(dataDir: string, service: ServiceFile): Promise<void> {
  const path = serviceFilePath(dataDir);
  const partial = `${path}.${service.pid}.tmp`;
  await mkdir(dataDir, { recursive: true });
  await writeFile(partial, `${JSON.stringify(service)}\n`);
  await rename(partial, path);
}

/** The running service's record, or null when there is none, it is unreadable, or its process is gone. */
export async function readServiceFile(dataDir: string): Promise<ServiceFile | null> {
  let parsed: Partial<ServiceFile> & { chainProfile?: Partial<LocalChainProfile> };
  try {
    parsed = JSON.parse(await readFile(serviceFilePath(dataDir), 'utf8'));
  } catch {
    return null;
  }
  if (typeof parsed.url !== 'string' || typeof parsed.pid !== 'number' || !isProcessRunning(parsed.pid))
    return null;
  return {
    url: parsed.url,
    pid: parsed.pid,
    ...(typeof parsed.rpcUrl === 'string' ? { rpcUrl: parsed.rpcUrl } : {}),
    ...(typeof parsed.chainProfile?.name === 'string' && typeof parsed.chainProfile.seed === 'string'
      ? { chainProfile: { name: parsed.chainProfile.name, seed: parsed.chainProfile.seed } }
      : {}),
  };
}

/** Removes the record if it is this process's (another service may have started on the same data since). */
export async function removeServiceFile(dataDir: string, pid: number): Promise<void> {
  let recorded: unknown;
  try {
    recorded = JSON.parse(await readFile(serviceFilePath(dataDir), 'utf8')).pid;
  } catch {
    return;
  }
  if (recorded === pid) await rm(serviceFilePath(dataDir), { force: true });
}
