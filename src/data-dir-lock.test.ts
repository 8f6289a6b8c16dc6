import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DataDirInUseError, dataDirHolder, dataDirLockPath, lockDataDir } from './data-dir-lock.ts';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'tr-data-dir-lock-'));
});
after(() => rm(root, { recursive: true, force: true }));

/** The id of a process that has ended. */
function endedPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

test('a data directory is held by one holder until it lets go', async () => {
  const dataDir = join(root, 'held');
  const lock = await lockDataDir(dataDir);
  assert.equal(await dataDirHolder(dataDir), process.pid);
  await assert.rejects(lockDataDir(dataDir), (error: unknown) => {
    assert.ok(error instanceof DataDirInUseError);
    assert.equal(error.pid, process.pid);
    assert.equal(error.dataDir, dataDir);
    return true;
  });
  await lock.release();
  assert.deepEqual(await readdir(dataDir), [], 'nothing left behind');
  assert.equal(await dataDirHolder(dataDir), null);
  await (await lockDataDir(dataDir)).release();
});

test('a lock left by a process that is gone, by an earlier life of this pid, or unreadable, is taken over', async () => {
  for (const [name, left] of [
    ['ended', JSON.stringify({ pid: endedPid(), started: 1 })],
    // A container's pid 1 that crashed, found by the next pid 1: its start time differs.
    ['reused', JSON.stringify({ pid: process.pid, started: performance.timeOrigin - 1 })],
    ['torn', '{"pid":'],
  ] as const) {
    const dataDir = join(root, name);
    await lockDataDir(dataDir).then((lock) => lock.release());
    await writeFile(dataDirLockPath(dataDir), left);
    assert.equal(await dataDirHolder(dataDir), null, name);
    const lock = await lockDataDir(dataDir);
    assert.equal(JSON.parse(await readFile(dataDirLockPath(dataDir), 'utf8')).pid, process.pid, name);
    assert.deepEqual(await readdir(dataDir), ['service.lock'], `${name}: the stale lock is gone`);
    await lock.release();
  }
});

test("letting go leaves another holder's lock in place", async () => {
  const dataDir = join(root, 'replaced');
  const lock = await lockDataDir(dataDir);
  const other = JSON.stringify({ pid: process.pid, started: performance.timeOrigin + 1 });
  await writeFile(dataDirLockPath(dataDir), other);
  await lock.release();
  assert.equal(await readFile(dataDirLockPath(dataDir), 'utf8'), other);
});

test('starts racing for a stale lock: exactly one takes it', async () => {
  const dataDir = join(root, 'race');
  await lockDataDir(dataDir).then((lock) => lock.release());
  await writeFile(dataDirLockPath(dataDir), JSON.stringify({ pid: endedPid(), started: 1 }));
  // Each contender holds what it took until its standard input closes, so no winner lets go early.
  const contender = `
    import { lockDataDir } from ${JSON.stringify(join(import.meta.dirname, 'data-dir-lock.ts'))};
    lockDataDir(${JSON.stringify(dataDir)}).then(
      () => console.log('took it'),
      (error) => console.log(error.name),
    );
    process.stdin.resume();`;
  const contenders = Array.from({ length: 4 }, () =>
    spawn(process.execPath, ['--input-type=module', '-e', contender], { stdio: ['pipe', 'pipe', 'inherit'] }),
  );
  const said = await Promise.all(
    contenders.map(
      (child) =>
        new Promise<string>((resolve) => {
          let out = '';
          child.stdout.on('data', (chunk) => {
            out += chunk;
            if (out.endsWith('\n')) resolve(out.trim());
          });
        }),
    ),
  );
  for (const child of contenders) child.stdin.end();
  await Promise.all(contenders.map((child) => once(child, 'exit')));
  assert.deepEqual(said.sort(), ['DataDirInUseError', 'DataDirInUseError', 'DataDirInUseError', 'took it']);
});
