import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { test } from 'node:test';
import { loadConfig } from './config.ts';
import { generateKeypair } from './platform/keypair.ts';
import { chainPortError, checkPortsFree, PortUnavailableError, servicePorts } from './port-check.ts';

/** Listens on a free loopback port until closed. */
async function occupy(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

const close = (server: Server) => new Promise((resolve) => server.close(resolve));

function portsOf(env: Record<string, string>) {
  return servicePorts(loadConfig({ HOST: '127.0.0.1', ...env }));
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
      checkPortsFree([ports.http]),
      (error: unknown) =>
        error instanceof PortUnavailableError &&
        error.message ===
          `Cannot start: port ${taken.port} on 127.0.0.1 is already in use, so the HTTP API cannot listen there. Stop the program that uses it, or choose another port with PORT (e.g. \`PORT=${taken.port + 1} npm start\`; 0 picks a free one).`,
    );
    const chain = portsOf({ LOCAL_RPC_PORT: String(taken.port - 1) }).chain;
    await assert.rejects(
      checkPortsFree(chain),
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
    checkPortsFree([ports.http, ...ports.chain]),
    new RegExp(`PORT and LOCAL_RPC_PORT \\+ 1 both name port ${free.port}`),
  );
});

test('free ports pass and are let go at once', async () => {
  const free = await occupy();
  await close(free.server);
  const ports = portsOf({ PORT: String(free.port), LOCAL_RPC_PORT: '0' });
  await checkPortsFree([ports.http, ...ports.chain]);
  const again = createServer();
  await new Promise<void>((resolve, reject) => {
    again.once('error', reject);
    again.listen(free.port, '127.0.0.1', resolve);
  });
  await close(again);
});

test("the local chain's own listen failure names the port in its message, or passes through", () => {
  const chain = portsOf({ LOCAL_RPC_PORT: '18899' }).chain;
  const inUse = (address: string) =>
    Object.assign(new Error(`listen EADDRINUSE: address already in use ${address}`), { code: 'EADDRINUSE' });
  assert.match(
    String((chainPortError(inUse('127.0.0.1:18900'), chain) as Error).message),
    /port 18900 .*WebSocket endpoint \(LOCAL_RPC_PORT \+ 1\)/,
  );
  assert.match(
    String((chainPortError(inUse('127.0.0.1:18899'), chain) as Error).message),
    /port 18899 .*JSON-RPC endpoint cannot/,
  );
  const other = new Error('ledger corrupt');
  assert.equal(chainPortError(other, chain), other);
});
