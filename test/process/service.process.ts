import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runAdminCli, type ServiceProcess, startServiceProcess } from '../helpers/process.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const ADMIN_TOKEN = 'process-admin-token-0123456789abcdef';
/** Processes sharing a database share its encryption key. */
const ENCRYPTION_KEY = 'a1'.repeat(32);

describe('two service processes on one PostgreSQL', () => {
  let database: TestDatabase;
  let first: ServiceProcess;
  let second: ServiceProcess;
  let receiver: Receiver;
  let key: string;
  before(async () => {
    database = await createTestDatabase();
    // Both start (and migrate) at the same time against the same database.
    [first, second] = await Promise.all([
      startServiceProcess({ DATABASE_URL: database.url, ADMIN_TOKEN, ENCRYPTION_KEY }),
      startServiceProcess({ DATABASE_URL: database.url, ADMIN_TOKEN, ENCRYPTION_KEY }),
    ]);
    receiver = await startReceiver();
  });
  after(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
    await receiver?.close();
    await database?.drop();
  });

  test('each serves /healthz and the OpenAPI document', async () => {
    assert.deepEqual(await (await fetch(`${first.url}/healthz`)).json(), { status: 'ok' });
    const document = (await (await fetch(`${second.url}/api/v1/openapi.json`)).json()) as { openapi: string };
    assert.equal(document.openapi, '3.1.0');
    assert.ok(first.logs.some((line) => line.includes('store: PostgreSQL at 127.0.0.1:5432')));
  });

  test('a key created with the admin CLI authenticates on both', async () => {
    const created = await runAdminCli([
      'integrations',
      'create',
      '--name',
      'cli-made',
      '--settings',
      '{"defaultHops":4}',
      '--url',
      first.url,
      '--token',
      ADMIN_TOKEN,
    ]);
    assert.equal(created.code, 0, created.stderr);
    const integration = JSON.parse(created.stdout);
    assert.equal(integration.settings.defaultHops, 4);
    const issued = await runAdminCli(
      ['keys', 'create', String(integration.id), '--mode', 'test', '--url', first.url],
      { ADMIN_TOKEN },
    );
    assert.equal(issued.code, 0, issued.stderr);
    key = JSON.parse(issued.stdout).key;
    assert.match(key, /^mh_test_/);
    for (const service of [first, second]) {
      const response = await fetch(`${service.url}/api/v1/usage`, { headers: { 'x-api-key': key } });
      assert.equal(response.status, 200);
    }
    const refused = await runAdminCli([
      'integrations',
      'list',
      '--url',
      first.url,
      '--token',
      'wrong-token-wrong-token-wrong',
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /MH_001/);
    const usage = await runAdminCli(['keys', 'create'], { ADMIN_TOKEN });
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /missing <integrationId>/);
  });

  test('20 concurrent requests with one Idempotency-Key, split across both processes, execute once', async () => {
    receiver.respondWith({ status: 200, delayMs: 300 });
    const pings = receiver.received.length;
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        fetch(`${(index % 2 ? first : second).url}/api/v1/webhooks`, {
          method: 'POST',
          headers: {
            'x-api-key': key,
            'idempotency-key': 'two-process-0001',
            'content-type': 'application/json',
          },
          body: JSON.stringify({ url: receiver.url }),
        }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    assert.ok(
      statuses.every((status) => status === 200 || status === 409),
      String(statuses),
    );
    assert.equal(receiver.received.length, pings + 1, 'one ping: executed once');
    const { rows } = await database.db.query('SELECT count(*)::int AS n FROM webhook_endpoints');
    assert.deepEqual(rows, [{ n: 1 }]);
  });

  test("the delivery worker of the service delivers a new transfer's event to the endpoint", async () => {
    receiver.respondWith({ status: 200 });
    const before = receiver.received.length;
    const created = await fetch(`${first.url}/api/v1/transfers`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'idempotency-key': 'process-transfer-0001',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        tokenMint: 'So11111111111111111111111111111111111111112',
        amountRaw: '2000000000',
        amountTokens: '2',
        sourceOwner: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM',
        recipientWallet: 'GsbwXfJraMomNxBcjYLcG3mxkBUiyWXAB32fGbSMQRdW',
      }),
    });
    assert.equal(created.status, 200);
    const transfer = (await created.json()) as { id: number };
    const deadline = Date.now() + 10_000;
    while (
      !receiver.received
        .slice(before)
        .some((request) => request.headers['mh-event-type'] === 'transfer.quote_created')
    ) {
      if (Date.now() > deadline) {
        const rows = await database.db.query(
          'SELECT status, attempts, last_error, last_status_code FROM webhook_deliveries',
        );
        throw new Error(
          `no event delivered within 10 s: ${JSON.stringify(rows.rows)}\n${first.logs.slice(-5).join('\n')}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const delivered = receiver.received
      .slice(before)
      .find((request) => request.headers['mh-event-type'] === 'transfer.quote_created')!;
    const event = JSON.parse(delivered.body);
    assert.equal(event.data.transfer.id, transfer.id);
    assert.equal(event.sequence, 1);
    assert.match(String(delivered.headers['mh-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
  });

  test('a process with another encryption key refuses to start', async () => {
    await assert.rejects(
      startServiceProcess({ DATABASE_URL: database.url, ADMIN_TOKEN, ENCRYPTION_KEY: 'b2'.repeat(32) }),
      /ENCRYPTION_KEY does not match the key this database was set up with/,
    );
  });

  test('SIGTERM lets an in-flight request finish, then the process exits cleanly', async () => {
    receiver.respondWith({ status: 200, delayMs: 700 });
    const inFlight = fetch(`${second.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'idempotency-key': 'graceful-0001', 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    // The request is in flight once its reachability ping has reached the (slow) receiver.
    const pings = receiver.received.length;
    while (receiver.received.length === pings) await new Promise((resolve) => setImmediate(resolve));
    const exit = second.stop('SIGTERM');
    const response = await inFlight;
    assert.equal(response.status, 200);
    assert.equal(
      response.headers.get('connection'),
      'close',
      'the client is told not to reuse the connection',
    );
    assert.equal(await exit, 0);
    assert.ok(second.logs.some((line) => line.includes('"msg":"stopped"')));
    await assert.rejects(fetch(`${second.url}/healthz`));
  });
});
