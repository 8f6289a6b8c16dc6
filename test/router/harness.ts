import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  type Address,
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getAddressEncoder,
  getProgramDerivedAddress,
  getTransactionEncoder,
  type Instruction,
  type KeyPairSigner,
  lamports,
  type ProgramDerivedAddress,
  pipe,
  setTransactionMessageFeePayerSigner,
  signTransactionMessageWithSigners,
  type Transaction,
  type TransactionSigner,
} from '@solana/kit';
import { getCreateAccountInstruction, getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getInitializeMint2Instruction,
  getMintDecoder,
  getMintSize,
  getMintToInstruction,
  getSyncNativeInstruction,
  getTokenDecoder,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import type { TokenProgramImplementation } from '@transfer-router/local-chain';
import { legacyTokenProgram, tokenProgramFromEnv } from '@transfer-router/local-chain/testing';
import { Clock, type FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from 'litesvm';
import { BPF_LOADER_UPGRADEABLE_ADDRESS } from '../../src/chain/loader.ts';
import {
  decodeOrchestrator,
  decodeRoute,
  decodeStep,
  NATIVE_MINT_ADDRESS,
  type Route,
} from '../../src/chain/router/accounts.ts';
import { type DeploymentInput, planDeployment } from '../../src/chain/router/bundle.ts';
import { ROUTER_ERROR_CODES, type RouterErrorName, routerErrorName } from '../../src/chain/router/errors.ts';
import {
  getCreateRouteInstruction,
  getInitConfigInstruction,
  type RouteTerms,
} from '../../src/chain/router/instructions.ts';
import { findConfigPda, findRouteAddresses, type RouteAddresses } from '../../src/chain/router/pda.ts';
import {
  ROUTER_PROGRAM_ADDRESS,
  ROUTER_PROGRAM_VARIANTS,
  type RouterProgramVariant,
  routerProgramPath,
} from '../../src/chain/router/program.ts';

/*
 * A LiteSVM chain with the router program (either SBPF variant) and either implementation of the
 * SPL Token program (p-token, LiteSVM's, or the legacy spl_token 3.5.0), an SPL mint (or the native mint,
 * with the source's SOL wrapped), the platform's and integrator's wallets and fee accounts, and the
 * protocol config; transactions are built and signed the way a wallet does with @solana/kit. It
 * tracks every account it creates so tests can check conservation: no lamport or token appears or
 * disappears except transaction fees (and, on the native mint, wrapped SOL the recipient received
 * unwrapped).
 */

export const T0 = 1_767_225_600n; // 2026-01-01T00:00:00Z
export const SOURCE_TOKENS = 1_000_000_000_000n;
export const SCREENING_DEPOSIT = 2_000_000n;
export const MAX_TX_SIZE = 1232;
const SIGNATURE_FEE = 5000n;
const WALLET_LAMPORTS = 100_000_000_000n;

export type SendResult =
  | {
      ok: true;
      meta: TransactionMetadata;
      size: number;
      computeUnits: bigint;
      returnData: Uint8Array;
      logs: string[];
    }
  | {
      ok: false;
      meta: TransactionMetadata;
      size: number;
      error: string;
      customCode?: number;
      logs: string[];
    };

export interface Wallets {
  admin: KeyPairSigner;
  source: KeyPairSigner;
  keeper: KeyPairSigner;
  screener: KeyPairSigner;
  platform: KeyPairSigner;
  integrator: KeyPairSigner;
  recipient: KeyPairSigner;
  stranger: KeyPairSigner;
}

export interface RouterEnv {
  svm: LiteSVM;
  variant: RouterProgramVariant;
  tokenProgram: TokenProgramImplementation;
  wallets: Wallets;
  mint: Address;
  /** The mint is the native mint: routes deliver SOL to the recipient's wallet. */
  native: boolean;
  config: ProgramDerivedAddress;
  programData: Address;
  /** Associated token accounts; on the native mint the recipient's is never created. */
  tokens: { source: Address; platformFee: Address; integratorFee: Address; recipient: Address };
  /** Lamports paid as transaction fees since the environment was created (by one payer, if given). */
  fees(payer?: Address): bigint;
  track(...addresses: Address[]): void;
  send(
    payer: TransactionSigner,
    instructions: Instruction[],
    options?: { legacy?: boolean },
  ): Promise<SendResult>;
  sendSigned(transaction: Transaction): SendResult;
  lamports(address: Address): bigint;
  tokenBalance(address: Address): bigint;
  exists(address: Address): boolean;
  route(address: Address): Route;
  /** The route at `address`, or null when no route account is there. */
  routeOrNull(address: Address): Route | null;
  now(): bigint;
  setTime(unix: bigint): void;
  /**
   * Asserts that tracked lamports plus fees and all tokens of the mint are what they were; on the
   * native mint, that every wrapped lamport is backed and the wrapped total fell only by what the
   * recipient's wallet received.
   */
  assertConserved(): void;
}

async function programDataAddress(): Promise<Address> {
  const [address] = await getProgramDerivedAddress({
    programAddress: BPF_LOADER_UPGRADEABLE_ADDRESS,
    seeds: [getAddressEncoder().encode(ROUTER_PROGRAM_ADDRESS)],
  });
  return address;
}

/** Records `authority` as the program's upgrade authority (LiteSVM deploys without one). */
function setUpgradeAuthority(svm: LiteSVM, programData: Address, authority: Address) {
  const account = svm.getAccount(programData);
  assert.ok(account.exists, 'program data account');
  const data = new Uint8Array(account.data);
  data[12] = 1;
  data.set(getAddressEncoder().encode(authority), 13);
  svm.setAccount({ ...account, data });
}

function describeResult(svm: LiteSVM, result: TransactionMetadata | FailedTransactionMetadata, size: number) {
  svm.expireBlockhash();
  if (!('err' in result)) {
    return {
      ok: true as const,
      meta: result,
      size,
      computeUnits: result.computeUnitsConsumed(),
      returnData: new Uint8Array(result.returnData().data()),
      logs: result.logs(),
    };
  }
  const err = result.err();
  // Instruction errors carry the failing instruction's error; custom ones carry a numeric code.
  const inner = (err as { err?: () => unknown }).err?.();
  const customCode =
    typeof inner === 'object' && inner !== null && 'code' in inner
      ? Number((inner as { code: number }).code)
      : undefined;
  return {
    ok: false as const,
    meta: result.meta(),
    size,
    error: err.toString(),
    customCode,
    logs: result.meta().logs(),
  };
}

/** A router program variant on a Token program implementation: what the router's tests run on. */
export interface RouterTarget {
  variant: RouterProgramVariant;
  tokenProgram: TokenProgramImplementation;
  /** How test and bench titles name it. */
  label: string;
}

/**
 * Every variant on every Token program: p-token is what clusters run now, the legacy program what
 * they ran before it (its Token calls cost the router's instructions 3-4 times the compute units).
 */
export const ROUTER_TARGETS: readonly RouterTarget[] = (['p-token', 'legacy'] as const).flatMap(
  (tokenProgram) =>
    ROUTER_PROGRAM_VARIANTS.map((variant) => ({
      variant,
      tokenProgram,
      label: tokenProgram === 'p-token' ? variant : `${variant} on legacy Token`,
    })),
);

/**
 * A fresh chain with the router program of `variant`, config initialised, on `tokenProgram`
 * (default: what LOCAL_CHAIN_TOKEN_PROGRAM names, p-token unless `legacy`). With `native`, the mint
 * is the native mint, the source holds SOURCE_TOKENS lamports wrapped in its token account, and
 * the recipient's wallet starts with `recipientLamports` (default none: it does not exist yet).
 */
export async function createRouterEnv(
  variant: RouterProgramVariant,
  options: { native?: boolean; recipientLamports?: bigint; tokenProgram?: TokenProgramImplementation } = {},
): Promise<RouterEnv> {
  const native = options.native ?? false;
  const tokenProgram = options.tokenProgram ?? tokenProgramFromEnv();
  const svm = new LiteSVM();
  if (tokenProgram === 'legacy') svm.addProgram(TOKEN_PROGRAM_ADDRESS, legacyTokenProgram());
  if (native) svm.withNativeMints();
  svm.addProgram(ROUTER_PROGRAM_ADDRESS, readFileSync(routerProgramPath(variant)));
  svm.setClock(new Clock(1000n, T0, 0n, 0n, T0));
  const signers = await Promise.all(Array.from({ length: 9 }, () => generateKeyPairSigner()));
  const [admin, source, keeper, screener, platform, integrator, recipient, stranger, mintSigner] =
    signers as [KeyPairSigner, ...KeyPairSigner[]] as KeyPairSigner[];
  const wallets: Wallets = {
    admin: admin!,
    source: source!,
    keeper: keeper!,
    screener: screener!,
    platform: platform!,
    integrator: integrator!,
    recipient: recipient!,
    stranger: stranger!,
  };
  // The keeper starts empty: the deployment bundle funds it.
  for (const wallet of Object.values(wallets)) {
    if (wallet === wallets.keeper || (native && wallet === wallets.recipient)) continue;
    svm.airdrop(wallet.address, lamports(WALLET_LAMPORTS));
  }
  if (native) {
    // The source's SOL to wrap, on top of what it spends on fees and rent.
    svm.airdrop(wallets.source.address, lamports(SOURCE_TOKENS));
    const recipientLamports = options.recipientLamports ?? 0n;
    if (recipientLamports > 0n) svm.airdrop(wallets.recipient.address, lamports(recipientLamports));
  }
  const programData = await programDataAddress();
  setUpgradeAuthority(svm, programData, wallets.admin.address);

  const tracked = new Set<Address>(Object.values(wallets).map((w) => w.address));
  let fees = 0n;
  const feesByPayer = new Map<Address, bigint>();
  let slot = 1000n;

  const sendSigned = (transaction: Transaction): SendResult => {
    const size = getTransactionEncoder().encode(transaction).length;
    const result = describeResult(svm, svm.sendTransaction(transaction), size);
    // A processed transaction pays its signature fees whether or not it succeeds; the first
    // signer is the fee payer.
    const signers = Object.keys(transaction.signatures) as Address[];
    const fee = SIGNATURE_FEE * BigInt(signers.length);
    fees += fee;
    feesByPayer.set(signers[0]!, (feesByPayer.get(signers[0]!) ?? 0n) + fee);
    return result;
  };
  const send = async (
    payer: TransactionSigner,
    instructions: Instruction[],
    options: { legacy?: boolean } = {},
  ) => {
    if (options.legacy) {
      const legacy = pipe(
        createTransactionMessage({ version: 'legacy' }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
        (m) => appendTransactionMessageInstructions(instructions, m),
      );
      return sendSigned(await signTransactionMessageWithSigners(legacy));
    }
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => svm.setTransactionMessageLifetimeUsingLatestBlockhash(m),
      (m) => appendTransactionMessageInstructions(instructions, m),
    );
    return sendSigned(await signTransactionMessageWithSigners(message));
  };
  const mustSend = async (payer: TransactionSigner, instructions: Instruction[]) => {
    const result = await send(payer, instructions);
    assert.ok(result.ok, result.ok ? '' : `${result.error}\n${result.logs.join('\n')}`);
  };

  const mint = native ? NATIVE_MINT_ADDRESS : mintSigner!.address;
  const mintSize = BigInt(getMintSize());
  if (!native) {
    await mustSend(wallets.admin, [
      getCreateAccountInstruction({
        payer: wallets.admin,
        newAccount: mintSigner!,
        lamports: svm.minimumBalanceForRentExemption(mintSize),
        space: mintSize,
        programAddress: TOKEN_PROGRAM_ADDRESS,
      }),
      getInitializeMint2Instruction({ mint, decimals: 6, mintAuthority: wallets.admin.address }),
    ]);
  }
  const ata = async (owner: Address) =>
    (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
  // The platform's fees settle into the protocol config account and its token account of the mint.
  const config = await findConfigPda();
  const tokens = {
    source: await ata(wallets.source.address),
    platformFee: await ata(config[0]),
    integratorFee: await ata(wallets.integrator.address),
    recipient: await ata(wallets.recipient.address),
  };
  await mustSend(wallets.admin, [
    ...[wallets.source.address, config[0], wallets.integrator.address].map((owner, i) =>
      getCreateAssociatedTokenIdempotentInstruction({
        payer: wallets.admin,
        owner,
        mint,
        ata: [tokens.source, tokens.platformFee, tokens.integratorFee][i]!,
      }),
    ),
    ...(native
      ? []
      : [
          getMintToInstruction({
            mint,
            token: tokens.source,
            mintAuthority: wallets.admin,
            amount: SOURCE_TOKENS,
          }),
        ]),
  ]);
  if (native) {
    // Wrapping as a wallet does: SOL into its token account, then SyncNative.
    await mustSend(wallets.source, [
      getTransferSolInstruction({
        source: wallets.source,
        destination: tokens.source,
        amount: SOURCE_TOKENS,
      }),
      getSyncNativeInstruction({ account: tokens.source }),
    ]);
  }
  await mustSend(wallets.admin, [
    getInitConfigInstruction({
      admin: wallets.admin,
      config,
      programData,
      screeningAuthority: wallets.screener.address,
      platformWallet: wallets.platform.address,
      screeningDepositLamports: SCREENING_DEPOSIT,
    }),
  ]);
  for (const a of [mint, config[0], ...Object.values(tokens)]) tracked.add(a);

  const lamportsOf = (address: Address) => svm.getBalance(address) ?? 0n;
  const totalLamports = () => [...tracked].reduce((total, a) => total + lamportsOf(a), 0n);
  const baselineLamports = totalLamports() + fees;
  const tokenDecoder = getTokenDecoder();
  const tokenAccounts = () =>
    svm
      .getProgramAccounts(TOKEN_PROGRAM_ADDRESS)
      .filter((a) => a.data.length === 165)
      .map((a) => ({ lamports: a.lamports, token: tokenDecoder.decode(a.data) }))
      .filter((a) => a.token.mint === mint);
  const allTokens = () => tokenAccounts().reduce((total, a) => total + a.token.amount, 0n);
  // The recipient's wallet grows only by what settlements unwrapped to it (it pays its own fees).
  const recipientBaseline = lamportsOf(wallets.recipient.address);

  return {
    svm,
    variant,
    tokenProgram,
    wallets,
    mint,
    native,
    config,
    programData,
    tokens,
    fees: (payer) => (payer === undefined ? fees : (feesByPayer.get(payer) ?? 0n)),
    track: (...addresses) => {
      for (const a of addresses) tracked.add(a);
    },
    send,
    sendSigned,
    lamports: lamportsOf,
    tokenBalance(address) {
      const account = svm.getAccount(address);
      return account.exists ? tokenDecoder.decode(account.data).amount : 0n;
    },
    exists: (address) => svm.getAccount(address).exists,
    route(address) {
      const account = svm.getAccount(address);
      assert.ok(account.exists, `route ${address} exists`);
      return decodeRoute(account.data);
    },
    routeOrNull(address) {
      const account = svm.getAccount(address);
      return account.exists && account.programAddress === ROUTER_PROGRAM_ADDRESS
        ? decodeRoute(account.data)
        : null;
    },
    now: () => svm.getClock().unixTimestamp,
    setTime(unix) {
      slot += 1n;
      svm.setClock(new Clock(slot, T0, 0n, 0n, unix));
    },
    assertConserved() {
      assert.equal(totalLamports() + fees, baselineLamports, 'lamports conserved (tracked accounts + fees)');
      if (native) {
        for (const { lamports, token } of tokenAccounts()) {
          assert.equal(token.isNative.__option, 'Some', 'a native-mint token account');
          const reserve = token.isNative.__option === 'Some' ? token.isNative.value : 0n;
          assert.equal(lamports, reserve + token.amount, 'every wrapped lamport is backed, none stray');
        }
        const unwrapped =
          lamportsOf(wallets.recipient.address) +
          (feesByPayer.get(wallets.recipient.address) ?? 0n) -
          recipientBaseline;
        assert.equal(
          allTokens() + unwrapped,
          SOURCE_TOKENS,
          'wrapped SOL is wrapped or in the recipient wallet',
        );
        return;
      }
      const mintAccount = svm.getAccount(mint);
      assert.ok(mintAccount.exists);
      const supply = getMintDecoder().decode(mintAccount.data).supply;
      assert.equal(supply, SOURCE_TOKENS, 'no tokens minted or burned');
      assert.equal(allTokens(), supply, 'every token of the mint is in a token account');
    },
  };
}

/** Asserts success and returns the result's figures. */
export function expectOk(result: SendResult): Extract<SendResult, { ok: true }> {
  assert.ok(result.ok, result.ok ? '' : `expected success, got ${result.error}\n${result.logs.join('\n')}`);
  return result;
}

/** Asserts the transaction failed with the router error `name`. */
export function expectRouterError(result: SendResult, name: RouterErrorName) {
  assert.ok(!result.ok, `expected ${name}, but the transaction succeeded`);
  assert.equal(
    result.customCode === undefined ? result.error : routerErrorName(result.customCode),
    name,
    `expected ${name} (${ROUTER_ERROR_CODES[name]})\n${result.logs.join('\n')}`,
  );
}

export interface RouteOptions {
  hopCount: number;
  amount?: bigint;
  routeId?: bigint;
  percentFeeBps?: number;
  integratorShareBps?: number;
  flatFeePerHopLamports?: bigint;
  intervalSecs?: number;
  firstReleaseDelay?: bigint;
  deadlineDelay?: bigint;
  screeningRequired?: boolean;
  /** The largest screening deposit the source agrees to (default: the config's). */
  maxDepositLamports?: bigint;
  keeperFundingLamports?: bigint;
}

export interface RouteFixture {
  terms: RouteTerms;
  addresses: RouteAddresses;
  routeAddress: Address;
  hops: KeyPairSigner[];
  /** Every holder of the route's net amount, in step order (last: the recipient's token account, or its wallet on the native mint). */
  holders: Address[];
}

/** Terms and addresses of a route before anything is sent. */
export async function prepareEndpoint(env: RouterEnv, options: RouteOptions): Promise<RouteFixture> {
  const routeId = options.routeId ?? 1n;
  const now = env.now();
  const intervalSecs = options.intervalSecs ?? 60;
  const firstReleaseAt = now + (options.firstReleaseDelay ?? 60n);
  const terms: RouteTerms = {
    routeId,
    hopCount: options.hopCount,
    amount: options.amount ?? 123_456_789n,
    percentFeeBps: options.percentFeeBps ?? 100,
    integratorShareBps: options.integratorShareBps ?? 3000,
    flatFeePerHopLamports: options.flatFeePerHopLamports ?? 10_000n,
    firstReleaseAt,
    intervalSecs,
    deadlineAt:
      firstReleaseAt + BigInt(intervalSecs * (options.hopCount - 1)) + (options.deadlineDelay ?? 3600n),
    keeper: env.wallets.keeper.address,
    recipient: env.wallets.recipient.address,
    recipientToken: env.native ? null : env.tokens.recipient,
    integratorWallet: env.wallets.integrator.address,
    screeningRequired: options.screeningRequired ?? false,
    maxDepositLamports: options.maxDepositLamports ?? SCREENING_DEPOSIT,
  };
  const addresses = await findRouteAddresses({
    source: env.wallets.source.address,
    routeId,
    hopCount: options.hopCount,
  });
  const hops = await Promise.all(Array.from({ length: options.hopCount - 1 }, () => generateKeyPairSigner()));
  env.track(
    addresses.route[0],
    addresses.custody[0],
    addresses.orchestrator[0],
    ...addresses.steps.map(([a]) => a),
    ...hops.map((h) => h.address),
  );
  return {
    terms,
    addresses,
    routeAddress: addresses.route[0],
    hops,
    holders: [
      addresses.custody[0],
      ...hops.map((h) => h.address),
      env.native ? env.wallets.recipient.address : env.tokens.recipient,
    ],
  };
}

/**
 * The fixture's deployment bundle as `planDeployment` builds it for a fresh route of this chain's
 * source and mint; `overrides` replace any input (terms, hop signers, what is on chain).
 */
export function planFixtureDeployment(
  env: RouterEnv,
  fixture: RouteFixture,
  overrides: Partial<DeploymentInput> = {},
) {
  return planDeployment({
    source: env.wallets.source,
    keeper: env.wallets.keeper.address,
    keeperFundingLamports: 1_000_000n,
    terms: fixture.terms,
    mint: env.mint,
    sourceToken: env.tokens.source,
    config: env.config[0],
    platformFeeToken: env.tokens.platformFee,
    integratorFeeToken: env.tokens.integratorFee,
    addresses: fixture.addresses,
    hopSigners: fixture.hops,
    onChain: {
      keeperFunded: false,
      route: null,
      orchestratorExists: env.exists(fixture.addresses.orchestrator[0]),
    },
    ...overrides,
  });
}

/** The fixture's CreateRoute instruction; `overrides` replace accounts or single terms. */
export function createRouteInstruction(
  env: RouterEnv,
  fixture: RouteFixture,
  overrides: Partial<Omit<Parameters<typeof getCreateRouteInstruction>[0], 'terms'>> & {
    terms?: Partial<RouteTerms>;
  } = {},
): Instruction {
  const { terms, ...rest } = overrides;
  return getCreateRouteInstruction({
    source: env.wallets.source,
    route: fixture.addresses.route,
    custody: fixture.addresses.custody,
    sourceToken: env.tokens.source,
    mint: env.mint,
    config: env.config[0],
    platformFeeToken: env.tokens.platformFee,
    integratorFeeToken: env.tokens.integratorFee,
    hops: fixture.hops,
    ...rest,
    terms: { ...fixture.terms, ...terms },
  });
}

/** Sends the whole deployment bundle in the API's order, checking every transaction's size. */
export async function deployRoute(env: RouterEnv, options: RouteOptions): Promise<RouteFixture> {
  const fixture = await prepareEndpoint(env, options);
  const plan = planFixtureDeployment(env, fixture, {
    keeperFundingLamports: options.keeperFundingLamports ?? 1_000_000n,
  });
  const groups = [
    ...(plan.keeperFunding ? [{ instructions: plan.keeperFunding, legacy: false }] : []),
    ...plan.routeInit.map((instructions) => ({ instructions, legacy: false })),
    ...(plan.orchestratorInit ? [{ instructions: plan.orchestratorInit, legacy: true }] : []),
    ...plan.sessionInit.map((instructions) => ({ instructions, legacy: false })),
  ];
  for (const group of groups) {
    const result = expectOk(await env.send(env.wallets.source, group.instructions, { legacy: group.legacy }));
    assert.ok(result.size <= MAX_TX_SIZE, `transaction of ${result.size} bytes`);
    env.assertConserved();
  }
  return fixture;
}

/** Decodes an orchestrator account. */
export function readOrchestrator(env: RouterEnv, address: Address) {
  const account = env.svm.getAccount(address);
  assert.ok(account.exists);
  return decodeOrchestrator(account.data);
}

/** Decodes a step account. */
export function readStep(env: RouterEnv, address: Address) {
  const account = env.svm.getAccount(address);
  assert.ok(account.exists);
  return decodeStep(account.data);
}
