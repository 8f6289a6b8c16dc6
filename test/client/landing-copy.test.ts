import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLIENT_LANDING_PATH, clientLandingFiles } from '../../tools/client-landing.ts';

test('the TypeScript client lands by the service’s landing policy: its copy is packages/landing’s sources, file for file', async () => {
  const expected = await clientLandingFiles();
  assert.ok(expected.has('land.ts') && expected.has('budget.ts'));
  const committed = (await readdir(CLIENT_LANDING_PATH)).sort();
  assert.deepEqual(committed, [...expected.keys()], 'the same files');
  for (const [name, text] of expected) {
    assert.ok(
      (await readFile(join(CLIENT_LANDING_PATH, name), 'utf8')) === text,
      `clients/typescript/src/landing/${name} differs from packages/landing/src/${name}: run \`npm run generate:client\` and commit it`,
    );
  }
});
