import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from './config.ts';
import { generateKeypair } from './platform/keypair.ts';
import { chainPortError, checkPortsFree, PortUnavailableError, servicePorts } from './port-check.ts';
import { writeServiceFile } from './service-file.ts';

/** Listens on a free loopback port until closed. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

const close = (server: Server) => new Promise((resolve) => server.close(resolve));

function portsOf(env: Record<string, string>) {
  return servicePorts(
    loadConfig({ HOST: '127.0.0.1', DATA_DIR: join(tmpdir(), 'tr-port-check-none'), ...env }),
  );
}

/** Whether a port can be listened on now, on loopback. */
async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) await close(server);
  return listening;
}

/** Listens on `count` consecutive free loopback ports until closed. */
async function occupyRun(count: number): Promise<{ port: number; servers: Server[] }> {
  for (;;) {
    const first = await occupy();
    const servers = [first.server];
    for (let next = 1; next < count; next++) {
      const server = createServer();
      const ok = await new Promise<boolean>((resolve) => {
        server.once('error', () => resolve(false));
        server.listen(first.port + next, '127.0.0.1', () => resolve(true));
      });
      if (!ok) break;
      servers.push(server);
    }
    if (servers.length === count) return { port: first.port, servers };
    await Promise.all(servers.map(close));
  }
}

test("the service's ports: the API's, the local chain's JSON-RPC and WebSocket ones, each with its variable", () => {
  const ports = portsOf({ PORT: '8080', LOCAL_RPC_PORT: '8899' });
  assert.deepEqual(
    [ports.http, ...ports.chain].map((claim) => [claim.port, claim.derived ?? claim.variable]),
    [
      [8080, 'PORT'],
      [8899, 'LOCAL_RPC_PORT'],
      [8900, 'LOCAL_RPC_PORT + 1'],
    ],
  );
  const keypair = () => JSON.stringify(generateKeypair().toKeygenArray());
  const remote = {
    RPC_URL: 'http://rpc.example',
    CLUSTER: 'devnet',
    PLATFORM_ADMIN_KEYPAIR: keypair(),
    SCREENING_AUTHORITY_KEYPAIR: keypair(),
    PLATFORM_FEE_KEYPAIR: keypair(),
  };
  assert.deepEqual(portsOf(remote).chain, []);
  assert.deepEqual(
    [ports.metrics.port, ports.metrics.variable],
    [9464, 'METRICS_PORT'],
    'the metrics endpoint of workers without the API',
  );
  assert.deepEqual(
    portsOf({ LOCAL_RPC_PORT: '0' }).chain.map((claim) => claim.port),
    [0],
    'a port the system picks has no neighbour to check',
  );
});

test('a taken port is refused with the port, what needed it and the variable that moves it', async () => {
  const taken = await occupy();
  try {
    const ports = portsOf({ PORT: String(taken.port) });
    await assert.rejects(
      checkPortsFree([ports.http], ports.context),
      (error: unknown) =>
        error instanceof PortUnavailableError &&
        error.message ===
          `Cannot start: port ${taken.port} on 127.0.0.1 is already in use, so the HTTP API cannot listen there. Stop the program that uses it, or choose another port with PORT (e.g. \`PORT=${taken.port + 1} npm start\`; 0 picks a free one).`,
    );
    const { chain, context } = portsOf({ LOCAL_RPC_PORT: String(taken.port - 1) });
    await assert.rejects(
      checkPortsFree(chain, context),
      /port \d+ on 127\.0\.0\.1 is already in use, so the local chain's WebSocket endpoint \(LOCAL_RPC_PORT \+ 1\) cannot listen there.*LOCAL_RPC_PORT=/,
    );
  } finally {
    await close(taken.server);
  }
});

test('two settings naming one port are refused by name', async () => {
  const free = await occupy();
  await close(free.server);
  const ports = portsOf({ PORT: String(free.port), LOCAL_RPC_PORT: String(free.port - 1) });
  await assert.rejects(
    checkPortsFree([ports.http, ...ports.chain], ports.context),
    new RegExp(`PORT and LOCAL_RPC_PORT \\+ 1 both name port ${free.port}`),
  );
});

test('free ports pass and are let go at once', async () => {
  const free = await occupy();
  await close(free.server);
  const ports = portsOf({ PORT: String(free.port), LOCAL_RPC_PORT: '0' });
  await checkPortsFree([ports.http, ...ports.chain], ports.context);
  const again = createServer();
  await new Promise<void>((resolve, reject) => {
    again.once('error', reject);
    again.listen(free.port, '127.0.0.1', resolve);
  });
  await close(again);
});

test("the local chain's own listen failure names the port in its message, or passes through", async () => {
  const { chain, context } = portsOf({ LOCAL_RPC_PORT: '18899' });
  const inUse = (address: string) =>
    Object.assign(new Error(`listen EADDRINUSE: address already in use ${address}`), { code: 'EADDRINUSE' });
  assert.match(
    String(((await chainPortError(inUse('127.0.0.1:18900'), chain, context)) as Error).message),
    /port 18900 .*WebSocket endpoint \(LOCAL_RPC_PORT \+ 1\)/,
  );
  assert.match(
    String(((await chainPortError(inUse('127.0.0.1:18899'), chain, context)) as Error).message),
    /port 18899 .*JSON-RPC endpoint cannot/,
  );
  const other = new Error('ledger corrupt');
  assert.equal(await chainPortError(other, chain, context), other);
});

test('every taken port at once, with values free for all of them: none in use, none on the WebSocket port', async () => {
  // PORT's next port is taken too, and LOCAL_RPC_PORT's next two (a chain's JSON-RPC and WebSocket
  // ports): neither may be suggested, nor a value whose WebSocket port is taken.
  const api = await occupyRun(2);
  const chain = await occupyRun(3);
  try {
    const ports = portsOf({ PORT: String(api.port), LOCAL_RPC_PORT: String(chain.port) });
    const error = await checkPortsFree([ports.http, ...ports.chain], ports.context).then(
      () => assert.fail('the taken ports passed'),
      (failure: Error) => failure,
    );
    assert.ok(error instanceof PortUnavailableError);
    const example = /e\.g\. `PORT=(\d+) LOCAL_RPC_PORT=(\d+) npm start`/.exec(error.message);
    assert.ok(example, error.message);
    const [httpPort, rpcPort] = [Number(example[1]), Number(example[2])];
    assert.ok(httpPort > api.port + 1, `PORT=${httpPort} is taken`);
    assert.ok(rpcPort > chain.port + 2, `LOCAL_RPC_PORT=${rpcPort} or its WebSocket port is taken`);
    for (const port of [httpPort, rpcPort, rpcPort + 1]) assert.ok(await isFree(port), `${port} is free`);
    assert.equal(new Set([httpPort, rpcPort, rpcPort + 1]).size, 3, 'the suggestions do not overlap');
    assert.equal(
      error.message.replace(/e\.g\. `[^`]*`/, 'e.g. …'),
      `Cannot start: ports ${api.port}, ${chain.port} and ${chain.port + 1} on 127.0.0.1 are already in use, so the HTTP API, the local chain's JSON-RPC endpoint and the local chain's WebSocket endpoint (LOCAL_RPC_PORT + 1) cannot listen there. Stop the programs that use them, or choose other ports with PORT and LOCAL_RPC_PORT (e.g. …; 0 picks a free one).`,
    );
  } finally {
    await Promise.all([...api.servers, ...chain.servers].map(close));
  }
});

test('a port held by a running Transfer Router is named as such, with its pid and data directory', async () => {
  const taken = await occupyRun(3);
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-port-owner-'));
  // The recorded service must be running: a process of its own stands for it.
  const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  try {
    await writeServiceFile(dataDir, {
      url: `http://127.0.0.1:${taken.port}`,
      pid: other.pid!,
      rpcUrl: `http://127.0.0.1:${taken.port + 1}`,
      chainProfile: { name: 'instant', seed: 'local-chain' },
    });
    const same = servicePorts(
      loadConfig({ HOST: '127.0.0.1', DATA_DIR: dataDir, PORT: String(taken.port), LOCAL_RPC_PORT: '0' }),
    );
    await assert.rejects(checkPortsFree([same.http, ...same.chain], same.context), {
      message: new RegExp(
        `^Cannot start: port ${taken.port} on 127\\.0\\.0\\.1 is already in use by another Transfer Router \\(pid ${other.pid}, on this DATA_DIR\\), so the HTTP API cannot listen there\\. Stop it, or choose another port with PORT \\(e\\.g\\. \`PORT=\\d+ npm start\`; 0 picks a free one\\)\\.$`,
      ),
    });
    // Its chain's WebSocket port (its RPC port's next) is its too; seen from another data directory.
    const beside = servicePorts(
      loadConfig({
        HOST: '127.0.0.1',
        DATA_DIR: join(dataDir, 'beside'),
        PORT: '0',
        LOCAL_RPC_PORT: String(taken.port + 1),
      }),
    );
    const context = { ...beside.context, dirs: [...beside.context.dirs, dataDir] };
    await assert.rejects(checkPortsFree(beside.chain, context), {
      message: new RegExp(
        `^Cannot start: ports ${taken.port + 1} and ${taken.port + 2} on 127\\.0\\.0\\.1 are already in use by another Transfer Router \\(pid ${other.pid}, DATA_DIR ${dataDir}\\), .* Stop it, or choose another port with LOCAL_RPC_PORT `,
      ),
    });
  } finally {
    other.kill();
    await Promise.all(taken.servers.map(close));
    await rm(dataDir, { recursive: true, force: true });
  }
});
