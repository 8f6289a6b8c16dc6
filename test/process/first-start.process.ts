import assert from 'node:assert/strict';
import { access, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeRouterConfig } from '../../src/chain/router/accounts.ts';
import { findConfigPda } from '../../src/chain/router/pda.ts';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import { ensureLocalPlatformKeys, platformKeysPath } from '../../src/platform/local-keys.ts';
import type { PlatformKeys } from '../../src/platform/platform.ts';
import { serviceFilePath } from '../../src/service-file.ts';
import { createSecretBox, parseEncryptionKey } from '../../src/store/secret-box.ts';
import { runAdminCli, startServiceProcess } from '../helpers/process.ts';
import { leakedSecrets } from '../platform/secrets.ts';

/** The platform keys a local service sealed in its data directory, opened with its encryption key. */
async function sealedPlatformKeys(dataDir: string): Promise<PlatformKeys> {
  const key = parseEncryptionKey(await readFile(join(dataDir, 'encryption-key'), 'utf8'));
  assert.ok(key);
  const { keys, created } = await ensureLocalPlatformKeys(dataDir, createSecretBox(key));
  assert.equal(created, false, 'the service created them');
  return keys;
}

/** The embedded chain's JSON-RPC endpoint, from the line saying where the service listens. */
function localRpcUrl(logs: string[]): string {
  const line = logs.find((entry) => entry.includes('Transfer Router listening'));
  return (JSON.parse(line!) as { chain: string }).chain;
}

/** The start's progress lines (JSON logs of the `startup` component), as step and message. */
function progress(logs: string[]) {
  return logs
    .filter((line) => line.startsWith('{') && line.includes('"component":"startup"'))
    .map((line) => JSON.parse(line) as { step: string; msg: string });
}

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
      // Every step of the silent seconds is said, before the key, and the key comes once.
      const steps = progress(first.logs);
      assert.deepEqual(
        [...new Set(steps.map((line) => line.step))],
        ['database', 'migrations', 'platform-keys', 'chain', 'platform', 'http'],
      );
      assert.match(
        steps[0]!.msg,
        /^Starting: creating the database \(embedded PGlite in .*; the first time takes several seconds\)$/,
      );
      assert.ok(steps.some((line) => /deploying the router program/.test(line.msg)));
      assert.ok(
        first.logs.findIndex((line) => line.includes('"step":"http"')) <
          first.logs.findIndex((line) => line.includes(key)),
      );
      assert.equal(printed.split(key).length - 1, 2, 'the key and the curl using it, once');
      assert.ok(
        printed.includes(`curl -s -X POST ${first.url}/api/v1/transfers/estimate -H 'x-api-key: ${key}'`),
      );
      assert.ok(printed.includes(`Or sign in with it to the console: ${first.url}/dashboard`));
      // The console, on the embedded database: the key opens a session, the session shows the list.
      const signedIn = await fetch(`${first.url}/dashboard/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { origin: first.url, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ apiKey: key }),
      });
      assert.equal(signedIn.status, 303);
      const cookie = signedIn.headers.get('set-cookie')?.split(';')[0] ?? '';
      const list = await fetch(`${first.url}/dashboard/transfers`, { headers: { cookie } });
      assert.equal(list.status, 200);
      assert.match(await list.text(), /<span class="integration" title="Integration">local<\/span>/);

      const token = await stat(join(dataDir, 'admin-token'));
      assert.equal(token.mode & 0o777, 0o600);

      // The platform: keys generated and sealed (0600), never logged; the config initialised on
      // the embedded chain with them, each step said.
      const keys = await sealedPlatformKeys(dataDir);
      assert.equal((await stat(platformKeysPath(dataDir))).mode & 0o777, 0o600);
      assert.deepEqual(leakedSecrets(await readFile(platformKeysPath(dataDir), 'utf8'), keys), []);
      assert.deepEqual(leakedSecrets(first.logs.join('\n'), keys), [], 'no private key in the logs');
      const platformSteps = steps.filter((line) => line.step === 'platform').map((line) => line.msg);
      assert.ok(
        platformSteps.some((msg) =>
          msg.startsWith(`Funded the platform fee wallet ${keys.feeWallet.address} with 10 SOL`),
        ),
      );
      assert.ok(platformSteps.some((msg) => msg.startsWith('Initialised the protocol config')));
      const chain = createRpcChain({ rpcUrl: localRpcUrl(first.logs) });
      const [configAddress] = await findConfigPda();
      const config = await chain.getAccount(configAddress);
      assert.ok(config, 'the protocol config exists');
      const { bump: _, ...values } = decodeRouterConfig(config.data);
      assert.deepEqual(values, {
        admin: keys.admin.address,
        screeningAuthority: keys.screeningAuthority.address,
        platformWallet: keys.feeWallet.address,
        screeningDepositLamports: 2_000_000n,
      });
      const platform = await runAdminCli(['platform', 'status'], { DATA_DIR: dataDir });
      assert.equal(platform.code, 0, platform.stderr);
      const shown = JSON.parse(platform.stdout) as {
        ready: boolean;
        wallets: Record<string, { address: string }>;
      };
      assert.equal(shown.ready, true);
      assert.equal(shown.wallets.admin?.address, keys.admin.address);
      assert.deepEqual(leakedSecrets(platform.stdout, keys), [], 'no private key in the answer');

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

      // The CLI finds the generated token in the data directory, and the service too.
      const listed = await runAdminCli(['integrations', 'list', '--url', first.url], { DATA_DIR: dataDir });
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(
        (JSON.parse(listed.stdout) as { items: { name: string }[] }).items.map((item) => item.name),
        ['local'],
      );
      const found = await runAdminCli(['integrations', 'list'], { DATA_DIR: dataDir });
      assert.equal(found.code, 0, found.stderr);
      assert.equal(found.stdout, listed.stdout);
    } finally {
      assert.equal(await first.stop(), 0);
    }
    await assert.rejects(access(serviceFilePath(dataDir)), { code: 'ENOENT' }, 'removed at stop');

    // A restart keeps everything and prints no new key; the platform keys and config are reused.
    const second = await startServiceProcess({ DATA_DIR: dataDir });
    try {
      const keys = await sealedPlatformKeys(dataDir);
      const platformSteps = progress(second.logs)
        .filter((line) => line.step.startsWith('platform'))
        .map((line) => line.msg);
      assert.ok(platformSteps.some((msg) => msg.includes(`is in place and matches the platform keys`)));
      assert.ok(!platformSteps.some((msg) => /^(Initialised|Funded)/.test(msg)), 'nothing re-initialised');
      const platform = await runAdminCli(['platform', 'status'], { DATA_DIR: dataDir });
      assert.equal(
        (JSON.parse(platform.stdout) as { config: { onChain: { admin: string } } }).config.onChain.admin,
        keys.admin.address,
      );
      assert.ok(!second.logs.join('\n').includes('First start'));
      assert.ok(!second.logs.some((line) => /mh_test_/.test(line)));
      assert.match(progress(second.logs)[0]!.msg, /^Starting: opening the database \(embedded PGlite in /);
      const usage = await fetch(`${second.url}/api/v1/usage`, { headers: { 'x-api-key': key } });
      assert.equal(usage.status, 200);
    } finally {
      await second.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('the admin CLI says which service it tried, and why there, when nothing answers', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'tr-cli-'));
  try {
    const token = { DATA_DIR: dataDir, ADMIN_TOKEN: 'cli-admin-token-0123456789abcdef' };
    // A port nothing listens on: one just let go.
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const viaPort = await runAdminCli(['integrations', 'list'], { ...token, PORT: String(closed) });
    assert.equal(viaPort.code, 1);
    assert.equal(
      viaPort.stderr,
      `error: cannot reach the service at http://127.0.0.1:${closed} (PORT): ECONNREFUSED.\nIs it running (npm start)? Otherwise pass --url or set TRANSFER_ROUTER_URL.\n`,
    );
    const viaFlag = await runAdminCli(
      ['integrations', 'list', '--url', `http://127.0.0.1:${closed}/`],
      token,
    );
    assert.match(
      viaFlag.stderr,
      new RegExp(`^error: cannot reach the service at http://127\\.0\\.0\\.1:${closed} \\(--url\\)`),
    );
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
