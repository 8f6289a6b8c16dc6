import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { TRANSITIONS } from '../../src/domain/lifecycle.ts';

/** The table of moves as docs/architecture.md shows it, from the domain module. */
function lifecycleTable(): string {
  const code = (values: readonly string[]) => values.map((value) => `\`${value}\``).join(', ');
  const rows = Object.entries(TRANSITIONS).map(([name, move]) =>
    [
      `\`${name}\``,
      move.when,
      move.from.length === 0 ? '—' : code(move.from),
      move.to === null ? 'unchanged' : `\`${move.to}\``,
      move.status === null ? 'unchanged' : `\`${move.status}\``,
      move.events.length === 0 ? '—' : code(move.events.map((event) => event.replace('transfer.', ''))),
    ].join(' | '),
  );
  return [
    '| move | when | from phases | phase | status | events (`transfer.…`) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
  ].join('\n');
}

test('docs/architecture.md shows the moves of a transfer’s life as the domain module has them', async () => {
  const page = await readFile(join(import.meta.dirname, '..', '..', 'docs', 'architecture.md'), 'utf8');
  const start = page.search(/^\| move\s+\| when\s+\|/m);
  assert.ok(start >= 0, 'the table is there');
  const end = page.indexOf('\n\n', start);
  const shown = page
    .slice(start, end)
    .split('\n')
    .map((line) =>
      line
        .replace(/\s*\|\s*/g, '|')
        .replace(/-{3,}/g, '---')
        .trim(),
    );
  const expected = lifecycleTable()
    .split('\n')
    .map((line) => line.replace(/\s*\|\s*/g, '|'));
  assert.deepEqual(shown, expected);
});
