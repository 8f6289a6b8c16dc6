import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runAdminCli, startServiceProcess } from '../helpers/process.ts';

test("a newcomer's first `npm start`: embedded stores, a generated admin token, a printed test key that works", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-first-start-'));
  try {
    const first = await startServiceProcess({ DATA_DIR: dataDir });
    let key: string;
    try {
      const printed = first.logs.join('\n');
      key =
        /First start: created the integration "local"[\s\S]*?(mh_test_[0-9A-Za-z]{32})/.exec(printed)?.[1] ??
        '';
      assert.match(key, /^mh_test_/);
      assert.match(printed, /store: embedded PGlite/);
      assert.ok(
        printed.includes(`curl -s -X POST ${first.url}/api/v1/transfers/estimate -H 'x-api-key: ${key}'`),
      );

      const token = await stat(join(dataDir, 'admin-token'));
      assert.equal(token.mode & 0o777, 0o600);

      const estimate = await fetch(`${first.url}/api/v1/transfers/estimate`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({
          tokenMint: 'So11111111111111111111111111111111111111112',
          amountRaw: '1000000000',
        }),
      });
      assert.equal(estimate.status, 200);
      assert.equal(((await estimate.json()) as { tier: string }).tier, 'standard');

      // The CLI finds the generated token in the data directory.
      const listed = await runAdminCli(['integrations', 'list', '--url', first.url], { DATA_DIR: dataDir });
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(
        (JSON.parse(listed.stdout) as { items: { name: string }[] }).items.map((item) => item.name),
        ['local'],
      );
    } finally {
      assert.equal(await first.stop(), 0);
    }

    // A restart keeps everything and prints no new key.
    const second = await startServiceProcess({ DATA_DIR: dataDir });
    try {
      assert.ok(!second.logs.join('\n').includes('First start'));
      const usage = await fetch(`${second.url}/api/v1/usage`, { headers: { 'x-api-key': key } });
      assert.equal(usage.status, 200);
    } finally {
      await second.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
