import {
  apiKeyHint,
  generateApiKey,
  hashApiKey,
  type KeyMode,
  LIVE_KEY_ON_LOCAL_CHAIN,
} from '../domain/api-keys.ts';
import type { Clock } from '../domain/clock.ts';
import type { Cluster } from '../platform/platform.ts';
import type { ApiKeyRecord, IntegrationStore } from '../store/integrations.ts';

/** A key just issued: its record, the key itself (shown once, never stored), and a warning when one is due. */
export interface IssuedKey {
  record: ApiKeyRecord;
  key: string;
  /** Set when the key is live and the service runs on a local chain (cluster localnet). */
  warning?: string;
}

/**
 * Issues an API key for an integration (the admin API's `POST /integrations/{id}/keys` and the
 * operator's console): only its hash and hint are stored. A live key on a local chain is issued
 * with a warning, logged with the key's id.
 */
export async function issueApiKey(
  deps: {
    integrations: Pick<IntegrationStore, 'createKey'>;
    clock: Clock;
    cluster: Cluster;
    log: { warn(obj: object, msg: string): void };
  },
  input: { integrationId: number; mode: KeyMode },
): Promise<IssuedKey> {
  const key = generateApiKey(input.mode);
  const record = await deps.integrations.createKey({
    integrationId: input.integrationId,
    mode: input.mode,
    hash: hashApiKey(key),
    hint: apiKeyHint(key),
    now: deps.clock.now(),
  });
  if (record.mode !== 'live' || deps.cluster !== 'localnet') return { record, key };
  deps.log.warn({ apiKeyId: record.id, integrationId: record.integrationId }, LIVE_KEY_ON_LOCAL_CHAIN);
  return { record, key, warning: LIVE_KEY_ON_LOCAL_CHAIN };
}
