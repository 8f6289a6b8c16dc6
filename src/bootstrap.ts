import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { apiKeyHint, generateApiKey, hashApiKey } from './domain/api-keys.ts';
import type { Clock } from './domain/clock.ts';
import type { IntegrationStore } from './store/integrations.ts';

/** Where local mode keeps its generated admin token; the admin CLI reads it from there. */
export function adminTokenPath(dataDir: string): string {
  return join(dataDir, 'admin-token');
}

/** Reads a local-mode secret from the data directory, generating it (file mode 0600) on first start. */
async function ensureLocalSecret(path: string, generate: () => string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    await mkdir(dirname(path), { recursive: true });
    // 'wx' fails if another process created it first; then that one is read.
    try {
      const secret = generate();
      await writeFile(path, `${secret}\n`, { mode: 0o600, flag: 'wx' });
      return secret;
    } catch {
      return (await readFile(path, 'utf8')).trim();
    }
  }
}

/** The local admin token (generated on first start). */
export function ensureLocalAdminToken(dataDir: string): Promise<string> {
  return ensureLocalSecret(adminTokenPath(dataDir), () => `adm_${randomBytes(24).toString('base64url')}`);
}

/** The local encryption key for secrets at rest (generated on first start), as 64 hex characters. */
export function ensureLocalEncryptionKey(dataDir: string): Promise<string> {
  return ensureLocalSecret(join(dataDir, 'encryption-key'), () => randomBytes(32).toString('hex'));
}

/**
 * On the very first start in local mode, creates an integration named `local` with a test key so
 * that a newcomer can call the API at once. Returns the key (shown once) or null when the store
 * already had integrations.
 */
export async function bootstrapLocalIntegration(integrations: IntegrationStore, clock: Clock) {
  const key = generateApiKey('test');
  const created = await integrations.createFirst({
    name: 'local',
    key: { mode: 'test', hash: hashApiKey(key), hint: apiKeyHint(key) },
    now: clock.now(),
  });
  return created ? { integrationId: created.id, key } : null;
}
