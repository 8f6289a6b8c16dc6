import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import {
  type Address,
  airdropFactory,
  appendTransactionMessageInstructions,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  type Instruction,
  type KeyPairSigner,
  lamports,
  pipe,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getCreateAccountInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCloseAccountInstruction,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintSize,
  getMintToInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import {
  type BroadcastProgress,
  createTransferRouterClient,
  type RecoveryProgress,
  reclaimRent,
  rescue,
  signAndBroadcastBundle,
  type Transfer,
  TransferRouterError,
  waitForTransfer,
} from '../clients/typescript/src/index.ts';
import { adminTokenPath } from '../src/bootstrap.ts';
import { loadCliDefaults } from '../src/config.ts';
import { rawToTokens, tokensToRaw } from '../src/domain/amounts.ts';
import { readServiceFile, serviceFilePath } from '../src/service-file.ts';
import { createDisplay } from './demo-display.ts';

const USAGE = `Transfer Router demo: a transfer from a fresh wallet to a fresh recipient, hop by hop

Usage: npm run demo -- [options]

Against the service \`npm start\` runs (found through $DATA_DIR/service.json, like the admin CLI),
or any deployment on a test cluster with --url, --key and --rpc. It creates a test key when none
is given, funds a fresh wallet (airdrop), creates a token and mints it to the wallet (or sends
native SOL with --sol), estimates, creates the transfer, signs and broadcasts the bundle with the
TypeScript client (clients/typescript), follows the hops until the recipient is paid, and
reclaims the route's rent for the source. With --fail the recipient closes its token account before
the last hop, so the route cannot finish: the keeper marks it failed and the source rescues
everything the route holds.

Options:
  --hops <n>          hops, 3 to 10 (default 3)
  --arrival <s>       seconds until arrival (default the shortest allowed: max(60, 15 x hops))
  --amount <tokens>   amount to send (default 25 tokens, or 0.5 SOL with --sol)
  --sol               send native SOL instead of a token
  --fail              show a failed route rescued (a token route: its recipient closes its token
                      account before the last hop)
  --url <url>         the service (default $TRANSFER_ROUTER_URL, else the local service)
  --key <key>         an API key (default $TRANSFER_ROUTER_KEY, else a new test key)
  --admin-token <t>   to create that key and show the platform's earnings (the protocol config's
                      lamports and token account) (default $ADMIN_TOKEN, else $DATA_DIR/admin-token)
  --rpc <url>         the chain's JSON-RPC endpoint (default $SOLANA_RPC_URL, else the local service's)
  --time-travel       on the local chain only: move its clock to each hop's due time instead of
                      waiting for it (the tests use this)
  -h, --help`;

class UsageError extends Error {}

/** Command-line options, checked. */
function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      hops: { type: 'string', default: '3' },
      arrival: { type: 'string' },
      amount: { type: 'string' },
      sol: { type: 'boolean', default: false },
      fail: { type: 'boolean', default: false },
      url: { type: 'string' },
      key: { type: 'string' },
      'admin-token': { type: 'string' },
      rpc: { type: 'string' },
      'time-travel': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const hops = Number(values.hops);
  if (!Number.isInteger(hops) || hops < 3 || hops > 10) throw new UsageError('--hops must be 3 to 10');
  const arrival = values.arrival === undefined ? Math.max(60, 15 * hops) : Number(values.arrival);
  if (!Number.isInteger(arrival) || arrival < 1) throw new UsageError('--arrival must be whole seconds');
  if (values.fail && values.sol) {
    throw new UsageError(
      '--fail needs a token route: it fails the route by closing the recipient’s token account, and a native SOL route pays the recipient’s wallet itself',
    );
  }
  return { ...values, hops, arrival, amount: values.amount ?? (values.sol ? '0.5' : '25') };
}

/** Where the service and its chain are, and what said so. */
async function locate(opts: ReturnType<typeof options>) {
  const defaults = loadCliDefaults();
  const running = await readServiceFile(defaults.dataDir);
  const recorded = `recorded by the running service in ${serviceFilePath(defaults.dataDir)}`;
  const service = opts.url
    ? { url: opts.url, from: '--url' }
    : (defaults.url ??
      (running
        ? { url: running.url, from: recorded }
        : { url: defaults.defaultUrl, from: 'the default; no running service is recorded' }));
  const rpcUrl = opts.rpc ?? process.env.SOLANA_RPC_URL ?? running?.rpcUrl;
  if (!rpcUrl) {
    throw new UsageError(
      `no chain endpoint: pass --rpc or set SOLANA_RPC_URL (no running local service is recorded in ${serviceFilePath(defaults.dataDir)}; is \`npm start\` running?)`,
    );
  }
  const adminToken =
    opts['admin-token'] ??
    defaults.adminToken ??
    (await readFile(adminTokenPath(defaults.dataDir), 'utf8').then(
      (text) => text.trim(),
      () => undefined,
    ));
  return { service, rpcUrl, adminToken, dataDir: defaults.dataDir };
}

/** Calls the admin API (creating a key, reading the platform's wallets). */
async function admin<T>(url: string, token: string, method: 'GET' | 'POST', path: string, body?: unknown) {
  const response = await fetch(`${url.replace(/\/+$/, '')}/admin/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(method === 'POST' ? { 'idempotency-key': crypto.randomUUID() } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await response.json()) as T & { error?: { code: string; message: string } };
  if (!response.ok)
    throw new Error(`admin API ${method} ${path}: ${json.error?.code} ${json.error?.message}`);
  return json as T;
}

/** A new test key of the integration named `local` (the one the first start creates), or of a new `demo` one. */
async function createTestKey(url: string, adminToken: string) {
  const { items } = await admin<{ items: { id: number; name: string; status: string }[] }>(
    url,
    adminToken,
    'GET',
    '/integrations',
  );
  const integration =
    items.find((item) => item.name === 'local' && item.status === 'active') ??
    (await admin<{ id: number; name: string }>(url, adminToken, 'POST', '/integrations', { name: 'demo' }));
  const { key } = await admin<{ key: string }>(
    url,
    adminToken,
    'POST',
    `/integrations/${integration.id}/keys`,
    {
      mode: 'test',
    },
  );
  return { key, integration: integration.name };
}

const CLOCK_SYSVAR = 'SysvarC1ock11111111111111111111111111111111' as Address;

/** The chain's clock in unix seconds: the Clock sysvar's `unix_timestamp` (an i64 at byte 32). */
async function chainNow(rpc: ReturnType<typeof createSolanaRpc>): Promise<bigint> {
  const { value } = await rpc.getAccountInfo(CLOCK_SYSVAR, { encoding: 'base64' }).send();
  if (!value) throw new Error('the chain has no Clock sysvar');
  return Buffer.from(value.data[0], 'base64').readBigInt64LE(32);
}

/** Moves a local chain's clock (the `surfnet_timeTravel` cheat code). */
async function timeTravel(rpcUrl: string, unixSeconds: bigint) {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'surfnet_timeTravel',
      params: [{ absoluteTimestamp: Number(unixSeconds) * 1000 }],
    }),
  });
  const body = (await response.json()) as { error?: { message: string } };
  if (body.error) throw new Error(`--time-travel needs the local chain: ${body.error.message}`);
}

async function run(argv: string[]): Promise<number> {
  const opts = options(argv);
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const out = createDisplay(process.stdout);
  const where = await locate(opts);
  const rpc = createSolanaRpc(where.rpcUrl);
  const rpcSubscriptions = createSolanaRpcSubscriptions(where.rpcUrl.replace(/^http/, 'ws'));
  const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });

  out.heading('Transfer Router demo');
  out.field('service', `${where.service.url} (${where.service.from})`);
  out.field('chain', where.rpcUrl);
  let apiKey = opts.key ?? process.env.TRANSFER_ROUTER_KEY;
  if (!apiKey) {
    if (!where.adminToken) {
      throw new UsageError(
        `no API key: pass --key or set TRANSFER_ROUTER_KEY, or give the admin token (--admin-token, ADMIN_TOKEN, ${adminTokenPath(where.dataDir)}) to create one`,
      );
    }
    const created = await createTestKey(where.service.url, where.adminToken);
    apiKey = created.key;
    out.field('key', `${apiKey} (a new test key of integration "${created.integration}", shown once)`);
  } else out.field('key', `${apiKey.slice(0, 12)}... (given)`);
  const client = createTransferRouterClient({
    baseUrl: where.service.url,
    apiKey,
    onRetry: (notice) => out.note(`${notice.code}: retrying in ${Math.ceil(notice.delayMs / 1000)} s`),
  });

  /** Builds, signs and sends one transaction of the source's, waiting for its confirmation. */
  async function send(payer: KeyPairSigner, instructions: Instruction[]) {
    const { value: lifetime } = await rpc.getLatestBlockhash().send();
    const transaction = await pipe(
      createTransactionMessage({ version: 0 }),
      (message) => setTransactionMessageFeePayerSigner(payer, message),
      (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
      (message) => appendTransactionMessageInstructions(instructions, message),
      (message) => signTransactionMessageWithSigners(message),
    );
    await sendAndConfirm(transaction as Parameters<typeof sendAndConfirm>[0], { commitment: 'confirmed' });
  }

  // 1. A fresh wallet, funded on the chain, with a token of its own (or native SOL).
  out.heading('1. A fresh wallet');
  const source = await generateKeyPairSigner();
  // The demo holds the recipient's key only to break the route with --fail.
  const recipientWallet = await generateKeyPairSigner();
  const recipient = recipientWallet.address;
  const decimals = opts.sol ? 9 : 6;
  const amountRaw = tokensToRaw(opts.amount, decimals);
  if (amountRaw === null || amountRaw <= 0n) {
    throw new UsageError(`--amount must be a positive amount with at most ${decimals} decimals`);
  }
  const airdrop = 2_000_000_000n + (opts.sol ? amountRaw : 0n);
  await airdropFactory({ rpc, rpcSubscriptions })({
    recipientAddress: source.address,
    lamports: lamports(airdrop),
    commitment: 'confirmed',
  });
  out.field('source', `${source.address} (funded with ${rawToTokens(airdrop, 9)} SOL by airdrop)`);
  let mint: Address;
  let symbol: string;
  if (opts.sol) {
    mint = 'So11111111111111111111111111111111111111112' as Address;
    symbol = 'SOL';
    out.field('token', `${mint} (native SOL)`);
  } else {
    const mintSigner = await generateKeyPairSigner();
    mint = mintSigner.address;
    symbol = 'DEMO';
    const [sourceTokens] = await findAssociatedTokenPda({
      owner: source.address,
      mint,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const minted = amountRaw * 40n;
    await send(source, [
      getCreateAccountInstruction({
        payer: source,
        newAccount: mintSigner,
        lamports: await rpc.getMinimumBalanceForRentExemption(BigInt(getMintSize())).send(),
        space: getMintSize(),
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint, decimals, mintAuthority: source.address }),
      getCreateAssociatedTokenIdempotentInstruction({
        payer: source,
        ata: sourceTokens,
        owner: source.address,
        mint,
      }),
      getMintToInstruction({ mint, token: sourceTokens, mintAuthority: source, amount: minted }),
    ]);
    out.field(
      'token',
      `${mint} (created, ${decimals} decimals; ${rawToTokens(minted, decimals)} DEMO minted to the source)`,
    );
  }
  out.field('recipient', `${recipient} (a fresh wallet)`);
  const units = (raw: bigint) => `${rawToTokens(raw, decimals)} ${symbol}`;
  const sol = (raw: bigint) => `${rawToTokens(raw < 0n ? -raw : raw, 9)} SOL`;

  // 2. Estimate and create.
  out.heading(`2. Estimate: ${units(amountRaw)} over ${opts.hops} hops, arriving in ${opts.arrival} s`);
  // A fresh token has no market price: the demo says what it is worth.
  const terms = {
    tokenMint: mint,
    amountRaw: String(amountRaw),
    hops: opts.hops,
    ...(opts.sol ? {} : { tokenPriceUsd: 1 }),
  };
  const estimate = await client.estimateTransfer(terms);
  out.field(
    'fees',
    `${units(BigInt(estimate.tokens.feeRaw))} (${estimate.percentFeeBps / 100}%, tier ${estimate.tier}) + ${estimate.totalFlatFeeLamports} lamports flat`,
  );
  out.field('recipient gets', units(BigInt(estimate.tokens.netDeliveredRaw)));
  out.field(
    'SOL up front',
    `at most ${rawToTokens(BigInt(estimate.sol.requiredSolUpFrontLamports), 9)} SOL (${rawToTokens(BigInt(estimate.sol.refundableLamports), 9)} back after reclaim)`,
  );
  const created = await client.createTransfer({
    ...terms,
    amountTokens: rawToTokens(amountRaw, decimals),
    sourceOwner: source.address,
    recipientWallet: recipient,
    arrivalSeconds: opts.arrival,
  });
  out.field('transfer', `${created.id} (${created.status}, priced until ${created.expiresAt})`);

  // The platform's earnings: the router program settles its fees into the protocol config and the
  // config's token account of the mint.
  const config = where.adminToken
    ? (await admin<{ config: { address: Address } }>(where.service.url, where.adminToken, 'GET', '/platform'))
        .config.address
    : undefined;
  const [earningsTokens] = config
    ? await findAssociatedTokenPda({ owner: config, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS })
    : [undefined];
  const lamportsOf = async (address: Address) => (await rpc.getBalance(address).send()).value;
  const tokensOf = async (owner: Address) => {
    const [account] = await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const { value } = await rpc.getAccountInfo(account, { encoding: 'base64' }).send();
    if (!value) return 0n;
    return BigInt((await rpc.getTokenAccountBalance(account).send()).value.amount);
  };
  /** What the recipient holds of the transfer's asset. */
  const received = async () => (opts.sol ? lamportsOf(recipient) : tokensOf(recipient));
  const balances = async () => ({
    sourceSol: await lamportsOf(source.address),
    sourceTokens: opts.sol ? 0n : await tokensOf(source.address),
    recipient: await received(),
    earningsTokens: config ? await tokensOf(config) : 0n,
    earningsLamports: config ? await lamportsOf(config) : 0n,
  });
  const before = await balances();

  // 3. Prepare, sign, broadcast in order, both confirm calls: the client does it all.
  out.heading('3. Prepared, signed with the source wallet, broadcast in order');
  let scheduleStart: bigint | undefined;
  const onProgress = async (event: BroadcastProgress) => {
    switch (event.kind) {
      case 'prepared':
        // The schedule starts on the chain's clock when prepare built the route's creation.
        if (event.bundle.resume.existingHopCount === 0 && event.bundle.routeInitTxs.length > 0) {
          scheduleStart = await chainNow(rpc);
        }
        if (event.resumed) out.note('prepared again: a fresh bundle for what is not on chain yet');
        return;
      case 'confirmed':
        out.field(
          `${event.group} ${event.index + 1}/${event.count}`,
          `${event.signature.slice(0, 20)}... confirmed`,
        );
        return;
      case 'keeper_funding_reported':
        out.field('reported', `keeper funding (phase ${event.transfer.phase})`);
        return;
      case 'blockhash_expired':
        out.note(`the blockhash expired while sending ${event.group}`);
        return;
      case 'reported':
        out.field('reported', `every signature: ${event.transfer.status} (phase ${event.transfer.phase})`);
        return;
    }
  };
  await signAndBroadcastBundle(client, {
    transferId: created.id,
    signer: source,
    rpc,
    onProgress,
  });

  /** The recipient closes its empty token account, as any wallet may: the last hop cannot land. */
  async function closeRecipientTokenAccount() {
    const [account] = await findAssociatedTokenPda({
      owner: recipient,
      mint,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    // The source pays the network fee; the account's rent goes to the recipient.
    await send(source, [
      getCloseAccountInstruction({ account, destination: recipient, owner: recipientWallet }),
    ]);
    out.note(`--fail: the recipient closed its token account ${account}; the last hop cannot deliver`);
  }

  // 4. The hops, live.
  out.heading(`4. The hops (the keeper moves the funds on schedule)`);
  const interval = BigInt(Math.floor(opts.arrival / opts.hops));
  const start = scheduleStart ?? (await chainNow(rpc));
  let latest: Transfer | undefined;
  let travelledFor = 0;
  let stopped = false;
  let broken = false;
  const follow = async () => {
    while (!stopped) {
      const done = latest?.progress.hopsCompleted ?? 0;
      if (opts.fail && !broken && done === opts.hops - 1) {
        broken = true;
        await closeRecipientTokenAccount();
      }
      let now = await chainNow(rpc);
      const due = start + BigInt(done + 1) * interval;
      if (opts['time-travel'] && done < opts.hops && travelledFor <= done && due > now) {
        travelledFor = done + 1;
        await timeTravel(where.rpcUrl, due);
        now = due;
      }
      out.progress({
        hop: done,
        hops: opts.hops,
        dueInSeconds: done < opts.hops ? Number(due > now ? due - now : 0n) : undefined,
        recipient: units(await received()),
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };
  // A display that fails (the chain went away, --time-travel on a real cluster) ends the wait.
  const failed = new AbortController();
  const following = follow().catch((error: unknown) => failed.abort(error));
  let finished: Transfer;
  try {
    finished = await waitForTransfer(client, created.id, {
      until: ['completed', 'failed'],
      pollIntervalMs: 1_500,
      signal: failed.signal,
      onUpdate: (transfer) => {
        latest = transfer;
      },
    });
  } finally {
    stopped = true;
    await following;
  }
  if (finished.status === 'completed') {
    out.progress({
      hop: finished.progress.hopsCompleted,
      hops: opts.hops,
      recipient: units(await received()),
    });
  }
  out.endProgress();

  // 5. The result.
  out.heading(`5. Transfer ${finished.id}: ${finished.status} (phase ${finished.phase})`);
  out.field('hops', `${finished.progress.hopsCompleted} of ${finished.progress.hopsTotal}`);
  if (finished.completedAt) out.field('completed at', finished.completedAt);
  if (finished.lastError)
    out.field('last error', `${finished.lastError.code}: ${finished.lastError.message}`);

  // 6. What the source gets back: everything after a failure (rescue), the rent after completion.
  const recovery = finished.status === 'completed' ? 'reclaim' : 'rescue';
  const announced =
    recovery === 'rescue' ? finished.recovery?.rescuableLamports : finished.recovery?.reclaimableLamports;
  out.heading(
    recovery === 'rescue'
      ? '6. Rescue: the source signs the rescue bundle and gets everything back'
      : '6. Rent reclaim: the source signs the reclaim bundle and gets the route’s rent back',
  );
  out.field(
    'announced',
    `${sol(BigInt(announced ?? 0))} (and ${recovery === 'rescue' ? `the ${units(amountRaw)}` : 'no tokens'})`,
  );
  const onRecoveryProgress = (event: RecoveryProgress) => {
    switch (event.kind) {
      case 'prepared':
        if (event.resumed) out.note('prepared again: a fresh bundle for what is left');
        return;
      case 'confirmed':
        out.field(
          `${recovery} ${event.index + 1}/${event.count}`,
          `${event.signature.slice(0, 20)}... confirmed`,
        );
        return;
      case 'stale':
        out.note(
          event.reason === 'blockhash_expired'
            ? 'the blockhash expired before the transaction landed'
            : 'the route changed since the bundle was prepared',
        );
        return;
      case 'reported':
        return;
    }
  };
  const recoveryOptions = {
    transferId: created.id,
    signer: source,
    rpc,
    onProgress: onRecoveryProgress,
  };
  const { transfer: recovered } =
    recovery === 'rescue'
      ? await rescue(client, recoveryOptions)
      : await reclaimRent(client, recoveryOptions);
  out.field('transfer', `${recovered.status} (phase ${recovered.phase})`);

  // The balances.
  const after = await balances();
  out.heading('Balances');
  const change = (delta: bigint, show: (raw: bigint) => string) =>
    `${delta < 0n ? '-' : '+'}${show(delta < 0n ? -delta : delta)}`;
  out.table(
    ['account', 'address', 'before', 'after', 'change'],
    [
      ...(opts.sol
        ? []
        : [
            [
              'source (tokens)',
              source.address,
              units(before.sourceTokens),
              units(after.sourceTokens),
              change(after.sourceTokens - before.sourceTokens, units),
            ],
          ]),
      [
        'source (SOL)',
        source.address,
        sol(before.sourceSol),
        sol(after.sourceSol),
        change(after.sourceSol - before.sourceSol, sol),
      ],
      [
        'recipient',
        recipient,
        units(before.recipient),
        units(after.recipient),
        change(after.recipient - before.recipient, units),
      ],
      ...(config && earningsTokens
        ? [
            [
              'platform earnings (tokens)',
              earningsTokens,
              units(before.earningsTokens),
              units(after.earningsTokens),
              change(after.earningsTokens - before.earningsTokens, units),
            ],
            [
              'platform earnings (SOL)',
              config,
              sol(before.earningsLamports),
              sol(after.earningsLamports),
              change(after.earningsLamports - before.earningsLamports, sol),
            ],
          ]
        : []),
    ],
  );
  if (!config) out.note("the platform's earnings are shown with the admin token (--admin-token)");
  return recovered.status === (opts.fail ? 'refunded' : 'completed') ? 0 : 1;
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message =
      error instanceof TransferRouterError
        ? `${error.message} (request ${error.requestId})`
        : error instanceof Error
          ? error.message
          : String(error);
    const unreachable = error instanceof TypeError && message === 'fetch failed';
    process.stderr.write(
      `error: ${unreachable ? `cannot reach the service or the chain: ${String((error as Error).cause)}. Is it running (npm start)?` : message}\n${error instanceof UsageError ? `\n${USAGE}\n` : ''}`,
    );
    process.exit(error instanceof UsageError ? 2 : 1);
  },
);
