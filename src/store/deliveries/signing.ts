import type { Owner } from '../../domain/integration.ts';
import type { Db } from '../db.ts';
import type { SecretBox } from '../secret-box.ts';

/** Where and how to send to an endpoint now: its URL and signing secrets. */
export interface SendingTarget {
  endpointId: number;
  url: string;
  secrets: string[];
}

/** An endpoint's columns that hold its signing secrets, sealed. */
export type SealedSecrets = {
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
};

/** An endpoint's signing secrets at `now`: the current one, then the previous one while its rotation overlap lasts. */
export type SigningSecrets = (endpoint: SealedSecrets, now: Date) => string[];

/** Opens endpoints' signing secrets, keeping the last 10,000 it opened. */
export function createSigningSecrets(secrets: SecretBox): SigningSecrets {
  // Opening a sealed secret is cheap but not free; a worker signs many deliveries per endpoint.
  const opened = new Map<string, string>();
  const open = (sealed: string) => {
    let secret = opened.get(sealed);
    if (secret === undefined) {
      if (opened.size >= 10_000) opened.clear();
      secret = secrets.open(sealed);
      opened.set(sealed, secret);
    }
    return secret;
  };
  return (endpoint, now) => {
    const list = [open(endpoint.secret_sealed)];
    if (
      endpoint.previous_secret_sealed &&
      endpoint.previous_secret_expires_at &&
      endpoint.previous_secret_expires_at > now
    ) {
      list.push(open(endpoint.previous_secret_sealed));
    }
    return list;
  };
}

/** The URL and current signing secrets of one of the owner's endpoints (active or not), or null. */
export async function sendingTarget(
  db: Db,
  signingSecrets: SigningSecrets,
  owner: Owner,
  endpointId: number,
  now: Date,
): Promise<SendingTarget | null> {
  const { rows } = await db.query<SealedSecrets & { id: string; url: string }>(
    `SELECT id, url, secret_sealed, previous_secret_sealed, previous_secret_expires_at FROM webhook_endpoints
      WHERE id = $1 AND integration_id = $2 AND mode = $3 AND deleted_at IS NULL`,
    [endpointId, owner.integrationId, owner.mode],
  );
  const row = rows[0];
  return row ? { endpointId: Number(row.id), url: row.url, secrets: signingSecrets(row, now) } : null;
}
