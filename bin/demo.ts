import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import {
  type Address,
  address,
  airdropFactory,
  appendTransactionMessageInstructions,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  isAddress,
  type KeyPairSigner,
  lamports,
  pipe,
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
import { parseChainProfile } from '@transfer-router/local-chain';
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
import { landSigned } from '../clients/typescript/src/send.ts';
import { adminTokenPath } from '../src/bootstrap.ts';
import { findConfigPda } from '../src/chain/router/pda.ts';
import { ROUTER_PROGRAM_ADDRESS } from '../src/chain/router/program.ts';
import { loadCliDefaults } from '../src/cli-defaults.ts';
import { rawToTokens, tokensToRaw } from '../src/domain/amounts.ts';
import {
  describeLocalChainProfile,
  type LocalChainProfile,
  readServiceFile,
  serviceFilePath,
} from '../src/service-file.ts';
import {
  chainNow,
  createDemoRpc,
  createExplorer,
  feeOf,
  isProgram,
  readRouteSchedule,
  timeTravel,
} from './demo-chain.ts';
import { createDisplay } from './demo-display.ts';
import { createHopLog } from './demo-hops.ts';
import { estimateLines, lamportsText, movementLines } from './demo-sol.ts';
import { createSteps } from './demo-step.ts';

const USAGE = `Transfer Router demo: a transfer from a fresh wallet to a fresh recipient, hop by hop

Usage: npm run demo -- [options]

Against the service \`npm start\` runs (found through $DATA_DIR/service.json, like the admin CLI),
or any deployment on a test cluster with --url, --key and --rpc. It creates a test key when none
is given, funds a fresh wallet (airdrop), creates a token and mints it to the wallet (or sends
native SOL with --sol), estimates, creates the transfer, signs and broadcasts the bundle with the
TypeScript client (clients/typescript), follows the hops until the recipient is paid, showing
how late after its due time each one landed, and reclaims the route's rent for the source. It
prints the transfer's page in the service's console, where the hops are seen landing live (sign in
with the test key it created and printed, or your own). Every signature is shown whole with its
Solana Explorer link (the cluster's, told by its genesis hash; any other chain, the local one
included, as Explorer's custom cluster at its RPC URL), and the source's SOL is accounted for to
the lamport, each fee as a fee. With --fail the recipient closes its token account before the
last hop: the router program refuses a last hop whose destination is not an open token account of
the recipient (WrongDestination), so the keeper marks the route failed and the source rescues
everything the route holds.

Options:
  --hops <n>          hops, 3 to 10 (default 3)
  --arrival <s>       seconds until arrival (default the shortest allowed: max(60, 15 x hops))
  --amount <tokens>   amount to send (default 25 tokens, or 0.5 SOL with --sol)
  --sol               send native SOL instead of a token
  --fail              show a failed route rescued (a token route: its recipient closes its token
                      account before the last hop); on the local service's chain it moves the
                      clock as --time-travel does: a failure is not worth a minute's wait
  --url <url>         the service (default $TRANSFER_ROUTER_URL, else the local service)
  --key <key>         an API key (default $TRANSFER_ROUTER_KEY, else a new test key)
  --admin-token <t>   to create that key and show the platform's earnings (the protocol config's
                      lamports and token account) (default $ADMIN_TOKEN, else $DATA_DIR/admin-token)
  --rpc <url>         the chain's JSON-RPC endpoint (default $SOLANA_RPC_URL, else the local
                      service's); its router program is $ROUTER_PROGRAM_ID, else the local one
  --profile <name>    instant or mainnet: the profile the local service's embedded chain must be
                      running (default $LOCAL_CHAIN_PROFILE); \`LOCAL_CHAIN_PROFILE=mainnet npm start\`
                      runs the mainnet-like one
  --seed <seed>       the seed of its draws it must be running (default $LOCAL_CHAIN_SEED)
  --time-travel       on the local chain only: move its clock to each hop's due time instead of
                      waiting for it (the tests use this); the local service's keeper hears of
                      each jump at once, so a 3-hop transfer takes seconds
  --step              on the local chain only: as --time-travel, but wait for Enter before each
                      move of the clock, to watch each hop land on the transfer's console page
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
      profile: { type: 'string' },
      seed: { type: 'string' },
      'time-travel': { type: 'boolean', default: false },
      step: { type: 'boolean', default: false },
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

/** The chain profile asked for, if any: the flags, else the service's own settings. */
function askedProfile(opts: ReturnType<typeof options>, defaults: ReturnType<typeof loadCliDefaults>) {
  const name = opts.profile ?? defaults.localChainProfile;
  try {
    return {
      name: name === undefined ? undefined : parseChainProfile(name),
      seed: opts.seed ?? defaults.localChainSeed,
    };
  } catch (error) {
    throw new UsageError(`--profile (or LOCAL_CHAIN_PROFILE): ${(error as Error).message}`);
  }
}

/**
 * Checks the profile asked for against the one the running service's embedded chain records: the
 * demo runs on that chain and cannot change how it behaves.
 */
function checkProfile(
  asked: ReturnType<typeof askedProfile>,
  chain: { rpcUrl: string; profile: LocalChainProfile | undefined },
) {
  if (asked.name === undefined && asked.seed === undefined) return;
  const running = chain.profile;
  if (!running) {
    throw new UsageError(
      `a chain profile is for the embedded chain of a local service (\`npm start\` without RPC_URL); the chain at ${chain.rpcUrl} is not one`,
    );
  }
  if ((asked.name ?? running.name) !== running.name || (asked.seed ?? running.seed) !== running.seed) {
    const restart = `LOCAL_CHAIN_PROFILE=${asked.name ?? running.name}${asked.seed ? ` LOCAL_CHAIN_SEED=${asked.seed}` : ''} npm start`;
    throw new Error(
      `the running service's chain is on the ${describeLocalChainProfile(running)}, not the one asked for: restart it with \`${restart}\``,
    );
  }
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
  // The service names its program to an admin; otherwise ROUTER_PROGRAM_ID, or the local default.
  const programId =
    defaults.routerProgramId ??
    (adminToken
      ? (await admin<{ program: { address: string } }>(service.url, adminToken, 'GET', '/platform')).program
          .address
      : ROUTER_PROGRAM_ADDRESS);
  if (!isAddress(programId)) throw new UsageError('ROUTER_PROGRAM_ID must be a base58 program address');
  // The running service says how its embedded chain behaves.
  const chain = {
    rpcUrl,
    profile: running?.rpcUrl === rpcUrl ? running.chainProfile : undefined,
    programAddress: address(programId),
  };
  checkProfile(askedProfile(opts, defaults), chain);
  return { service, chain, adminToken, dataDir: defaults.dataDir };
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

async function run(argv: string[]): Promise<number> {
  const opts = options(argv);
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const where = await locate(opts);
  const rpc = createDemoRpc(where.chain.rpcUrl);
  const rpcSubscriptions = createSolanaRpcSubscriptions(where.chain.rpcUrl.replace(/^http/, 'ws'));
  const explorer = await createExplorer(rpc, where.chain.rpcUrl);
  const out = createDisplay(process.stdout, explorer.transaction);
  // A failure is not worth waiting for: on the local service's chain, --fail moves its clock too.
  const travel = opts['time-travel'] || opts.step || (opts.fail && where.chain.profile !== undefined);

  out.heading('Transfer Router demo');
  out.field('service', `${where.service.url} (${where.service.from})`);
  const { profile } = where.chain;
  out.field(
    'chain',
    `${where.chain.rpcUrl}${profile ? ` (embedded, ${describeLocalChainProfile(profile)})` : ''}`,
  );
  out.field('explorer', `links open Solana Explorer on ${explorer.cluster}`);
  if (!(await isProgram(rpc, where.chain.programAddress))) {
    throw new UsageError(
      `no router program at ${where.chain.programAddress} on this chain: set ROUTER_PROGRAM_ID to the deployment's, or give the admin token (the service then names it)`,
    );
  }
  let apiKey = opts.key ?? process.env.TRANSFER_ROUTER_KEY;
  // A key the demo creates is a test key, shown whole; one given to it may be live, and is not.
  const keyShown = !apiKey;
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

  /**
   * Builds and signs one transaction of the source's, lands it as the client lands a bundle's, and
   * answers its signature.
   */
  async function send(payer: KeyPairSigner, instructions: Instruction[]) {
    const { value: lifetime } = await rpc.getLatestBlockhash().send();
    const transaction = await pipe(
      createTransactionMessage({ version: 0 }),
      (message) => setTransactionMessageFeePayerSigner(payer, message),
      (message) => setTransactionMessageLifetimeUsingBlockhash(lifetime, message),
      (message) => appendTransactionMessageInstructions(instructions, message),
      (message) => signTransactionMessageWithSigners(message),
    );
    const signed = {
      base64: getBase64EncodedWireTransaction(transaction),
      signature: getSignatureFromTransaction(transaction),
      validUntil: lifetime.lastValidBlockHeight,
    };
    await landSigned(rpc, signed, { commitment: 'confirmed' });
    return signed.signature;
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
    `${units(BigInt(estimate.tokens.feeRaw))} (${estimate.percentFeeBps / 100}%, tier ${estimate.tier}) + ${lamportsText(BigInt(estimate.totalFlatFeeLamports))} flat`,
  );
  out.field('recipient gets', units(BigInt(estimate.tokens.netDeliveredRaw)));
  for (const [label, value] of estimateLines(
    estimate.sol,
    opts.sol ? `the ${units(amountRaw)} sent` : undefined,
  )) {
    out.field(label, value);
  }
  const created = await client.createTransfer({
    ...terms,
    amountTokens: rawToTokens(amountRaw, decimals),
    sourceOwner: source.address,
    recipientWallet: recipient,
    arrivalSeconds: opts.arrival,
  });
  out.field('transfer', `${created.id} (${created.status}, priced until ${created.expiresAt})`);
  out.field('support bundle', `${created.supportBundleId} (quote it when asking about this transfer)`);
  out.field(
    'console',
    `${where.service.url.replace(/\/+$/, '')}/dashboard/transfers/${created.id} (sign in with ${keyShown ? 'the key above' : 'your key'} to watch it)`,
  );

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
  // The estimate counts the platform's fee account for the mint (the protocol config's token
  // account) in full; a bundle creates it only for the mint's first route.
  const [feeAccount] = await findAssociatedTokenPda({
    owner: (await findConfigPda(where.chain.programAddress))[0],
    mint,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  const feeAccountExisted =
    (await rpc.getAccountInfo(feeAccount, { encoding: 'base64' }).send()).value !== null;

  // 3. Prepare, sign, broadcast in order, both confirm calls: the client does it all.
  out.heading('3. Prepared, signed with the source wallet, broadcast in order');
  const onProgress = (event: BroadcastProgress) => {
    switch (event.kind) {
      case 'prepared':
        if (event.resumed) out.note('prepared again: a fresh bundle for what is not on chain yet');
        return;
      case 'confirmed':
        out.signature(`${event.group} ${event.index + 1}/${event.count}`, event.signature, 'confirmed');
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
  const deployed = await lamportsOf(source.address);
  /** Network fees of the source's own transactions besides the bundle and the recovery. */
  const ownFees: { label: string; lamports: bigint; what: string }[] = [];

  /**
   * The recipient closes its empty token account, as any wallet may: the router program then
   * refuses the last hop, whose destination is no longer an open token account of the recipient.
   */
  async function closeRecipientTokenAccount() {
    const [account] = await findAssociatedTokenPda({
      owner: recipient,
      mint,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    // The source pays the network fee; the account's rent goes to the recipient.
    const signature = await send(source, [
      getCloseAccountInstruction({ account, destination: recipient, owner: recipientWallet }),
    ]);
    out.note(
      `--fail: the recipient closed its token account ${account}; the router program will refuse the last hop (WrongDestination: its destination is not an open token account of the recipient)`,
    );
    out.signature('closed', signature, 'confirmed (the source paid its network fee)');
    const fee = await feeOf(rpc, signature);
    ownFees.push({
      label: 'closing fee',
      lamports: fee.lamports,
      what: `the network fee of the recipient closing its token account (${fee.signatures} signatures), paid by the source`,
    });
  }

  // 4. The hops, live, each due when the route's schedule on chain says.
  out.heading(`4. The hops (the keeper moves the funds on schedule)`);
  out.note("a hop's lateness by the chain's clock: from its due time to the time of the block it landed in");
  out.note(
    "by the wall's: from the chain's clock showing its due time to the service recording it confirmed",
  );
  if (travel) {
    const flag = opts.step ? '--step' : opts['time-travel'] ? '--time-travel' : '--fail on the local chain';
    out.note(
      `${flag}: the demo moves the chain's clock to each hop's due time${opts.step ? ' when you press Enter' : ''}; the keeper of the local service hears of each jump at once`,
    );
  }
  const steps = opts.step ? createSteps(process.stdin) : undefined;
  // Ends a wait for Enter once the transfer no longer needs the clock moved.
  const settled = new AbortController();
  const schedule = await readRouteSchedule(rpc, where.chain.programAddress, source.address, created.id);
  const hopLog = createHopLog({ rpc, client, transferId: created.id, hops: opts.hops, schedule });
  let latest: Transfer | undefined;
  let travelledFor = 0;
  /** The hops whose move of the clock was asked for (--step). */
  let stepsAsked = 0;
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
      let seenAt = Date.now();
      const due = schedule.dueAt(done);
      const dueNext = travel && done < opts.hops && travelledFor <= done && due > now;
      if (dueNext && (!steps || stepsAsked > done)) {
        travelledFor = done + 1;
        // The clock shows the due time from some moment of the call on: the keeper, woken by the
        // jump, may record the hop before the answer is back.
        seenAt = Date.now();
        await timeTravel(where.chain.rpcUrl, due);
        now = due;
      }
      hopLog.sawClock(now, seenAt);
      if (latest) for (const landing of await hopLog.landedSince(latest)) out.hopLanded(landing);
      out.progress({
        hop: done,
        hops: opts.hops,
        dueInSeconds: done < opts.hops ? Number(due > now ? due - now : 0n) : undefined,
        recipient: units(await received()),
      });
      if (dueNext && steps && stepsAsked <= done) {
        // Asked after the landings and the progress are shown, so that the page and the demo agree.
        stepsAsked = done + 1;
        out.endProgress();
        out.note(`--step: press Enter to move the chain's clock to hop ${done + 1}'s due time`);
        await steps.next(settled.signal);
        continue;
      }
      // Within a second of a due time the clock is read often, to see the moment the hop fell due.
      await sleep(done < opts.hops && due - now <= 1n ? 100 : 500);
    }
  };
  // A display that fails (the chain went away, --time-travel on a real cluster) ends the wait.
  const failed = new AbortController();
  const following = follow().catch((error: unknown) => failed.abort(error));
  let finished: Transfer;
  try {
    finished = await waitForTransfer(client, created.id, {
      until: ['completed', 'failed'],
      // Moving the clock, the demo waits for the service only: a hop lands moments after a jump.
      pollIntervalMs: travel ? 250 : 1_500,
      signal: failed.signal,
      onUpdate: (transfer) => {
        latest = transfer;
      },
    });
  } finally {
    stopped = true;
    settled.abort();
    await following;
  }
  for (const landing of await hopLog.landedSince(finished)) out.hopLanded(landing);
  if (finished.status === 'completed') {
    out.progress({
      hop: finished.progress.hopsCompleted,
      hops: opts.hops,
      recipient: units(await received()),
    });
  }
  out.endProgress();
  const lateness = hopLog.summary();
  if (lateness) out.lateness(lateness);

  // 5. The result.
  out.heading(`5. Transfer ${finished.id}: ${finished.status} (phase ${finished.phase})`);
  out.field('hops', `${finished.progress.hopsCompleted} of ${finished.progress.hopsTotal}`);
  if (finished.completedAt) out.field('completed at', finished.completedAt);
  if (finished.lastError)
    out.field('last error', `${finished.lastError.code}: ${finished.lastError.message}`);
  if (finished.status === 'failed') {
    out.field('support bundle', `${finished.supportBundleId} (quote it when asking about this failure)`);
  }

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
    `${lamportsText(BigInt(announced ?? 0))} (${sol(BigInt(announced ?? 0))}; and ${recovery === 'rescue' ? `the ${units(amountRaw)}` : 'no tokens'})`,
  );
  const recoverySignatures: string[] = [];
  const onRecoveryProgress = (event: RecoveryProgress) => {
    switch (event.kind) {
      case 'prepared':
        if (event.resumed) out.note('prepared again: a fresh bundle for what is left');
        return;
      case 'confirmed':
        recoverySignatures.push(event.signature);
        out.signature(`${recovery} ${event.index + 1}/${event.count}`, event.signature, 'confirmed');
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
  const beforeRecovery = await lamportsOf(source.address);
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

  // The source's SOL, to the lamport: the bundle against the estimate, each fee as a fee.
  out.heading("The source's SOL, to the lamport");
  const recoveryFees = await Promise.all(recoverySignatures.map((signature) => feeOf(rpc, signature)));
  const recoveryFee = recoveryFees.reduce((sum, fee) => sum + fee.lamports, 0n);
  const tokenRent = await rpc.getMinimumBalanceForRentExemption(165n).send();
  for (const [label, value] of movementLines({
    estimate: {
      upFront: BigInt(estimate.sol.requiredSolUpFrontLamports),
      refundable: BigInt(estimate.sol.refundableLamports),
    },
    bundle: before.sourceSol - deployed - (opts.sol ? amountRaw : 0n),
    unneeded: feeAccountExisted
      ? [{ lamports: tokenRent, why: "for the platform's fee account for the mint, which existed already" }]
      : [],
    amount: opts.sol
      ? {
          lamports: amountRaw,
          what: `the ${units(amountRaw)} sent: ${units(BigInt(estimate.tokens.netDeliveredRaw))} to the recipient, ${units(BigInt(estimate.tokens.feeRaw))} fee`,
        }
      : undefined,
    ownFees,
    recovery: {
      kind: recovery,
      back: after.sourceSol - beforeRecovery + recoveryFee,
      announced: BigInt(announced ?? 0),
      fee: recoveryFee,
      signatures: recoveryFees.reduce((sum, fee) => sum + fee.signatures, 0),
    },
    change: after.sourceSol - before.sourceSol,
  })) {
    out.field(label, value);
  }
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
