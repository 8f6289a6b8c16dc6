// A transfer's status and phase change in one place (src/store/transitions.ts), only by the moves
// the domain names, from the phases it allows, with the move's events in the same transaction.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TRANSITIONS } from '../../src/domain/lifecycle.ts';
import { applyMove } from '../../src/store/transitions.ts';
import { createTestApp, createTransfer, type TestApp } from '../helpers/app.ts';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** Every non-test TypeScript file under `dir`. */
async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

test('no file of src/ but the transitions writes a transfer’s status or phase', async () => {
  const writers: string[] = [];
  for (const file of await sources(SRC)) {
    const text = await readFile(file, 'utf8');
    for (const [, set] of text.matchAll(/UPDATE\s+transfers\b([\s\S]*?)(?:\bWHERE\b|`)/gi)) {
      if (/\b(status|phase)\s*=/.test(set!)) writers.push(file.slice(SRC.length + 1));
    }
    if (/INSERT\s+INTO\s+transfers\b/i.test(text)) writers.push(`${file.slice(SRC.length + 1)} (insert)`);
  }
  assert.deepEqual(writers.sort(), ['store/transfers.ts (insert)', 'store/transitions.ts']);
});

describe('applying a move', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const row = async (id: number) =>
    (
      await t.database.db.query<{ status: string; phase: string }>(
        'SELECT status, phase FROM transfers WHERE id = $1',
        [id],
      )
    ).rows[0]!;
  const events = async (id: number) =>
    (
      await t.database.db.query<{ type: string }>(
        'SELECT type FROM events WHERE transfer_id = $1 ORDER BY sequence',
        [id],
      )
    ).rows.map((event) => event.type);

  test('from an allowed phase: status, phase and the move’s events, together', async () => {
    const caller = await t.newCaller();
    const { id } = await createTransfer(caller);
    const now = t.clock.now();
    const prepared = await t.database.db.transaction((tx) =>
      applyMove(tx, id, { name: 'prepared', keeperFundingInBundle: true }, now),
    );
    assert.deepEqual([prepared?.status, prepared?.phase], ['awaiting_signature', 'quoted']);
    const funded = await t.database.db.transaction((tx) => applyMove(tx, id, { name: 'keeperFunded' }, now));
    assert.deepEqual([funded?.status, funded?.phase], ['awaiting_signature', 'funding']);
    assert.deepEqual(await events(id), ['transfer.quote_created', ...TRANSITIONS.keeperFunded.events]);
  });

  test('from any other phase: nothing written, no event', async () => {
    const caller = await t.newCaller();
    const { id } = await createTransfer(caller);
    const now = t.clock.now();
    await t.database.db.transaction((tx) => applyMove(tx, id, { name: 'expired' }, now));
    for (const move of [{ name: 'rescued' }, { name: 'reclaimed' }, { name: 'deploying' }] as const) {
      assert.equal(await t.database.db.transaction((tx) => applyMove(tx, id, move, now)), null, move.name);
    }
    assert.deepEqual(await row(id), { status: 'expired', phase: 'expired' });
    assert.deepEqual(await events(id), ['transfer.quote_created', ...TRANSITIONS.expired.events]);
  });

  test('a move and its events roll back together', async () => {
    const caller = await t.newCaller();
    const { id } = await createTransfer(caller);
    await assert.rejects(
      t.database.db.transaction(async (tx) => {
        await applyMove(tx, id, { name: 'expired' }, t.clock.now());
        throw new Error('the caller fails after the move');
      }),
      /the caller fails/,
    );
    assert.deepEqual(await row(id), { status: 'quote', phase: 'quoted' });
    assert.deepEqual(await events(id), ['transfer.quote_created']);
  });
});
