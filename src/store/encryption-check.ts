import type { Db } from './db.ts';
import type { SecretBox } from './secret-box.ts';

const CHECK_KEY = 'encryption_key_check';
const CHECK_VALUE = 'transfer-router encryption key check';

/** Raised when this process's encryption key is not the one the database's secrets are sealed with. */
export class EncryptionKeyMismatchError extends Error {
  constructor() {
    super(
      'ENCRYPTION_KEY does not match the key this database was set up with: every process sharing a database must use the same ENCRYPTION_KEY.',
    );
    this.name = 'EncryptionKeyMismatchError';
  }
}

/**
 * Seals a known value on first start and checks it on every later one, so that a process with a
 * different encryption key (a typo, a forgotten variable, a second machine's generated local key)
 * stops at once instead of failing to read webhook secrets later.
 */
export async function verifyEncryptionKey(db: Db, secrets: SecretBox): Promise<void> {
  await db.query('INSERT INTO service_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [
    CHECK_KEY,
    secrets.seal(CHECK_VALUE),
  ]);
  const { rows } = await db.query<{ value: string }>('SELECT value FROM service_settings WHERE key = $1', [
    CHECK_KEY,
  ]);
  let opened: string | undefined;
  try {
    opened = secrets.open(rows[0]!.value);
  } catch {
    throw new EncryptionKeyMismatchError();
  }
  if (opened !== CHECK_VALUE) throw new EncryptionKeyMismatchError();
}
