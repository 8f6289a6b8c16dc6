// What the delivery log keeps of a receiver's answer: the start of its body, whole characters
// only, however long or multi-byte the answer is; an answer longer than what is drained to reuse
// the connection does not stop the next POST.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createWebhookSender, RESPONSE_EXCERPT_CHARS } from '../../src/webhooks/sender.ts';

describe('webhook sender: response excerpts', () => {
  let server: Server;
  let url: string;
  let answer = '';
  const sender = createWebhookSender({ requireHttps: false, allowPrivateNetworks: true });
  before(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(400, { 'content-type': 'text/plain' }).end(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  });
  after(async () => {
    await sender.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = () => sender.post({ url, body: '{}', headers: {}, timeoutMs: 5_000 });

  test('a short answer is kept whole', async () => {
    answer = '{"error":"unknown signature"}';
    const result = await post();
    assert.equal(result.kind, 'response');
    assert.deepEqual(result.kind === 'response' && [result.status, result.body], [
      400,
      '{"error":"unknown signature"}',
    ]);
  });

  test('a long answer of two-byte characters is cut at 500 characters, none of them broken', async () => {
    answer = 'é'.repeat(3_000);
    const result = await post();
    assert.equal(result.kind === 'response' && result.body, 'é'.repeat(RESPONSE_EXCERPT_CHARS));
  });

  test('an answer larger than what is drained gives its start, and the next POST is answered', async () => {
    answer = `${'a'.repeat(RESPONSE_EXCERPT_CHARS)}${'b'.repeat(200 * 1024)}`;
    const large = await post();
    assert.equal(large.kind === 'response' && large.body, 'a'.repeat(RESPONSE_EXCERPT_CHARS));
    answer = 'ok';
    const next = await post();
    assert.equal(next.kind === 'response' && next.body, 'ok');
  });
});
