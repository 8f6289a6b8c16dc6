import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { databaseIdentity } from '../../src/store/deployment.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { type ServiceProcess, startServiceProcess } from '../helpers/process.ts';

const ADMIN_TOKEN = 'process-admin-token-0123456789abcdef';
const ENCRYPTION_KEY = 'b2'.repeat(32);
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const WARNING = /API processes use this database without REDIS_URL/;

describe('rate limits of several service processes on one PostgreSQL', () => {
  let database: TestDatabase;
  const started: ServiceProcess[] = [];
  const start = async (env: Record<string, string> = {}) => {
    const service = await startServiceProcess({
      DATABASE_URL: database.url,
      ADMIN_TOKEN,
      ENCRYPTION_KEY,
      ...env,
    });
    started.push(service);
    return service;
  };
  before(async () => {
    database = await createTestDatabase();
  });
  after(async () => {
    await Promise.all(started.map((service) => service.stop()));
    await database?.drop();
  });

  test('without Redis, a process that finds another API process on the database warns that each counts on its own', async () => {
    const first = await start();
    const second = await start();
    assert.ok(!first.logs.some((line) => WARNING.test(line)), 'the first process was alone');
    const warning = second.logs.find((line) => WARNING.test(line));
    assert.ok(warning, second.logs.join('\n'));
    assert.equal(JSON.parse(warning).level, 40);
    assert.equal(JSON.parse(warning).apiProcesses, 2);
  });

  test('with Redis, no warning, and the counters are named after the database', async () => {
    const withRedis = await start({ REDIS_URL });
    assert.ok(!withRedis.logs.some((line) => WARNING.test(line)), withRedis.logs.join('\n'));

    const admin = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const integration = (await (
      await fetch(`${withRedis.url}/admin/v1/integrations`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'limits' }),
      })
    ).json()) as { id: number };
    const key = (await (
      await fetch(`${withRedis.url}/admin/v1/integrations/${integration.id}/keys`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ mode: 'test' }),
      })
    ).json()) as { id: number; key: string };
    const response = await fetch(`${withRedis.url}/api/v1/usage`, { headers: { 'x-api-key': key.key } });
    assert.equal(response.status, 200);

    const redis = new Redis(REDIS_URL);
    try {
      const counter = `tr-rl:${await databaseIdentity(database.db)}:GET/api/v1/usage-${key.id}`;
      assert.equal(await redis.get(counter), '1');
    } finally {
      redis.disconnect();
    }
  });
});
