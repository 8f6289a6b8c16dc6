import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  getSolanaErrorFromJsonRpcError,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  SolanaError,
} from '@solana/kit';
import { isWeather } from './send.ts';

const http = (statusCode: number) =>
  new SolanaError(SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR, {
    headers: new Headers(),
    message: '',
    statusCode,
  });
const jsonRpc = (code: number, data?: unknown) =>
  getSolanaErrorFromJsonRpcError({ code, message: `error ${code}`, data });

test('weather: a node throttling, failing, behind or slow, or a connection that failed; no verdict on the call', () => {
  for (const status of [408, 429, 500, 502, 503, 504])
    assert.equal(isWeather(http(status)), true, `HTTP ${status}`);
  for (const code of [-32603, -32004, -32005, -32014, -32016]) {
    assert.equal(isWeather(jsonRpc(code)), true, `JSON-RPC ${code}`);
  }
  assert.equal(isWeather(new DOMException('attempt timed out', 'TimeoutError')), true);
  assert.equal(isWeather(new TypeError('fetch failed')), true);
});

test('not weather: what the same call would answer again (a bad request, a refusal in preflight, an abort)', () => {
  for (const status of [400, 401, 403, 404]) assert.equal(isWeather(http(status)), false, `HTTP ${status}`);
  assert.equal(isWeather(jsonRpc(-32602)), false, 'invalid params');
  assert.equal(
    isWeather(jsonRpc(-32002, { err: { InstructionError: [0, { Custom: 1 }] }, logs: [] })),
    false,
  );
  assert.equal(isWeather(new DOMException('the caller stopped', 'AbortError')), false);
});
