import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { pino } from 'pino';
import { type Caller, createTestApp, type TestApp } from '../helpers/app.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Refusals below the routes, seen as a client sees them on the wire: what Node's HTTP parser and
 * timers refuse, what the router refuses, and the requests Node answers by itself. Each must be
 * the error envelope with a request id equal to its `X-Request-Id` header.
 */
describe('protocol-level refusals on a real socket', () => {
  const timeouts = { requestMs: 1_000, headersMs: 500, keepAliveMs: 1_000 };
  let t: TestApp;
  let caller: Caller;
  let port: number;
  let hanging: Receiver;
  const logged: { level: number; msg: string; code?: string }[] = [];
  before(async () => {
    t = await createTestApp({
      // The webhook ping outlasts the request timeout, to show that only arriving is timed.
      config: { timeouts, webhookPingTimeoutMs: 1_500 },
      logger: pino({ level: 'info' }, { write: (line: string) => logged.push(JSON.parse(line)) }),
    });
    caller = await t.newCaller();
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
    hanging = await startReceiver('hang');
  });
  after(async () => {
    await hanging.close();
    await t.close();
  });

  /** Writes bytes on one connection and reads what comes back until the server closes it. */
  async function exchange(raw: string | Buffer): Promise<RawAnswer> {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.write(raw);
    await once(socket, 'close');
    const text = Buffer.concat(chunks).toString('utf8');
    const split = text.indexOf('\r\n\r\n');
    const [statusLine = '', ...fields] = text.slice(0, split).split('\r\n');
    const headers: Record<string, string> = {};
    for (const field of fields) {
      const colon = field.indexOf(':');
      headers[field.slice(0, colon).toLowerCase()] = field.slice(colon + 1).trim();
    }
    return { status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) };
  }

  /** The connection's one answer: the envelope with this status and code, with its request id. */
  function assertEnvelope(answer: RawAnswer, status: number, code = 'MH_016'): string {
    assert.equal(answer.status, status, answer.body);
    // Exactly one answer came: its body is all that followed the head.
    assert.equal(Buffer.byteLength(answer.body), Number(answer.headers['content-length']));
    assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
    const body = JSON.parse(answer.body) as { error: Record<string, unknown> };
    assert.deepEqual(Object.keys(body), ['error']);
    assert.equal(body.error.code, code);
    assert.match(answer.headers['x-request-id'] ?? '', /^[A-Za-z0-9._-]{8,64}$/);
    assert.equal(body.error.requestId, answer.headers['x-request-id']);
    return String(body.error.message);
  }

  const head = (requestLine: string, headers: string[] = []) =>
    [
      requestLine,
      'Host: localhost',
      `x-api-key: ${caller.key}`,
      ...headers,
      'Connection: close',
      '',
      '',
    ].join('\r\n');

  test('a path that is not valid percent-encoding, or a path parameter too long for the router', async () => {
    const malformed = await exchange(head('GET /api/v1/transfers/by-external/%E0%A4%A HTTP/1.1'));
    assert.match(assertEnvelope(malformed, 400), /not valid percent-encoded UTF-8/);
    const long = await exchange(head(`GET /api/v1/transfers/by-external/${'x'.repeat(300)} HTTP/1.1`));
    assertEnvelope(long, 414);
  });

  test('malformed HTTP: a request line, a chunked body, headers too large', async () => {
    assert.match(assertEnvelope(await exchange('HELLO\r\n\r\n'), 400), /not valid HTTP\/1\.1/);
    assert.match(
      assertEnvelope(await exchange('GET api/v1/transfers HTTP/1.1\r\n\r\n'), 400),
      /not valid HTTP/,
    );
    const chunked = await exchange(
      `${head('POST /api/v1/webhooks HTTP/1.1', ['Content-Type: application/json', 'Transfer-Encoding: chunked']).replace('Connection: close\r\n', '')}zz\r\n`,
    );
    assertEnvelope(chunked, 400);
    const huge = await exchange(head('GET /api/v1/transfers HTTP/1.1', [`X-Padding: ${'p'.repeat(20_000)}`]));
    assert.match(assertEnvelope(huge, 431), /larger than 16384 bytes/);
  });

  test('an HTTP/1.1 request without Host, which Node would refuse with a bare 400', async () => {
    const answer = await exchange('GET /api/v1/transfers HTTP/1.1\r\nConnection: close\r\n\r\n');
    assert.match(assertEnvelope(answer, 400), /must carry a Host header/);
    assert.equal(JSON.parse(answer.body).error.param, 'Host');
    // The health endpoints too: the 4XX their OpenAPI operations document.
    for (const path of ['/healthz', '/readyz']) {
      const health = await exchange(`GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`);
      assert.match(assertEnvelope(health, 400), /must carry a Host header/);
    }
    // HTTP/1.0 has no Host requirement: the request goes on (to authentication).
    assertEnvelope(await exchange('GET /api/v1/transfers HTTP/1.0\r\n\r\n'), 401, 'MH_001');
  });

  test('a body that never finishes arriving is answered 408 and the connection closed', async () => {
    const started = Date.now();
    const answer = await exchange(
      `${head('POST /api/v1/webhooks HTTP/1.1', ['Content-Type: application/json', 'Idempotency-Key: slow-body-0001', 'Content-Length: 40']).replace('Connection: close\r\n', '')}{"url":`,
    );
    const message = assertEnvelope(answer, 408);
    assert.match(message, /within 1 s/);
    assert.ok(Date.now() - started >= timeouts.requestMs, 'answered once the request timeout had passed');
    // Nothing of the cut-off request ran or was claimed.
    const claims = await t.database.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', [
      'slow-body-0001',
    ]);
    assert.equal(claims.rows.length, 0);
  });

  test('a request that has arrived is not cut off by the request timeout while it runs', async () => {
    const body = JSON.stringify({ url: hanging.url });
    const answer = await exchange(
      `${head('POST /api/v1/webhooks HTTP/1.1', ['Content-Type: application/json', 'Idempotency-Key: slow-handler-01', `Content-Length: ${body.length}`])}${body}`,
    );
    // The ping gave up after 1.5 s, longer than the 1 s request timeout: the route's own answer.
    assert.match(assertEnvelope(answer, 400, 'MH_050'), /unreachable/);
  });

  test('a client that goes away in the middle of its body is not logged as a failure', async () => {
    const socket = connect(port, '127.0.0.1');
    const arrived = once(t.app.server, 'request') as Promise<[IncomingMessage]>;
    socket.write(
      `${head('POST /api/v1/webhooks HTTP/1.1', ['Content-Type: application/json', 'Content-Length: 40']).replace('Connection: close\r\n', '')}{"url":`,
    );
    const [request] = await arrived;
    // Once the app reads the body, the client leaves.
    await once(request, 'resume');
    const from = logged.length;
    const closed = new Promise((resolve) => request.on('close', resolve));
    socket.destroy();
    await closed;
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.deepEqual(
      logged.slice(from).filter((line) => line.level >= 50 || line.msg === 'connection refused'),
      [],
      'neither a service failure nor a refusal nobody reads',
    );
  });

  test('headers that never finish arriving, or a connection that sends nothing, are answered 408', async () => {
    assert.match(
      assertEnvelope(await exchange('GET /api/v1/transfers HTTP/1.1\r\nHost: x\r\n'), 408),
      /within 0.5 s/,
    );
    assertEnvelope(await exchange(''), 408);
  });

  test('a kept-alive connection is closed once idle for the keep-alive timeout', async () => {
    const answer = await exchange(
      ['GET /api/v1/transfers HTTP/1.1', 'Host: localhost', `x-api-key: ${caller.key}`, '', ''].join('\r\n'),
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['keep-alive'], 'timeout=1');
    // One answer, then the server closed the idle connection.
    assert.equal(Buffer.byteLength(answer.body), Number(answer.headers['content-length']));
  });

  test('an unsupported Expect and a CONNECT, which Node answers itself, get the envelope', async () => {
    const expect = await exchange(
      head('GET /api/v1/transfers HTTP/1.1', ['Expect: teapot', 'X-Request-Id: trace.expect-01']),
    );
    assert.match(assertEnvelope(expect, 417), /Unsupported Expect header "teapot"/);
    assert.equal(expect.headers['x-request-id'], 'trace.expect-01');
    const tunnel = await exchange('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.match(assertEnvelope(tunnel, 404), /No route CONNECT example.com:443/);
  });

  test('a JSON body that is not UTF-8 is refused, not read with replacement characters', async () => {
    const body = Buffer.from('{"url":"http://127.0.0.1:9/caf\xe9"}', 'latin1');
    const request = Buffer.concat([
      Buffer.from(
        head('POST /api/v1/webhooks HTTP/1.1', [
          'Content-Type: application/json',
          'Idempotency-Key: latin1-body-01',
          `Content-Length: ${body.length}`,
        ]),
      ),
      body,
    ]);
    assert.match(assertEnvelope(await exchange(request), 400), /not valid UTF-8/);
  });
});
