import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type Address, createSolanaRpc, type Signature } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createTransferRouterClient } from '../../clients/typescript/src/index.ts';
import { adminTokenPath } from '../../src/bootstrap.ts';
import { tokensToRaw } from '../../src/domain/amounts.ts';
import { readServiceFile } from '../../src/service-file.ts';
import { type ServiceProcess, startServiceProcess } from '../helpers/process.ts';

// A newcomer's first minutes: `npm start` on a fresh data directory, then `npm run demo` beside
// it (piped, as a script or CI runs it). The demo moves the local chain's clock to each hop's due
// time (--time-travel; --fail does so by itself on the local chain) instead of waiting the minute
// the shortest arrival takes. A completed transfer's rent is reclaimed; with --fail the route
// fails before its last hop and is rescued. Every signature it prints is whole, on chain, with its
// explorer link; its account of the source's SOL adds up to the lamport, checked against the
// chain's own record of every transaction.

const ROOT = join(import.meta.dirname, '..', '..');
const SOL_MINT = 'So11111111111111111111111111111111111111112' as Address;

let dataDir: string;
let service: ServiceProcess;
let rpc: ReturnType<typeof createSolanaRpc>;
let rpcUrl: string;
let adminToken: string;
before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tr-demo-'));
  service = await startServiceProcess({ DATA_DIR: dataDir }, { via: 'npm' });
  const recorded = await readServiceFile(dataDir);
  assert.ok(recorded?.rpcUrl, 'the service records its chain in service.json');
  assert.deepEqual(recorded.chainProfile, { name: 'instant', seed: 'local-chain' }, 'and its profile');
  rpcUrl = recorded.rpcUrl;
  rpc = createSolanaRpc(rpcUrl);
  adminToken = (await readFile(adminTokenPath(dataDir), 'utf8')).trim();
});
after(async () => {
  // SIGTERM to npm stops the service with it (test/process/npm-start.process.ts).
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
 * The hops the demo showed landed, with their signatures and lateness by the chain's clock (whole
 * seconds, never before the due time) and by the wall's, and its summary of them.
 */
function landings(stdout: string, hops: number) {
  const lines = [
    ...stdout.matchAll(
      /^ {2}hop (\d+) landed +(\S+) late (\d+) s by the chain's clock, (-?\d+\.\d\d) s by the wall's$/gm,
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
  return lines.map((line) => ({
    signature: line[2]!,
    chainSeconds: Number(line[3]),
    wallSeconds: Number(line[4]),
  }));
}

/**
 * The transaction signatures the demo printed, by label: every one whole, found on chain and
 * landed without error, with its Solana Explorer link (a custom cluster at the local chain's RPC
 * URL) on the line below. Nothing is cut short.
 */
async function signaturesPrinted(stdout: string): Promise<Map<string, Signature>> {
  assert.doesNotMatch(stdout, /[1-9A-HJ-NP-Za-km-z]{8,}\.\.\./, 'no signature or address is cut short');
  const found = new Map<string, Signature>();
  for (const [, label, signature, link] of stdout.matchAll(
    /^ {2}(\S(?:.*?\S)?) +([1-9A-HJ-NP-Za-km-z]{86,88})(?: .*)?\n {23}(\S+)$/gm,
  )) {
    assert.equal(
      link,
      `https://explorer.solana.com/tx/${signature}?cluster=custom&customUrl=${encodeURIComponent(rpcUrl)}`,
    );
    found.set(label!, signature as Signature);
  }
  const long = [
    ...stdout.matchAll(/(?<![1-9A-HJ-NP-Za-km-z])[1-9A-HJ-NP-Za-km-z]{86,88}(?![1-9A-HJ-NP-Za-km-z])/g),
  ];
  // Each signature twice: on its line and in its link.
  assert.equal(long.length, 2 * found.size, `every signature printed has its link:\n${stdout}`);
  const { value: statuses } = await rpc
    .getSignatureStatuses([...found.values()], { searchTransactionHistory: true })
    .send();
  for (const [index, status] of statuses.entries()) {
    assert.ok(status && status.err === null, `${[...found.keys()][index]} landed`);
  }
  return found;
}

/** What a landed transaction did to `account`'s lamports, and the fee it cost its payer, as the chain records it. */
async function onChain(signature: Signature, account: Address) {
  const transaction = await rpc
    .getTransaction(signature, {
      commitment: 'confirmed',
      encoding: 'json',
      maxSupportedTransactionVersion: 0,
    })
    .send();
  assert.ok(transaction?.meta, `${signature} is on chain`);
  const index = transaction.transaction.message.accountKeys.indexOf(account);
  assert.ok(index >= 0, `${account} is in ${signature}`);
  return {
    change: transaction.meta.postBalances[index]! - transaction.meta.preBalances[index]!,
    fee: transaction.meta.fee,
  };
}

/** Lamports as the demo prints them: "-22,645,360 lamports". */
const lamportsIn = (text: string) => BigInt(text.replaceAll(',', ''));

/** The figures of the demo's account of the source's SOL, by label, and the estimate's. */
function solAccount(stdout: string) {
  const start = stdout.indexOf("\nThe source's SOL, to the lamport\n");
  assert.ok(start >= 0, `the demo accounts for the source's SOL:\n${stdout}`);
  const lines = new Map(
    [...stdout.slice(start).matchAll(/^ {2}(\S(?:.*?\S)?) +([+-]?[\d,]+) lamports: (.*)$/gm)].map(
      ([, label, lamports, text]) => [label!, { lamports: lamportsIn(lamports!), text: text! }],
    ),
  );
  const estimated = (label: string) => {
    const match = new RegExp(`^ {2}${label} +(?:at most )?([\\d,]+) lamports`, 'm').exec(stdout);
    assert.ok(match, `the demo prints the estimate's ${label}`);
    return lamportsIn(match[1]!);
  };
  const table = / {2}source \(SOL\) +\S+ +([\d.]+) SOL +([\d.]+) SOL +([+-][\d.]+) SOL$/m.exec(stdout);
  assert.ok(table, 'the balances show the source’s SOL');
  const sol = (text: string) => tokensToRaw(text, 9)!;
  return {
    lines,
    upFront: estimated('SOL up front'),
    refundable: estimated('back after reclaim'),
    netCost: estimated('net cost'),
    before: sol(table[1]!),
    after: sol(table[2]!),
    change: (table[3]!.startsWith('-') ? -1n : 1n) * sol(table[3]!.slice(1)),
  };
}

/**
 * Checks the demo's account of the source's SOL against the chain: the bundle's cost is the sum of
 * what its transactions took from the source, each fee the fee the chain charged, what came back
 * what the recovery's transactions returned, and the lines add up to the change of the source's
 * balance, which is the chain's. Answers the figures.
 */
async function assertSolAddsUp(
  stdout: string,
  source: Address,
  signatures: Map<string, Signature>,
  options: { recovery: 'reclaim' | 'rescue'; amount: bigint; closed?: Signature },
) {
  const account = solAccount(stdout);
  const line = (label: string) => {
    const found = account.lines.get(label);
    assert.ok(found, `the demo's account of the source's SOL has a line "${label}":\n${stdout}`);
    return found;
  };
  assert.equal(account.netCost, account.upFront - account.refundable, 'net cost = up front - back');

  const bundleSignatures = [...signatures].filter(([label]) =>
    /^(keeperFunding|routeInit|orchestratorInit|sessionInit) \d+\/\d+$/.test(label),
  );
  assert.ok(bundleSignatures.length >= 4, 'every group of the bundle is shown');
  let bundleCost = 0n;
  for (const [, signature] of bundleSignatures) bundleCost -= (await onChain(signature, source)).change;
  const bundle = line('the bundle');
  assert.equal(-bundle.lamports, bundleCost - options.amount, 'the bundle as the chain records it');
  // The estimate counts every account in full; the platform's fee account for a mint exists after
  // the mint's first route.
  const tokenRent = await rpc.getMinimumBalanceForRentExemption(165n).send();
  const feeAccountExisted = bundle.text.includes(
    "the platform's fee account for the mint, which existed already",
  );
  assert.equal(account.upFront - (feeAccountExisted ? tokenRent : 0n), -bundle.lamports, bundle.text);
  assert.doesNotMatch(bundle.text, /did not pay|more than it counted/);
  if (options.amount > 0n) assert.equal(line('the amount').lamports, -options.amount);

  let ownFees = 0n;
  if (options.closed) {
    const closed = await onChain(options.closed, source);
    assert.equal(closed.change, -closed.fee, 'the source paid only the closing transaction’s fee');
    assert.equal(line('closing fee').lamports, -closed.fee);
    ownFees = closed.fee;
  }

  const recoverySignatures = [...signatures].filter(([label]) =>
    new RegExp(`^${options.recovery} \\d+/\\d+$`).test(label),
  );
  assert.ok(recoverySignatures.length > 0, `the ${options.recovery} is shown`);
  let fees = 0n;
  let returned = 0n;
  for (const [, signature] of recoverySignatures) {
    const recovered = await onChain(signature, source);
    fees += recovered.fee;
    returned += recovered.change + recovered.fee;
  }
  const back = line(`${options.recovery} back`);
  assert.equal(back.lamports, returned, `what the ${options.recovery} returned, its fee aside`);
  assert.match(back.text, /^as announced/);
  assert.equal(line(`${options.recovery}'s fee`).lamports, -fees, 'its fee as the chain charged it');
  if (options.recovery === 'reclaim') {
    assert.equal(back.lamports, account.refundable, '"back after reclaim" is what came back');
  }

  assert.equal(
    account.lines.get('not the demo’s'),
    undefined,
    'nothing moved that the demo cannot account for',
  );
  const net = line('net').lamports;
  assert.equal(net, bundle.lamports - options.amount - ownFees + back.lamports - fees, 'the lines add up');
  assert.equal(net, account.change, 'the net is the balance change shown');
  assert.equal(account.after - account.before, account.change);
  assert.equal(account.after, await lamportsOf(source), 'and the balance shown is the chain’s');
  return account;
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
  test(`\`npm run demo${native ? ' -- --sol' : ''}\` beside \`npm start\`: the transfer completes, every balance is exact, every signature whole with its link, the source's SOL accounted for to the lamport`, async () => {
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
    assert.ok(
      demo.stdout.includes(
        `\n  explorer             links open Solana Explorer on a custom cluster at ${rpcUrl}\n`,
      ),
      demo.stdout,
    );
    // Moved to each due time, the chain shows a hop late by about as long as the keeper took to see it due.
    const landed = landings(demo.stdout, 3);
    for (const { chainSeconds, wallSeconds } of landed) {
      assert.ok(chainSeconds <= 10 && wallSeconds >= 0, `${chainSeconds} s, ${wallSeconds} s`);
    }
    const signatures = await signaturesPrinted(demo.stdout);

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
    assert.equal(printed(demo.stdout, 'support bundle'), transfer.supportBundleId);
    assert.deepEqual(
      landed.map((landing) => landing.signature),
      transfer.signatures.hops,
      'each hop shown with its signature',
    );
    assert.deepEqual(
      [1, 2, 3].map((hop) => signatures.get(`hop ${hop} landed`)),
      transfer.signatures.hops,
    );
    const amountRaw = BigInt(transfer.amountRaw);
    assert.equal(amountRaw, native ? 500_000_000n : 25_000_000n, 'the default amount');
    await assertSolAddsUp(demo.stdout, source, signatures, {
      recovery: 'reclaim',
      amount: native ? amountRaw : 0n,
    });
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

test('`npm run demo -- --fail`: the recipient closes its token account before the last hop, which the router program refuses as the demo says and the transfer’s error shows; the route fails, the source gets everything back, its SOL accounted for to the lamport', async () => {
  const earnings = await platformConfig();
  const flatFeesBefore = await lamportsOf(earnings);
  // No --time-travel: on the local chain --fail moves the clock by itself.
  const demo = await runDemo(['--fail']);
  assert.equal(demo.code, 0, `${demo.stderr}\n${demo.stdout}`);
  assert.match(
    demo.stdout,
    /^ {2}- --fail on the local chain: the demo moves the chain's clock to each hop's due time; /m,
  );
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
  // The error the demo shows is the transfer's, and it names the cause the demo gave.
  assert.ok(
    demo.stdout.includes(`\n  last error           MH_031: ${transfer.lastError!.message}\n`),
    demo.stdout,
  );
  assert.match(
    transfer.lastError!.message,
    /^Hop 3 of 3 failed permanently \(WrongDestination: the step's destination is not the fixed next hop \(or recipient wallet\), or not an open token account of the recipient\)/,
  );
  assert.equal(printed(demo.stdout, 'support bundle'), transfer.supportBundleId);
  const signatures = await signaturesPrinted(demo.stdout);
  const closed = signatures.get('closed');
  assert.ok(closed, 'the closing transaction is shown');
  const amountRaw = BigInt(transfer.amountRaw);
  assert.equal(await tokensOf(source, mint), 40n * amountRaw, 'every token back with the source');
  const [recipientTokens] = await findAssociatedTokenPda({
    owner: recipient,
    mint,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  assert.equal((await rpc.getAccountInfo(recipientTokens).send()).value, null, 'closed by the recipient');
  assert.match(
    demo.stdout,
    new RegExp(
      `^ {2}- --fail: the recipient closed its token account ${recipientTokens}; the router program will refuse the last hop \\(WrongDestination: its destination is not an open token account of the recipient\\)$`,
      'm',
    ),
  );
  await assertSolAddsUp(demo.stdout, source, signatures, { recovery: 'rescue', amount: 0n, closed });
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
