import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { dataDirLockPath } from '../../src/data-dir-lock.ts';
import { isFree, runServiceProcess, type ServiceProcess, startServiceProcess } from '../helpers/process.ts';

/** The test key the first start printed. */
function firstKey(service: ServiceProcess): string {
  const key = /First start: created the integration "local"[\s\S]*?(mh_test_[0-9A-Za-z]{32})/.exec(
    service.logs.join('\n'),
  )?.[1];
  assert.ok(key, service.logs.join('\n'));
  return key;
}

/** The embedded chain's JSON-RPC endpoint, from the line saying where the service listens. */
function chainUrl(service: ServiceProcess): string {
  const line = service.logs.find((entry) => entry.includes('Transfer Router listening'))!;
  return (JSON.parse(line) as { chain: string }).chain;
}

/** A loopback port free now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Answers whether the service's data still serve `key`'s integration. */
async function usageStatus(service: ServiceProcess, key: string): Promise<number> {
  const response = await fetch(`${service.url}/api/v1/usage`, { headers: { 'x-api-key': key } });
  await response.body?.cancel();
  return response.status;
}

test('a second `npm start` on the same DATA_DIR stops before opening anything, naming the running service and DATA_DIR', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-data-dir-'));
  try {
    const first = await startServiceProcess({ DATA_DIR: dataDir });
    const key = firstKey(first);
    try {
      // As the port hints of a clash would have it: another API port, and the running chain's own
      // RPC port, which the hint must move (with its WebSocket neighbour) to free ones.
      const rpc = chainUrl(first);
      const apiPort = await freePort();
      const rpcPort = Number(new URL(rpc).port);
      const second = await runServiceProcess(
        { DATA_DIR: dataDir, PORT: String(apiPort), LOCAL_RPC_PORT: String(rpcPort) },
        { via: 'npm' },
      );
      assert.equal(second.code, 1);
      assert.equal(second.stdout, '', 'no step of the start was taken: no database opened, no key');
      const example = /\(e\.g\. `DATA_DIR=(\S+) PORT=(\d+) LOCAL_RPC_PORT=(\d+) npm start`\)\.\n$/.exec(
        second.stderr,
      );
      assert.ok(example, second.stderr);
      assert.equal(
        second.stderr,
        `Cannot start: the data directory ${dataDir} is in use by another Transfer Router (pid ${first.pid}: API at ${first.url}, chain JSON-RPC at ${rpc}). Stop it, or set DATA_DIR to another directory to run a second service beside it (e.g. \`DATA_DIR=${dataDir}-2 PORT=${apiPort} LOCAL_RPC_PORT=${example[3]} npm start\`).\n`,
      );
      const suggested = Number(example[3]);
      assert.ok(suggested !== rpcPort && suggested + 1 !== rpcPort, 'not the running chain’s ports');
      for (const port of [suggested, suggested + 1]) assert.ok(await isFree(port), `port ${port} is in use`);

      // The running service carries on, holding its directory.
      assert.equal(await usageStatus(first, key), 200);
      assert.equal(JSON.parse(await readFile(dataDirLockPath(dataDir), 'utf8')).pid, first.pid);
    } finally {
      assert.equal(await first.stop(), 0);
    }

    // Its data are whole: the next start opens them as they were, the key still works.
    const again = await startServiceProcess({ DATA_DIR: dataDir });
    try {
      assert.equal(await usageStatus(again, key), 200);
      assert.ok(!again.logs.join('\n').includes('First start'));
    } finally {
      assert.equal(await again.stop(), 0);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a service killed outright leaves its lock behind, and the next start takes the directory over', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-data-dir-'));
  try {
    const first = await startServiceProcess({ DATA_DIR: dataDir });
    const key = firstKey(first);
    await first.stop('SIGKILL');
    assert.equal(JSON.parse(await readFile(dataDirLockPath(dataDir), 'utf8')).pid, first.pid, 'left behind');

    const next = await startServiceProcess({ DATA_DIR: dataDir });
    try {
      assert.equal(await usageStatus(next, key), 200);
      assert.equal(JSON.parse(await readFile(dataDirLockPath(dataDir), 'utf8')).pid, next.pid);
    } finally {
      assert.equal(await next.stop(), 0);
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
