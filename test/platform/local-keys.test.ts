import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  ensureLocalPlatformKeys,
  PlatformKeysError,
  platformKeysPath,
} from '../../src/platform/local-keys.ts';
import type { PlatformKeys } from '../../src/platform/platform.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { leakedSecrets } from './secrets.ts';

const addressesOf = (keys: PlatformKeys) => ({
  admin: keys.admin.address,
  screeningAuthority: keys.screeningAuthority.address,
  feeWallet: keys.feeWallet.address,
});

async function withDir(run: (dir: string) => Promise<void>) {
  const dir = await mkdtemp(join(tmpdir(), 'tr-platform-keys-'));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('local platform keys: generated once, sealed in a 0600 file, read back on every later start', async () => {
  await withDir(async (dir) => {
    const secrets = createSecretBox(randomBytes(32));
    const first = await ensureLocalPlatformKeys(dir, secrets);
    assert.equal(first.created, true);
    const addresses = addressesOf(first.keys);
    assert.equal(new Set(Object.values(addresses)).size, 3, 'three distinct keys');

    const path = platformKeysPath(dir);
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const content = await readFile(path, 'utf8');
    assert.match(content, /^v1\.[A-Za-z0-9_-]+\n$/, 'one sealed value');
    assert.deepEqual(leakedSecrets(content, first.keys), [], 'no key in the clear');
    for (const address of Object.values(addresses)) assert.ok(!content.includes(address));

    const second = await ensureLocalPlatformKeys(dir, secrets);
    assert.equal(second.created, false);
    assert.deepEqual(addressesOf(second.keys), addresses);
    assert.deepEqual(second.keys.admin.toKeygenArray(), first.keys.admin.toKeygenArray());
    assert.deepEqual(await readdir(dir), ['platform-keys'], 'nothing left aside');
  });
});

test('local platform keys: starts racing each other, in one process or several, share one key set', async () => {
  await withDir(async (dir) => {
    const key = randomBytes(32);
    const secrets = createSecretBox(key);
    const inProcess = await Promise.all(
      Array.from({ length: 8 }, () => ensureLocalPlatformKeys(dir, secrets)),
    );
    assert.equal(inProcess.filter((result) => result.created).length, 1);
    const addresses = addressesOf(inProcess[0]!.keys);
    for (const result of inProcess) assert.deepEqual(addressesOf(result.keys), addresses);
    assert.deepEqual(await readdir(dir), ['platform-keys']);
  });

  await withDir(async (dir) => {
    const key = randomBytes(32).toString('hex');
    const script = join(dir, 'ensure.ts');
    await writeFile(
      script,
      [
        `import { ensureLocalPlatformKeys } from ${JSON.stringify(join(import.meta.dirname, '../../src/platform/local-keys.ts'))};`,
        `import { createSecretBox } from ${JSON.stringify(join(import.meta.dirname, '../../src/store/secret-box.ts'))};`,
        `const { keys, created } = await ensureLocalPlatformKeys(process.argv[2], createSecretBox(Buffer.from(process.argv[3], 'hex')));`,
        'console.log(JSON.stringify({ created, admin: keys.admin.address, feeWallet: keys.feeWallet.address }));',
      ].join('\n'),
    );
    const data = join(dir, 'data');
    const run = () =>
      new Promise<{ created: boolean; admin: string; feeWallet: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [script, data, key], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        child.stdout.on('data', (chunk) => (out += chunk));
        child.on('close', (code) =>
          code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exit ${code}`)),
        );
      });
    const results = await Promise.all([run(), run(), run(), run()]);
    assert.equal(results.filter((result) => result.created).length, 1);
    assert.equal(new Set(results.map((result) => `${result.admin} ${result.feeWallet}`)).size, 1);
    assert.deepEqual(await readdir(data), ['platform-keys']);
  });
});

test('local platform keys sealed under another encryption key stop the start with a clear error', async () => {
  await withDir(async (dir) => {
    await ensureLocalPlatformKeys(dir, createSecretBox(randomBytes(32)));
    await assert.rejects(
      ensureLocalPlatformKeys(dir, createSecretBox(randomBytes(32))),
      (error: Error) =>
        error instanceof PlatformKeysError &&
        error.message.startsWith(
          `${platformKeysPath(dir)} cannot be read with this deployment's encryption key`,
        ),
    );
    await writeFile(platformKeysPath(dir), 'not sealed\n');
    await assert.rejects(ensureLocalPlatformKeys(dir, createSecretBox(randomBytes(32))), PlatformKeysError);
  });
});
