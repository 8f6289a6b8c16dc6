import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isFree, runServiceProcess, type ServiceProcess, startServiceProcess } from '../helpers/process.ts';

/** Listens on a free loopback port, as another program would, until closed. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

/** A loopback port free now whose next port is free too (a chain's JSON-RPC and WebSocket ports). */
async function freePair(): Promise<number> {
  for (;;) {
    const { port, server } = await occupy();
    await new Promise((resolve) => server.close(resolve));
    if (port < 65535 && (await isFree(port + 1))) return port;
  }
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
      const suggested = Number(/`\w+=(\d+) npm start`/.exec(failed.stderr)?.[1]);
      assert.equal(
        failed.stderr,
        `Cannot start: port ${taken.port} on 127.0.0.1 is already in use, so ${what} cannot listen there. Stop the program that uses it, or choose another port with ${variable} (e.g. \`${variable}=${suggested} npm start\`; 0 picks a free one).\n`,
      );
      // Free, and for the chain its WebSocket port (the next) too.
      for (const port of variable === 'PORT' ? [suggested] : [suggested, suggested + 1])
        assert.ok(await isFree(port), `port ${port} is in use`);
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

test('ports held by another Transfer Router are named with its pid, and the hint, followed, starts the second one', async () => {
  // Run as a newcomer does, from a directory of their own: the first service on the default
  // DATA_DIR (./data), the second beside it (./data-2) on the same ports.
  const home = await mkdtemp(join(tmpdir(), 'tr-ports-home-'));
  const services: ServiceProcess[] = [];
  try {
    const [apiPort, rpcPort] = [await freePair(), await freePair()];
    const fixed = { PORT: String(apiPort), LOCAL_RPC_PORT: String(rpcPort) };
    services.push(await startServiceProcess({ DATA_DIR: './data', ...fixed }, { cwd: home }));
    const first = services[0]!;

    const clash = await runServiceProcess({ DATA_DIR: './data-2', ...fixed }, { cwd: home });
    assert.equal(clash.code, 1);
    const example = /`PORT=(\d+) LOCAL_RPC_PORT=(\d+) npm start`/.exec(clash.stderr);
    assert.ok(example, clash.stderr);
    const [newApi, newRpc] = [Number(example[1]), Number(example[2])];
    assert.equal(
      clash.stderr,
      `Cannot start: ports ${apiPort}, ${rpcPort} and ${rpcPort + 1} on 127.0.0.1 are already in use by another Transfer Router (pid ${first.pid}, DATA_DIR ${join(home, 'data')}), so the HTTP API, the local chain's JSON-RPC endpoint and the local chain's WebSocket endpoint (LOCAL_RPC_PORT + 1) cannot listen there. Stop it, or choose other ports with PORT and LOCAL_RPC_PORT (e.g. \`PORT=${newApi} LOCAL_RPC_PORT=${newRpc} npm start\`; 0 picks a free one).\n`,
    );
    const suggested = [newApi, newRpc, newRpc + 1];
    assert.equal(new Set(suggested).size, 3, 'the suggestions overlap');
    for (const port of suggested) {
      assert.ok(![apiPort, rpcPort, rpcPort + 1].includes(port), `port ${port} is the first service's`);
      assert.ok(await isFree(port), `port ${port} is in use`);
    }
    assert.deepEqual(await readdir(join(home, 'data-2')), [], 'nothing opened or created');

    // Following the hint leads to a start, not to a second clash.
    services.push(
      await startServiceProcess(
        { DATA_DIR: './data-2', PORT: String(newApi), LOCAL_RPC_PORT: String(newRpc) },
        { cwd: home },
      ),
    );
    assert.equal((await fetch(`${services[1]!.url}/healthz`)).status, 200);
  } finally {
    for (const service of services) assert.equal(await service.stop(), 0);
    await rm(home, { recursive: true, force: true });
  }
});
