import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import {
  appendTransactionMessageInstruction,
  type Blockhash,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { type FaultPlan, type FaultProxy, startFaultProxy } from '../src/index.ts';

/** A JSON-RPC endpoint that records every call and answers each method as a test says. */
async function startUpstream(answers: Record<string, (params: unknown[]) => unknown>) {
  const calls: { method: string; params: unknown[] }[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', () => {
      const { id, method, params } = JSON.parse(text);
      calls.push({ method, params });
      const answer = answers[method];
      const body = answer
        ? `{"jsonrpc":"2.0","result":${JSON.stringify(answer(params))},"id":${JSON.stringify(id)}}`
        : JSON.stringify({ jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id });
      response.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Upstream = Awaited<ReturnType<typeof startUpstream>>;

const post = async (url: string, method: string, params: unknown[] = [], id: unknown = 7) => {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
};

/** A signed transaction in base64, and its signature. */
async function signedTransaction() {
  const payer = await generateKeyPairSigner();
  const transaction = await pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: '11111111111111111111111111111111' as Blockhash, lastValidBlockHeight: 150n },
        m,
      ),
    (m) =>
      appendTransactionMessageInstruction(
        {
          programAddress: 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as never,
          data: new Uint8Array([104, 105]),
        },
        m,
      ),
    (m) => signTransactionMessageWithSigners(m),
  );
  return {
    base64: getBase64EncodedWireTransaction(transaction),
    signature: getSignatureFromTransaction(transaction),
  };
}

describe('the fault-injecting proxy', () => {
  const open: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const closable of open.reverse()) await closable.close();
  });
  async function setUp(
    answers: Record<string, (params: unknown[]) => unknown>,
    faults: Partial<FaultPlan>,
    now?: () => number,
  ): Promise<{ upstream: Upstream; proxy: FaultProxy }> {
    const upstream = await startUpstream(answers);
    open.push(upstream);
    const proxy = await startFaultProxy({ upstream: upstream.url, faults, ...(now ? { now } : {}) });
    open.push(proxy);
    return { upstream, proxy };
  }

  test('without faults it passes every call on and gives the answer as it came, every digit of a u64 kept', async () => {
    const account = { lamports: 1_000_000, rentEpoch: '18446744073709551615' };
    const { upstream, proxy } = await setUp(
      { getAccountInfo: () => ({ context: { slot: 3 }, value: account }) },
      { seed: 'plain' },
    );
    const raw = `{"jsonrpc":"2.0","result":{"context":{"slot":3},"value":{"lamports":1000000,"rentEpoch":"18446744073709551615"}},"id":"a"}`;
    const answered = await post(proxy.url, 'getAccountInfo', ['x', { encoding: 'base64' }], 'a');
    assert.deepEqual([answered.status, answered.text], [200, raw]);
    assert.deepEqual(upstream.calls, [{ method: 'getAccountInfo', params: ['x', { encoding: 'base64' }] }]);
    assert.equal(
      (await post(proxy.url, 'nope')).text,
      '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":7}',
    );
    assert.deepEqual(proxy.stats(), {
      requests: 2,
      passed: 2,
      rateLimited: 0,
      unavailable: 0,
      held: 0,
      droppedSends: 0,
      staleAnswers: 0,
      staleWindows: 0,
      processedShown: 0,
    });
  });

  test('rate limited: HTTP 429 with Retry-After and a JSON-RPC error; unavailable: HTTP 503; neither reaches the endpoint', async () => {
    const limited = await setUp({ getSlot: () => 1 }, { rateLimited: 1, retryAfterSeconds: 1 });
    const answered = await post(limited.proxy.url, 'getSlot');
    assert.equal(answered.status, 429);
    assert.equal(answered.headers.get('retry-after'), '1');
    assert.deepEqual(JSON.parse(answered.text), {
      jsonrpc: '2.0',
      error: { code: 429, message: 'Too many requests' },
      id: 7,
    });
    const down = await setUp({ getSlot: () => 1 }, { unavailable: 1 });
    assert.equal((await post(down.proxy.url, 'getSlot')).status, 503);
    assert.deepEqual([limited.upstream.calls, down.upstream.calls], [[], []]);
  });

  test('held: the request reaches the endpoint only after the hold, and is answered then', async () => {
    const { upstream, proxy } = await setUp({ getSlot: () => 5 }, { held: 1, holdMs: 300 });
    const answered = post(proxy.url, 'getSlot');
    await delay(100);
    assert.deepEqual(upstream.calls, [], 'not passed on while held');
    assert.equal((await answered).text, '{"jsonrpc":"2.0","result":5,"id":7}');
    assert.equal(proxy.stats().held, 1);
  });

  test('a dropped send: the endpoint simulates it (signatures verified) and answers its signature, and never receives it', async () => {
    const { upstream, proxy } = await setUp(
      {
        simulateTransaction: () => ({ context: { slot: 1 }, value: { err: null, logs: [] } }),
        sendTransaction: () => 'sent',
      },
      { dropSends: 1 },
    );
    const { base64, signature } = await signedTransaction();
    const answered = await post(proxy.url, 'sendTransaction', [base64, { encoding: 'base64' }]);
    assert.deepEqual(JSON.parse(answered.text), { jsonrpc: '2.0', result: signature, id: 7 });
    assert.deepEqual(upstream.calls, [
      { method: 'simulateTransaction', params: [base64, { encoding: 'base64', sigVerify: true }] },
    ]);
    assert.equal(proxy.stats().droppedSends, 1);
  });

  test('a send whose preflight fails is passed on, so the endpoint answers its error', async () => {
    const { upstream, proxy } = await setUp(
      {
        simulateTransaction: () => ({ context: { slot: 1 }, value: { err: 'BlockhashNotFound', logs: [] } }),
        sendTransaction: () => 'sent',
      },
      { dropSends: 1 },
    );
    const { base64 } = await signedTransaction();
    const answered = await post(proxy.url, 'sendTransaction', [base64, { encoding: 'base64' }]);
    assert.equal(JSON.parse(answered.text).result, 'sent');
    assert.deepEqual(
      upstream.calls.map((call) => call.method),
      ['simulateTransaction', 'sendTransaction'],
    );
    assert.equal(proxy.stats().droppedSends, 0);
  });

  test('a stale window answers reads with what the endpoint answered before it opened, under the new id, then ends', async () => {
    let slot = 0;
    let clock = 0;
    const { upstream, proxy } = await setUp(
      { getSlot: () => ++slot },
      { seed: 'stale', staleEveryMs: 5_000, staleForMs: 1_000, staleMaxAgeMs: 2_000 },
      () => clock,
    );
    // Reads every 100 ms of the proxy's clock: within a window the slot stands still.
    const seen: number[] = [];
    for (let id = 0; id < 300; id++) {
      clock += 100;
      const answered = JSON.parse((await post(proxy.url, 'getSlot', [], id)).text);
      assert.equal(answered.id, id);
      seen.push(answered.result);
    }
    const { staleAnswers, staleWindows } = proxy.stats();
    assert.ok(staleWindows >= 2, `windows: ${staleWindows}`);
    assert.equal(upstream.calls.length, 300 - staleAnswers);
    // A window repeats the last answer before it, for at most its length (10 reads), then moves on.
    const repeats = seen.filter((value, i) => i > 0 && value === seen[i - 1]).length;
    assert.equal(repeats, staleAnswers);
    assert.ok(
      staleAnswers > staleWindows && staleAnswers <= staleWindows * 10,
      `${staleAnswers} stale answers`,
    );
    assert.deepEqual(
      seen.filter((value, i) => i > 0 && value < seen[i - 1]!),
      [],
      'never older than what was answered before',
    );
  });

  test('processed first: a landed transaction shows processed, and getTransaction does not find it, until the period ends', async () => {
    let clock = 0;
    const landed = { slot: 9, confirmations: null, err: null, confirmationStatus: 'finalized' };
    const { proxy } = await setUp(
      {
        getSignatureStatuses: (params) => ({
          context: { slot: 10 },
          value: (params[0] as string[]).map((s) => (s === 'unknown' ? null : landed)),
        }),
        getTransaction: () => ({ slot: 9, meta: { err: null } }),
      },
      { processedFirst: 1, processedForMs: 1_000 },
      () => clock,
    );
    const statuses = async () =>
      JSON.parse((await post(proxy.url, 'getSignatureStatuses', [['sig', 'unknown']])).text).result.value;
    const transaction = async () =>
      JSON.parse((await post(proxy.url, 'getTransaction', ['sig'])).text).result;
    assert.deepEqual(await statuses(), [
      { ...landed, confirmationStatus: 'processed', confirmations: 0 },
      null,
    ]);
    clock += 999;
    assert.equal(await transaction(), null);
    clock += 1;
    assert.deepEqual(await statuses(), [landed, null]);
    assert.deepEqual(await transaction(), { slot: 9, meta: { err: null } });
    assert.equal(proxy.stats().processedShown, 2);
  });

  test('the same seed meets the same requests with the same faults; another seed with others', async () => {
    const outcomes = async (seed: string) => {
      const { proxy } = await setUp({ getSlot: () => 1 }, { seed, rateLimited: 0.3, unavailable: 0.2 });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) statuses.push((await post(proxy.url, 'getSlot')).status);
      return statuses;
    };
    const first = await outcomes('seed-a');
    assert.deepEqual(await outcomes('seed-a'), first);
    assert.notDeepEqual(await outcomes('seed-b'), first);
    assert.ok(first.includes(429) && first.includes(503) && first.includes(200));
  });

  test('the rpc-faults command: listens, reports its plan, injects its faults, and prints its counts when stopped', async () => {
    const upstream = await startUpstream({ getSlot: () => 1 });
    open.push(upstream);
    const child = spawn(
      process.execPath,
      [
        join(import.meta.dirname, '..', 'src', 'cli.ts'),
        '--upstream',
        upstream.url,
        '--port',
        '0',
        '--unavailable',
        '1',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const lines: string[] = [];
    const ready = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        lines.push(line);
        const match = /^rpc-faults ready url=(\S+) upstream=/.exec(line);
        if (match) resolve(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`rpc-faults exited with ${code}`)));
    });
    assert.equal((await post(ready, 'getSlot')).status, 503);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    assert.equal(JSON.parse(lines[1]!).plan.unavailable, 1);
    assert.deepEqual(JSON.parse(lines.at(-1)!).stats, {
      requests: 1,
      passed: 0,
      rateLimited: 0,
      unavailable: 1,
      held: 0,
      droppedSends: 0,
      staleAnswers: 0,
      staleWindows: 0,
      processedShown: 0,
    });
  });
});
