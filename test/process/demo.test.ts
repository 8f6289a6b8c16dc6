import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Address, createSolanaRpc } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createTransferRouterClient } from '../../clients/typescript/src/index.ts';
import { adminTokenPath } from '../../src/bootstrap.ts';
import { readServiceFile } from '../../src/service-file.ts';
import { type ServiceProcess, startServiceProcess } from '../helpers/process.ts';

// A newcomer's first minutes: `npm start` on a fresh data directory, then `npm run demo` beside
// it (piped, as a script or CI runs it). The demo moves the local chain's clock to each hop's due
// time (--time-travel) instead of waiting the minute the shortest arrival takes. A completed
// transfer's rent is reclaimed; with --fail the route fails before its last hop and is rescued.

const ROOT = join(import.meta.dirname, '..', '..');
const SOL_MINT = 'So11111111111111111111111111111111111111112' as Address;

let dataDir: string;
let service: ServiceProcess;
let rpc: ReturnType<typeof createSolanaRpc>;
let adminToken: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tr-demo-'));
  service = await startServiceProcess({ DATA_DIR: dataDir }, { via: 'npm' });
  const recorded = await readServiceFile(dataDir);
  assert.ok(recorded?.rpcUrl, 'the service records its chain in service.json');
  assert.deepEqual(recorded.chainProfile, { name: 'instant', seed: 'local-chain' }, 'and its profile');
  rpc = createSolanaRpc(recorded.rpcUrl);
  adminToken = (await readFile(adminTokenPath(dataDir), 'utf8')).trim();
});
after(async () => {
  // SIGTERM to npm stops the service with it (test/process/npm-start.test.ts).
  await service.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs `npm run demo` with the data directory of the service and resolves with what it printed. */
function runDemo(args: string[], env: Record<string, string> = {}) {
  const child = spawn('npm', ['run', '--silent', 'demo', '--', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), DATA_DIR: dataDir, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The value the demo printed for `label` (the first word after it). */
function printed(stdout: string, label: string): string {
  const match = new RegExp(`^ {2}${label} +(\\S+)`, 'm').exec(stdout);
  assert.ok(match, `the demo prints its ${label}:\n${stdout}`);
  return match[1]!;
}

/**
 * The hops the demo showed landed, with their lateness by the chain's clock (whole seconds, never
 * before the due time) and by the wall's, and its summary of them.
 */
function landings(stdout: string, hops: number) {
  const lines = [
    ...stdout.matchAll(
      /^ {2}hop (\d+) landed +\S+\.\.\. late (\d+) s by the chain's clock, (-?\d+\.\d\d) s by the wall's$/gm,
    ),
  ];
  assert.deepEqual(
    lines.map((line) => Number(line[1])),
    Array.from({ length: hops }, (_, i) => i + 1),
    `one line per landed hop, in order:\n${stdout}`,
  );
  assert.match(
    stdout,
    new RegExp(
      `^ {2}lateness +p50 \\d+ s / -?\\d+\\.\\d\\d s, max \\d+ s / -?\\d+\\.\\d\\d s \\(chain's clock / wall's, ${hops} hops\\)$`,
      'm',
    ),
  );
  return lines.map((line) => ({ chainSeconds: Number(line[2]), wallSeconds: Number(line[3]) }));
}

const lamportsOf = async (address: Address) => (await rpc.getBalance(address).send()).value;
async function tokensOf(owner: Address, mint: Address): Promise<bigint> {
  const [account] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return BigInt((await rpc.getTokenAccountBalance(account).send()).value.amount);
}
/** The protocol config, which holds the platform's earnings: the flat fees, and the percentage fees in its token accounts. */
async function platformConfig(): Promise<Address> {
  const response = await fetch(`${service.url}/admin/v1/platform`, {
    headers: { authorization: `Bearer ${adminToken}` },
  });
  const status = (await response.json()) as { config: { address: Address } };
  return status.config.address;
}

for (const native of [false, true]) {
  test(`\`npm run demo${native ? ' -- --sol' : ''}\` beside \`npm start\`: the transfer completes and every balance is exact`, async () => {
    const earnings = await platformConfig();
    const flatFeesBefore = await lamportsOf(earnings);
    const demo = await runDemo(['--time-travel', ...(native ? ['--sol'] : [])]);
    assert.equal(demo.code, 0, `${demo.stderr}\n${demo.stdout}`);
    assert.ok(
      !demo.stdout.includes('\r') && !demo.stdout.includes('\x1b'),
      'piped, the demo writes no control codes',
    );
    assert.match(demo.stdout, /^5\. Transfer \d+: completed \(phase settled\)$/m);
    assert.match(demo.stdout, /hop 3 of 3 done/);
    assert.match(demo.stdout, /^ {2}chain +http:\/\/\S+ \(embedded, instant profile\)$/m);
    // Moved to each due time, the chain shows a hop late by about as long as the keeper took to see it due.
    for (const { chainSeconds, wallSeconds } of landings(demo.stdout, 3)) {
      assert.ok(
        chainSeconds <= 10 && wallSeconds > 0 && wallSeconds < 10,
        `${chainSeconds} s, ${wallSeconds} s`,
      );
    }

    const key = printed(demo.stdout, 'key');
    assert.match(key, /^mh_test_[A-Za-z0-9]{32}$/, 'the key the demo created is printed');
    const source = printed(demo.stdout, 'source') as Address;
    const mint = printed(demo.stdout, 'token') as Address;
    const recipient = printed(demo.stdout, 'recipient') as Address;
    const id = Number(printed(demo.stdout, 'transfer'));
    assert.equal(mint === SOL_MINT, native);

    const transfer = await createTransferRouterClient({ baseUrl: service.url, apiKey: key }).getTransfer(id);
    assert.equal(transfer.status, 'completed');
    assert.equal(transfer.phase, 'reclaimed', 'the demo reclaims the rent after completion');
    assert.equal(transfer.recovery?.canReclaimRent, false);
    assert.match(demo.stdout, /^ {2}transfer +completed \(phase reclaimed\)$/m);
    assert.deepEqual(transfer.progress, { hopsCompleted: 3, hopsTotal: 3 });
    assert.equal(transfer.sourceOwner, source);
    assert.equal(transfer.recipientWallet, recipient);
    const amountRaw = BigInt(transfer.amountRaw);
    assert.equal(amountRaw, native ? 500_000_000n : 25_000_000n, 'the default amount');
    const feeRaw = (amountRaw * BigInt(transfer.percentFeeBps!) + 9_999n) / 10_000n;

    if (native) {
      assert.equal(await lamportsOf(recipient), amountRaw - feeRaw);
    } else {
      assert.equal(await tokensOf(recipient, mint), amountRaw - feeRaw);
      assert.equal(await tokensOf(source, mint), 40n * amountRaw - amountRaw, 'minted 40 times the amount');
    }
    assert.equal(await tokensOf(earnings, mint), feeRaw);
    assert.equal((await lamportsOf(earnings)) - flatFeesBefore, BigInt(transfer.totalFlatFeeLamports!));
    assert.match(demo.stdout, new RegExp(`^ {2}platform earnings \\(SOL\\) +${earnings} `, 'm'));
  });
}

test('`npm run demo -- --fail`: the recipient closes its token account before the last hop; the route fails and the source gets everything back', async () => {
  const earnings = await platformConfig();
  const flatFeesBefore = await lamportsOf(earnings);
  const demo = await runDemo(['--time-travel', '--fail']);
  assert.equal(demo.code, 0, `${demo.stderr}\n${demo.stdout}`);
  assert.match(demo.stdout, /^5\. Transfer \d+: failed \(phase failed\)$/m);
  assert.match(demo.stdout, /hop 2 of 3 done/);
  assert.doesNotMatch(demo.stdout, /hop 3 of 3 done/);
  landings(demo.stdout, 2);
  assert.match(demo.stdout, /^ {2}transfer +refunded \(phase rescued\)$/m);

  const key = printed(demo.stdout, 'key');
  const source = printed(demo.stdout, 'source') as Address;
  const mint = printed(demo.stdout, 'token') as Address;
  const recipient = printed(demo.stdout, 'recipient') as Address;
  const id = Number(printed(demo.stdout, 'transfer'));
  const transfer = await createTransferRouterClient({ baseUrl: service.url, apiKey: key }).getTransfer(id);
  assert.equal(transfer.status, 'refunded');
  assert.equal(transfer.phase, 'rescued');
  assert.equal(transfer.lastError?.code, 'MH_031');
  assert.deepEqual(transfer.progress, { hopsCompleted: 2, hopsTotal: 3 });
  const amountRaw = BigInt(transfer.amountRaw);
  assert.equal(await tokensOf(source, mint), 40n * amountRaw, 'every token back with the source');
  const [recipientTokens] = await findAssociatedTokenPda({
    owner: recipient,
    mint,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  assert.equal((await rpc.getAccountInfo(recipientTokens).send()).value, null, 'closed by the recipient');
  assert.equal(await lamportsOf(earnings), flatFeesBefore, 'no flat fee kept: the rescue returns it');
  assert.equal(await tokensOf(earnings, mint), 0n, 'no percentage fee taken');
});

test('`npm run demo -- --fail --sol` is refused with the reason', async () => {
  const demo = await runDemo(['--fail', '--sol']);
  assert.equal(demo.code, 2);
  assert.match(demo.stderr, /--fail needs a token route/);
});

test('`npm run demo -- --profile mainnet` beside the instant chain says how to start the mainnet-like one', async () => {
  const [byFlag, byEnvironment, unknown] = await Promise.all([
    runDemo(['--profile', 'mainnet']),
    runDemo([], { LOCAL_CHAIN_PROFILE: 'mainnet', LOCAL_CHAIN_SEED: 'rehearsal' }),
    runDemo(['--profile', 'devnet']),
  ]);
  for (const [demo, restart] of [
    [byFlag, 'LOCAL_CHAIN_PROFILE=mainnet npm start'],
    [byEnvironment, 'LOCAL_CHAIN_PROFILE=mainnet LOCAL_CHAIN_SEED=rehearsal npm start'],
  ] as const) {
    assert.equal(demo.code, 1, demo.stderr);
    assert.equal(
      demo.stderr,
      `error: the running service's chain is on the instant profile, not the one asked for: restart it with \`${restart}\`\n`,
    );
    assert.equal(demo.stdout, '', 'nothing is created');
  }
  assert.equal(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /^error: --profile \(or LOCAL_CHAIN_PROFILE\): the chain profile is instant or mainnet, not devnet\n/,
  );
});
