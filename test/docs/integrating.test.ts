import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { ERROR_CODES } from '../../src/domain/errors.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFile(join(ROOT, path), 'utf8');

test('the integrating guide lists every error code with the status the service answers it with', async () => {
  const page = await read('docs/integrating.md');
  const section = page.slice(page.indexOf('## Every error code'));
  const rows = [...section.matchAll(/^\| `(MH_\d{3})` \| (\d{3}) +\|/gm)].map((match) => [
    match[1],
    Number(match[2]),
  ]);
  assert.deepEqual(
    rows,
    Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status]),
  );
});

test('the guide’s TypeScript quick start is the example the type check compiles', async () => {
  const page = await read('docs/integrating.md');
  const example = await read('clients/typescript/examples/quickstart.ts');
  const installed = example.replace("from '../src/index.ts';", "from '@transfer-router/client';");
  assert.ok(
    page.includes(`\`\`\`ts\n${installed}\`\`\``),
    'docs/integrating.md shows quickstart.ts as it is',
  );
});

test('the guide’s browser example is the one the browser test runs in Chromium', async () => {
  const page = await read('docs/integrating.md');
  const example = await read('clients/typescript/examples/browser.ts');
  const installed = example.replace("from '../src/index.ts';", "from '@transfer-router/client';");
  assert.ok(
    page.includes(`\`\`\`ts\n${installed}\`\`\``),
    'docs/integrating.md shows examples/browser.ts as it is',
  );
});
