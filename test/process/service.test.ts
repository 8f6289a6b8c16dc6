import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { runAdminCli, type ServiceProcess, startServiceProcess } from '../helpers/process.ts';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';

const ADMIN_TOKEN = 'process-admin-token-0123456789abcdef';

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
      startServiceProcess({ DATABASE_URL: database.url, ADMIN_TOKEN }),
      startServiceProcess({ DATABASE_URL: database.url, ADMIN_TOKEN }),
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

  test('SIGTERM lets an in-flight request finish, then the process exits cleanly', async () => {
    receiver.respondWith({ status: 200, delayMs: 700 });
    const inFlight = fetch(`${second.url}/api/v1/webhooks`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'idempotency-key': 'graceful-0001', 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exit = second.stop('SIGTERM');
    const response = await inFlight;
    assert.equal(response.status, 200);
    assert.equal(await exit, 0);
    assert.ok(second.logs.some((line) => line.includes('"msg":"stopped"')));
    await assert.rejects(fetch(`${second.url}/healthz`));
  });
});
