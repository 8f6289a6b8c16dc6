import { newEventId, transferEventPayload } from '../domain/events.ts';
import type { EventType, Transfer } from '../domain/transfer.ts';
import type { Sql } from './db.ts';

/**
 * Appends events about a transfer to the outbox, inside the caller's transaction, so the change
 * and its events commit together or not at all. Sequence numbers come from a counter on the
 * transfer row, which the caller's change has already locked.
 */
export async function appendTransferEvents(
  tx: Sql,
  transfer: Transfer,
  types: readonly EventType[],
  now: Date,
) {
  if (types.length === 0) return;
  const { rows } = await tx.query<{ event_sequence: number }>(
    'UPDATE transfers SET event_sequence = event_sequence + $2 WHERE id = $1 RETURNING event_sequence',
    [transfer.id, types.length],
  );
  const last = rows[0]!.event_sequence;
  const first = last - types.length + 1;
  const ids: string[] = [];
  const sequences: number[] = [];
  const typeList: string[] = [];
  const payloads: string[] = [];
  types.forEach((type, index) => {
    const id = newEventId();
    const sequence = first + index;
    ids.push(id);
    sequences.push(sequence);
    typeList.push(type);
    payloads.push(JSON.stringify(transferEventPayload({ id, type, transfer, sequence, createdAt: now })));
  });
  await tx.query(
    `INSERT INTO events (id, integration_id, mode, type, transfer_id, sequence, payload, created_at)
     SELECT id, $1, $2, type, $3, sequence, payload::jsonb, $4
       FROM unnest($5::text[], $6::text[], $7::int[], $8::text[]) AS e(id, type, sequence, payload)`,
    [transfer.integrationId, transfer.mode, transfer.id, now, ids, typeList, sequences, payloads],
  );
}
