import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { bundleForBrowser } from '../helpers/browser.ts';

const PACKAGE = join(import.meta.dirname, '..', '..', 'clients', 'typescript');

/** The source file an export of the client package is built from (`./dist/x.js` from `src/x.ts`). */
async function sourceOf(subpath: string): Promise<string> {
  const manifest = JSON.parse(await readFile(join(PACKAGE, 'package.json'), 'utf8'));
  const built: string = manifest.exports[subpath].default;
  return join('clients', 'typescript', built.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
}

test("the client's main entry bundles for a browser with no Node.js module in it, its dependencies' included", async () => {
  const main = await sourceOf('.');
  assert.equal(main, join('clients', 'typescript', 'src', 'index.ts'));
  const bundle = await bundleForBrowser(main);
  assert.deepEqual(bundle.nodeImports, []);
  for (const name of ['createTransferRouterClient', 'signAndBroadcastBundle', 'waitForTransfer', 'rescue']) {
    assert.match(bundle.code, new RegExp(`\\b${name}\\b`), `the bundle exports ${name}`);
  }
});

test('the webhooks entry is where Node.js is needed: a browser bundle of it is told node:crypto is missing', async () => {
  const webhooks = await sourceOf('./webhooks');
  const bundle = await bundleForBrowser(webhooks);
  assert.deepEqual(bundle.nodeImports, [`${webhooks} imports node:crypto`]);
});
