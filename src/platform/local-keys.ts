import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SecretBox } from '../store/secret-box.ts';
import { generateKeypair, keypairFromKeygenJson } from './keypair.ts';
import type { PlatformKeys } from './platform.ts';
import { PLATFORM_ROLES } from './status.ts';

/** A platform key file that cannot be read back: corrupt, or sealed under another encryption key. */
export class PlatformKeysError extends Error {
  override name = 'PlatformKeysError';
}

/** Where local mode keeps its platform keys, sealed with the encryption key. */
export function platformKeysPath(dataDir: string): string {
  return join(dataDir, 'platform-keys');
}

/** Fresh platform keys. */
export function generatePlatformKeys(): PlatformKeys {
  return { admin: generateKeypair(), screeningAuthority: generateKeypair(), feeWallet: generateKeypair() };
}

function seal(keys: PlatformKeys, secrets: SecretBox): string {
  return secrets.seal(
    JSON.stringify(Object.fromEntries(PLATFORM_ROLES.map((role) => [role, keys[role].toKeygenArray()]))),
  );
}

function open(path: string, sealed: string, secrets: SecretBox): PlatformKeys {
  try {
    const values = JSON.parse(secrets.open(sealed.trim())) as Record<string, unknown>;
    return {
      admin: keypairFromKeygenJson(values.admin),
      screeningAuthority: keypairFromKeygenJson(values.screeningAuthority),
      feeWallet: keypairFromKeygenJson(values.feeWallet),
    };
  } catch {
    throw new PlatformKeysError(
      `${path} cannot be read with this deployment's encryption key (ENCRYPTION_KEY, or DATA_DIR/encryption-key): it was sealed under another key or is damaged. Restore the key it was sealed with; remove the file only to start over with new platform keys on a new chain.`,
    );
  }
}

/**
 * Local mode's platform keys: read from the data directory, or generated and sealed there (mode
 * 0600) on first start. The file appears complete or not at all (written aside, then linked into
 * place, which fails if it exists), so starts racing each other all end up with the first set.
 */
export async function ensureLocalPlatformKeys(
  dataDir: string,
  secrets: SecretBox,
): Promise<{ keys: PlatformKeys; created: boolean }> {
  const path = platformKeysPath(dataDir);
  const existing = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing !== undefined) return { keys: open(path, existing, secrets), created: false };

  await mkdir(dataDir, { recursive: true });
  const keys = generatePlatformKeys();
  const aside = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(aside, `${seal(keys, secrets)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    await link(aside, path);
    return { keys, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { keys: open(path, await readFile(path, 'utf8'), secrets), created: false };
  } finally {
    await unlink(aside);
  }
}
