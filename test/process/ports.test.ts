import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runServiceProcess, startServiceProcess } from '../helpers/process.ts';

/** Listens on a free loopback port, as another program would, until closed. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

test('a taken PORT or LOCAL_RPC_PORT stops the first start at once, naming it; the next start still shows the key', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-ports-'));
  const taken = await occupy();
  try {
    for (const [variable, what] of [
      ['PORT', 'the HTTP API'],
      ['LOCAL_RPC_PORT', "the local chain's JSON-RPC endpoint"],
    ] as const) {
      const failed = await runServiceProcess({ DATA_DIR: dataDir, [variable]: String(taken.port) });
      assert.equal(failed.code, 1);
      assert.equal(
        failed.stderr,
        `Cannot start: port ${taken.port} on 127.0.0.1 is already in use, so ${what} cannot listen there. Stop the program that uses it, or choose another port with ${variable} (e.g. \`${variable}=${taken.port + 1} npm start\`; 0 picks a free one).\n`,
      );
      assert.equal(failed.stdout, '', 'no key, no stack trace, nothing else');
      // Nothing was created: no database, no chain, no integration whose key nobody saw.
      assert.deepEqual(await readdir(dataDir), []);
    }

    const next = await startServiceProcess({ DATA_DIR: dataDir });
    try {
      const key = /First start: created the integration "local"[\s\S]*?(mh_test_[0-9A-Za-z]{32})/.exec(
        next.logs.join('\n'),
      )?.[1];
      assert.ok(key, next.logs.join('\n'));
      const usage = await fetch(`${next.url}/api/v1/usage`, { headers: { 'x-api-key': key } });
      assert.equal(usage.status, 200);
    } finally {
      assert.equal(await next.stop(), 0);
    }
  } finally {
    await new Promise((resolve) => taken.server.close(resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
});
