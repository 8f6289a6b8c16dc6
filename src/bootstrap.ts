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
 * Local mode's first key: on the first start that gets as far as listening, issues a test key for
 * the integration `local` (created if the store has no integration) and hands it to `show` before
 * it is stored, so a start that stops earlier leaves no unseen key and the next start shows one.
 * Later starts show none.
 */
export async function showFirstKey(
  integrations: IntegrationStore,
  clock: Clock,
  show: (key: string, created: boolean) => void,
): Promise<void> {
  const key = generateApiKey('test');
  let shown = false;
  try {
    await integrations.issueFirstKey({
      name: 'local',
      key: { mode: 'test', hash: hashApiKey(key), hint: apiKeyHint(key) },
      now: clock.now(),
      show: (created) => {
        show(key, created);
        shown = true;
      },
    });
  } catch (error) {
    if (!shown) throw error;
    throw new Error(
      'the test API key shown above could not be stored, so it does not work; the next start shows another',
      {
        cause: error,
      },
    );
  }
}

/** The first key's announcement, with a request to try it; plain text, since a key is never logged. */
export function firstKeyBanner(key: string, created: boolean, base: string): string {
  return [
    '',
    created
      ? 'First start: created the integration "local" with this test API key (shown only now):'
      : 'The integration "local" had no key shown yet (an earlier start stopped before it could); a new test API key (shown only now):',
    `  ${key}`,
    'Try it:',
    `  curl -s -X POST ${base}/api/v1/transfers/estimate -H 'x-api-key: ${key}' -H 'content-type: application/json' -d '{"tokenMint":"So11111111111111111111111111111111111111112","amountRaw":"1000000000","hops":3}'`,
    `Or sign in with it to the console: ${base}/dashboard`,
    '',
    '',
  ].join('\n');
}
