import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { readServiceFile, removeServiceFile, serviceFilePath, writeServiceFile } from './service-file.ts';

let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tr-service-file-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

/** The id of a process that has ended. */
function endedPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  return child.pid!;
}

test('a running service is found where it said it listens; the file is whole and only its own', async () => {
  const service = {
    url: 'http://127.0.0.1:18080',
    pid: process.pid,
    rpcUrl: 'http://127.0.0.1:18899',
    chainProfile: { name: 'mainnet', seed: 'rehearsal' },
  };
  await writeServiceFile(join(dataDir, 'fresh'), service);
  assert.deepEqual(await readServiceFile(join(dataDir, 'fresh')), service);
  assert.deepEqual(await readdir(join(dataDir, 'fresh')), ['service.json']);

  // Another process's record stays; this process's goes.
  await removeServiceFile(join(dataDir, 'fresh'), process.pid + 1);
  assert.deepEqual(await readServiceFile(join(dataDir, 'fresh')), service);
  await removeServiceFile(join(dataDir, 'fresh'), process.pid);
  assert.equal(await readServiceFile(join(dataDir, 'fresh')), null);
});

test('a record left by a process that has ended, or an unreadable one, is no service', async () => {
  await writeServiceFile(dataDir, { url: 'http://127.0.0.1:18080', pid: endedPid() });
  assert.equal(await readServiceFile(dataDir), null);
  await writeFile(serviceFilePath(dataDir), '{"url":');
  assert.equal(await readServiceFile(dataDir), null);
  assert.equal(await readServiceFile(join(dataDir, 'missing')), null);
});
