// The RPC chain's resilience against a scripted endpoint: what it retries, what it does not, and
// the error codes it reports.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { type Address, getBase58Decoder } from '@solana/kit';
import { type ChainErrorCode, isChainError } from '../../src/chain/errors.ts';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import { dependencyDeadline } from '../../src/use-cases/deadline.ts';

type Reply = (req: IncomingMessage, res: ServerResponse, body: { id: unknown; method: string }) => void;

let server: Server;
let url: string;
let script: Reply[] = [];
let seen: string[] = [];

before(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => {
      text += c;
    });
    req.on('end', () => {
      const body = JSON.parse(text);
      seen.push(body.method);
      const reply = script.shift();
      if (reply) reply(req, res, body);
      // No script left: never answer (a hung node).
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.closeAllConnections();
  server.close();
});

function http(status: number, headers: Record<string, string> = {}): Reply {
  return (_req, res) => {
    res.writeHead(status, headers);
    res.end('');
  };
}
function result(value: unknown): Reply {
  return (_req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', result: value, id: body.id }));
  };
}
function rpcError(code: number, message: string, data?: unknown): Reply {
  return (_req, res, body) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message, data }, id: body.id }));
  };
}

function chainFor(overrides: Partial<Parameters<typeof createRpcChain>[0]> = {}) {
  return createRpcChain({ rpcUrl: url, retryDelayMs: 1, maxAttempts: 3, timeoutMs: 2000, ...overrides });
}

function expectCode(code: ChainErrorCode, retryable: boolean) {
  return (error: unknown) => {
    assert.ok(isChainError(error), String(error));
    assert.equal(error.code, code, error.message);
    assert.equal(error.retryable, retryable);
    return true;
  };
}

function reset(replies: Reply[]) {
  script = replies;
  seen = [];
}

test('transient failures (503, 429 with Retry-After, node behind) are retried, then succeed', async () => {
  reset([http(503), http(429, { 'retry-after': '0' }), rpcError(-32005, 'Node is unhealthy'), result(42)]);
  assert.equal(await chainFor({ maxAttempts: 4 }).getSlot(), 42n);
  assert.deepEqual(seen, ['getSlot', 'getSlot', 'getSlot', 'getSlot']);
});

test('retries stop after maxAttempts with the last transient error', async () => {
  reset([http(502), http(502), http(502), result(1)]);
  await assert.rejects(chainFor().getBlockHeight(), expectCode('CHAIN_UNAVAILABLE', true));
  assert.equal(seen.length, 3);
  script = [];
});

test('final errors are not retried', async () => {
  reset([http(400)]);
  await assert.rejects(chainFor().getSlot(), expectCode('CHAIN_RPC_ERROR', false));
  assert.equal(seen.length, 1);
  reset([rpcError(-32602, 'Invalid param: WrongSize')]);
  await assert.rejects(chainFor().getBalance('abc' as Address), expectCode('CHAIN_INVALID_ARGUMENT', false));
  assert.equal(seen.length, 1);
  reset([(_req, res) => res.end('<html>not json</html>')]);
  await assert.rejects(chainFor().getSlot(), expectCode('CHAIN_BAD_RESPONSE', false));
  assert.equal(seen.length, 1);
});

test('a node that does not answer times out each attempt', async () => {
  reset([]);
  await assert.rejects(
    // Long enough for a request to reach the server on a loaded machine; nothing ever answers.
    chainFor({ timeoutMs: 300, maxAttempts: 2 }).getSlot(),
    expectCode('CHAIN_TIMEOUT', true),
  );
  assert.deepEqual(seen, ['getSlot', 'getSlot']);
});

test('with the defaults, an attempt that hangs is retried within the deadline a request gives its dependencies', async () => {
  const hang: Reply = () => {};
  reset([hang, result(42)]);
  // Answered before the request's deadline fired (it would abort the call).
  assert.equal(await createRpcChain({ rpcUrl: url }).getSlot({ signal: dependencyDeadline() }), 42n);
  assert.deepEqual(seen, ['getSlot', 'getSlot']);
});

test('an attempt not answered in time is sent again beside it, and the first answer wins', async () => {
  const hang: Reply = () => {};
  reset([hang, result(42)]);
  // One attempt only: without the hedge, the hung request would time out the call.
  assert.equal(await chainFor({ timeoutMs: 5000, hedgeAfterMs: 50, maxAttempts: 1 }).getSlot(), 42n);
  assert.deepEqual(seen, ['getSlot', 'getSlot']);
});

test("the caller's abort ends the call at once, without retries", async () => {
  reset([]);
  const controller = new AbortController();
  const pending = chainFor({ timeoutMs: 5000 }).getSlot({ signal: controller.signal });
  // Aborted while the node holds the request.
  while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  controller.abort();
  await assert.rejects(pending, expectCode('CHAIN_ABORTED', false));
  assert.equal(seen.length, 1);
});

test('an unreachable endpoint is unavailable (retryable)', async () => {
  const closed = createRpcChain({ rpcUrl: 'http://127.0.0.1:9', retryDelayMs: 1, maxAttempts: 2 });
  await assert.rejects(closed.getSlot(), expectCode('CHAIN_UNAVAILABLE', true));
});

test('sending bytes that already landed returns their signature', async () => {
  reset([
    rpcError(-32002, 'Transaction simulation failed: This transaction has already been processed', {
      err: 'AlreadyProcessed',
      logs: [],
    }),
  ]);
  const wire = new Uint8Array(1 + 64 + 10);
  wire[0] = 1;
  wire.fill(7, 1, 65);
  const signature = await chainFor().sendTransaction(wire);
  assert.equal(signature, getBase58Decoder().decode(wire.subarray(1, 65)));
  assert.equal(seen.length, 1);
});

test('recent prioritization fees keep every slot and fee exact, u64 values included', async () => {
  const fees =
    '[{"slot":348125000,"prioritizationFee":0},{"slot":348125001,"prioritizationFee":12500},' +
    '{"slot":348125002,"prioritizationFee":18446744073709551615}]';
  reset([
    (_req, res, body) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"jsonrpc":"2.0","result":${fees},"id":${JSON.stringify(body.id)}}`);
    },
  ]);
  assert.deepEqual(
    await chainFor().getRecentPrioritizationFees(['Vote111111111111111111111111111111111111111' as Address]),
    [
      { slot: 348_125_000n, prioritizationFee: 0n },
      { slot: 348_125_001n, prioritizationFee: 12_500n },
      { slot: 348_125_002n, prioritizationFee: 18_446_744_073_709_551_615n },
    ],
  );
  assert.deepEqual(seen, ['getRecentPrioritizationFees']);
});
