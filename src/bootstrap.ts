import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { apiKeyHint, generateApiKey, hashApiKey } from './domain/api-keys.ts';
import type { Clock } from './domain/clock.ts';
import type { IntegrationStore } from './store/integrations.ts';

/** Where local mode keeps its generated admin token; the admin CLI reads it from there. */
export function adminTokenPath(dataDir: string): string {
  return join(dataDir, 'admin-token');
}

/** Reads the local admin token, generating it (file mode 0600) on first start. */
export async function ensureLocalAdminToken(dataDir: string): Promise<string> {
  const path = adminTokenPath(dataDir);
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    await mkdir(dataDir, { recursive: true });
    const token = `adm_${randomBytes(24).toString('base64url')}`;
    // 'wx' fails if another process created it first; then that one is read.
    try {
      await writeFile(path, `${token}\n`, { mode: 0o600, flag: 'wx' });
      return token;
    } catch {
      return (await readFile(path, 'utf8')).trim();
    }
  }
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
