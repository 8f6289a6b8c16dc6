import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type ServiceProcess, startServiceProcess } from '../helpers/process.ts';

// `npm start` runs npm, which runs the script through a shell, which runs the service: stopping
// npm must stop all of them and free every port the service held.

let dataDir: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tr-npm-start-'));
});
after(() => rm(dataDir, { recursive: true, force: true }));

/** The local chain's JSON-RPC endpoint, from the service's start line. */
function chainUrl(service: ServiceProcess): string {
  const line = service.logs.find((entry) => entry.includes('Transfer Router listening'))!;
  return (JSON.parse(line) as { chain: string }).chain;
}

/** Whether any process of the group npm leads (npm, a shell, the service) is still running. */
function groupAlive(service: ServiceProcess): boolean {
  try {
    process.kill(-service.child.pid!, 0);
    return true;
  } catch {
    return false;
  }
}

/** Asserts that npm, the shell and the service are all gone and that no port still answers. */
async function assertNothingLeft(service: ServiceProcess, ports: string[]) {
  assert.equal(groupAlive(service), false, 'a process of `npm start` is left');
  assert.throws(() => process.kill(service.pid, 0), { code: 'ESRCH' });
  for (const url of ports) await assert.rejects(fetch(url), TypeError, `${url} still answers`);
}

/** Runs a stop scenario; whatever it asserts, nothing it started outlives it. */
async function withNpmStart(run: (service: ServiceProcess, ports: string[]) => Promise<void>) {
  const service = await startServiceProcess({ DATA_DIR: dataDir }, { via: 'npm' });
  try {
    await run(service, [`${service.url}/healthz`, chainUrl(service)]);
  } finally {
    // npm runs in a process group of its own here, so every process it started is in it.
    if (groupAlive(service)) process.kill(-service.child.pid!, 'SIGKILL');
  }
}

test('SIGTERM to `npm start` stops the service with it: npm exits 0, no process is left, no port answers', () =>
  withNpmStart(async (service, ports) => {
    assert.equal((await fetch(ports[0]!)).status, 200);
    assert.notEqual(service.pid, service.child.pid, 'npm is not the service');
    const code = await service.stop('SIGTERM');
    await assertNothingLeft(service, ports);
    assert.equal(code, 0);
    assert.ok(service.logs.some((line) => line.includes('"msg":"stopped"')));
  }));

test('Ctrl-C on `npm start` (SIGINT to the whole foreground group, which npm forwards again) stops gracefully', () =>
  withNpmStart(async (service, ports) => {
    const exited = once(service.child, 'exit');
    process.kill(-service.child.pid!, 'SIGINT');
    assert.deepEqual(await exited, [0, null]);
    await assertNothingLeft(service, ports);
    const stopping = service.logs.filter((line) => line.includes('shutting down'));
    assert.equal(stopping.length, 1, stopping.join('\n'));
    assert.ok(service.logs.some((line) => line.includes('"msg":"stopped"')));
  }));
