import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { LIVE_KEY_ON_LOCAL_CHAIN } from '../../src/domain/api-keys.ts';
import { runAdminCli, startServiceProcess } from '../helpers/process.ts';

interface LogLine {
  level: number;
  msg: string;
  apiKeyId?: number;
  route?: string;
  integrationId?: number;
}

test('a live key on the local chain is warned about: by the admin CLI that creates it, and in the log at its first use', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-live-key-'));
  const service = await startServiceProcess({ DATA_DIR: dataDir });
  try {
    const logged = () =>
      service.logs.flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as LogLine] : []));
    const cli = (mode: string) => runAdminCli(['keys', 'create', '1', '--mode', mode], { DATA_DIR: dataDir });

    const live = await cli('live');
    assert.equal(live.code, 0, live.stderr);
    assert.equal(live.stderr, `warning: ${LIVE_KEY_ON_LOCAL_CHAIN}\n`);
    const created = JSON.parse(live.stdout) as { id: number; key: string; warning: string };
    assert.match(created.key, /^mh_live_/);
    assert.equal(created.warning, LIVE_KEY_ON_LOCAL_CHAIN);

    const testKey = await cli('test');
    assert.equal(testKey.code, 0, testKey.stderr);
    assert.equal(testKey.stderr, '', 'no word about a test key');
    const testCreated = JSON.parse(testKey.stdout) as { key: string };

    // The live key three times, the test key once: one warning, at the live key's first use.
    for (const key of [created.key, created.key, testCreated.key, created.key]) {
      const response = await fetch(`${service.url}/api/v1/usage`, { headers: { 'x-api-key': key } });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    // Each request's own line comes after anything it warned of.
    for (let waited = 0; logged().filter((line) => line.route === '/api/v1/usage').length < 4; waited++) {
      assert.ok(waited < 100, service.logs.join('\n'));
      await delay(50);
    }
    const lines = logged();
    const warnings = lines.filter((line) => line.msg === LIVE_KEY_ON_LOCAL_CHAIN);
    assert.deepEqual(
      warnings.map((line) => [line.level, line.apiKeyId]),
      [
        [40, created.id],
        [40, created.id],
      ],
      'one at creation, one at first use',
    );
    const firstUse = lines.findIndex((line) => line.route === '/api/v1/usage');
    assert.ok(lines.indexOf(warnings[0]!) < lines.indexOf(warnings[1]!));
    assert.ok(lines.indexOf(warnings[1]!) < firstUse, 'the second with the first use');
  } finally {
    assert.equal(await service.stop(), 0);
    await rm(dataDir, { recursive: true, force: true });
  }
});
