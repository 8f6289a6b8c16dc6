import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Address, createNoopSigner, generateKeyPairSigner, getAddressEncoder } from '@solana/kit';
import {
  decodeOrchestrator,
  decodeRoute,
  decodeRouterConfig,
  decodeStep,
  isNativeMint,
  NATIVE_MINT_ADDRESS,
  ROUTE_ACCOUNT_SIZE,
  routeHolder,
  STEP_ACCOUNT_SIZE,
  stepReleaseAt,
  ZERO_ADDRESS,
} from './accounts.ts';
import {
  getCreateRouteInstruction,
  getInitConfigInstruction,
  getUpdateConfigInstruction,
  type RouteTerms,
} from './instructions.ts';
import { findRouteAddresses, findRoutePda } from './pda.ts';

const addresses = async (n: number) =>
  (await Promise.all(Array.from({ length: n }, () => generateKeyPairSigner()))).map((s) => s.address);
const enc = getAddressEncoder();
const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

test('CreateRoute data follows the program struct: 192 bytes, fields at their C offsets', async () => {
  const [keeper, recipient, recipientToken, integratorWallet, a, b, c, d, e, f] = (await addresses(
    10,
  )) as Address[];
  const terms: RouteTerms = {
    routeId: 0x0102030405060708n,
    hopCount: 7,
    amount: 5_000_000_001n,
    percentFeeBps: 35,
    integratorShareBps: 2500,
    flatFeePerHopLamports: 10_000n,
    firstReleaseAt: 1_767_225_660n,
    intervalSecs: 45,
    deadlineAt: 1_767_300_000n,
    keeper: keeper!,
    recipient: recipient!,
    recipientToken: recipientToken!,
    integratorWallet: integratorWallet!,
    screeningRequired: true,
    maxDepositLamports: 2_000_000n,
  };
  const ix = getCreateRouteInstruction({
    source: createNoopSigner(a!),
    route: [b!, 254 as never],
    custody: [c!, 253 as never],
    sourceToken: d!,
    mint: e!,
    config: f!,
    platformFeeToken: f!,
    integratorFeeToken: f!,
    hops: [],
    terms,
  });
  const data = new Uint8Array(ix.data!);
  const v = view(data);
  assert.equal(data.length, 192);
  assert.deepEqual([...data.slice(0, 6)], [3, 254, 253, 7, 1, 0]);
  assert.equal(v.getUint16(6, true), 35);
  assert.equal(v.getUint16(8, true), 2500);
  assert.equal(v.getUint32(12, true), 45);
  assert.equal(v.getBigUint64(16, true), 0x0102030405060708n);
  assert.equal(v.getBigUint64(24, true), 5_000_000_001n);
  assert.equal(v.getBigUint64(32, true), 10_000n);
  assert.equal(v.getBigInt64(40, true), 1_767_225_660n);
  assert.equal(v.getBigInt64(48, true), 1_767_300_000n);
  assert.deepEqual(data.slice(56, 88), enc.encode(keeper!));
  assert.deepEqual(data.slice(88, 120), enc.encode(recipient!));
  assert.deepEqual(data.slice(120, 152), enc.encode(recipientToken!));
  assert.deepEqual(data.slice(152, 184), enc.encode(integratorWallet!));
  assert.equal(v.getBigUint64(184, true), 2_000_000n);
  assert.equal(ix.accounts!.length, 10);

  // A native-mint route names no recipient token account: the program reads 32 zero bytes.
  const native = getCreateRouteInstruction({
    source: createNoopSigner(a!),
    route: [b!, 254 as never],
    custody: [c!, 253 as never],
    sourceToken: d!,
    mint: NATIVE_MINT_ADDRESS,
    config: f!,
    platformFeeToken: f!,
    integratorFeeToken: f!,
    hops: [],
    terms: { ...terms, recipientToken: null },
  });
  assert.deepEqual(new Uint8Array(native.data!).slice(120, 152), new Uint8Array(32));
  assert.deepEqual(new Uint8Array(native.data!).slice(88, 120), enc.encode(recipient!));
});

test('config instructions follow the program structs', async () => {
  const [admin, config, programData, screener, platform] = (await addresses(5)) as Address[];
  const init = getInitConfigInstruction({
    admin: createNoopSigner(admin!),
    config: [config!, 251 as never],
    programData: programData!,
    screeningAuthority: screener!,
    platformWallet: platform!,
    screeningDepositLamports: 2_000_000n,
  });
  const data = new Uint8Array(init.data!);
  assert.equal(data.length, 80);
  assert.deepEqual([...data.slice(0, 2)], [0, 251]);
  assert.equal(view(data).getBigUint64(8, true), 2_000_000n);
  assert.deepEqual(data.slice(16, 48), enc.encode(screener!));
  const update = getUpdateConfigInstruction({
    admin: createNoopSigner(admin!),
    config: config!,
    newAdmin: platform!,
    screeningAuthority: screener!,
    platformWallet: platform!,
    screeningDepositLamports: 1n,
  });
  assert.equal(update.data!.length, 112);
  assert.deepEqual(new Uint8Array(update.data!).slice(16, 48), enc.encode(platform!));
});

function routeBytes(fields: { source: Address; custody: Address; recipientToken: Address; hops: Address[] }) {
  const data = new Uint8Array(ROUTE_ACCOUNT_SIZE);
  const v = view(data);
  data.set(new TextEncoder().encode('TR\0ROUTE'), 0);
  data.set([1, 1, 3, 2, 1, 255, 254, 2], 8); // version, active, 3 steps, 2 hops, next step 1, bumps, verified
  v.setUint16(16, 0b111, true);
  v.setUint16(18, 0b111, true);
  data[20] = 1;
  v.setBigUint64(24, 42n, true);
  data.set(enc.encode(fields.source), 32);
  data.set(enc.encode(fields.recipientToken), 128);
  data.set(enc.encode(fields.custody), 192);
  v.setBigUint64(352, 1000n, true);
  v.setBigUint64(360, 990n, true);
  v.setBigInt64(416, 100n, true); // first release
  v.setBigInt64(424, 30n, true); // interval
  for (const [i, h] of fields.hops.entries()) data.set(enc.encode(h), 448 + 32 * i);
  return data;
}

test('route accounts decode field by field; holders and release times follow', async () => {
  const [source, custody, recipientToken, h0, h1] = (await addresses(5)) as Address[];
  const route = decodeRoute(
    routeBytes({ source: source!, custody: custody!, recipientToken: recipientToken!, hops: [h0!, h1!] }),
  );
  assert.equal(route.status, 'active');
  assert.equal(route.screening, 'verified');
  assert.equal(route.hopCount, 3);
  assert.equal(route.nextStep, 1);
  assert.equal(route.inOrchestrator, true);
  assert.equal(route.routeId, 42n);
  assert.equal(route.source, source);
  assert.equal(route.amount, 1000n);
  assert.equal(route.netAmount, 990n);
  assert.deepEqual(route.hops, [h0, h1]);
  assert.deepEqual(
    [0, 1, 2, 3].map((i) => routeHolder(route, i)),
    [custody, h0, h1, recipientToken],
  );
  assert.deepEqual(
    [0, 1, 2].map((i) => stepReleaseAt(route, i)),
    [100n, 130n, 160n],
  );
  assert.throws(() => decodeRoute(new Uint8Array(ROUTE_ACCOUNT_SIZE)), /not a route account/);
  assert.throws(() => decodeRoute(new Uint8Array(10)), /expected 736 bytes of route account data, got 10/);
});

test('a native-mint route has no recipient token account: its last holder is the recipient wallet', async () => {
  const [source, custody, recipient, h0, h1] = (await addresses(5)) as Address[];
  const data = routeBytes({
    source: source!,
    custody: custody!,
    recipientToken: ZERO_ADDRESS,
    hops: [h0!, h1!],
  });
  data.set(enc.encode(NATIVE_MINT_ADDRESS), 64);
  data.set(enc.encode(recipient!), 96);
  const route = decodeRoute(data);
  assert.equal(route.mint, NATIVE_MINT_ADDRESS);
  assert.equal(isNativeMint(route.mint), true);
  assert.equal(isNativeMint(custody!), false);
  assert.equal(route.recipient, recipient);
  assert.equal(route.recipientToken, null);
  assert.deepEqual(
    [0, 1, 2, 3].map((i) => routeHolder(route, i)),
    [custody, h0, h1, recipient],
  );
});

test('step, orchestrator and config accounts decode', async () => {
  const [route, source] = (await addresses(2)) as Address[];
  const step = new Uint8Array(STEP_ACCOUNT_SIZE);
  step.set(new TextEncoder().encode('TR\0\0STEP'), 0);
  step.set(enc.encode(route!), 8);
  step.set([4, 250, 1], 40);
  view(step).setBigInt64(48, 123n, true);
  view(step).setBigUint64(56, 990n, true);
  view(step).setBigUint64(64, 77n, true);
  assert.deepEqual(decodeStep(step), {
    route,
    index: 4,
    bump: 250,
    status: 'executed',
    executedAt: 123n,
    amount: 990n,
    slot: 77n,
  });
  const orchestrator = new Uint8Array(56);
  orchestrator.set(new TextEncoder().encode('TR\0\0ORCH'), 0);
  orchestrator.set(enc.encode(source!), 8);
  view(orchestrator).setUint32(40, 2, true);
  orchestrator[44] = 253;
  view(orchestrator).setBigUint64(48, 5n, true);
  assert.deepEqual(decodeOrchestrator(orchestrator), { source, openRoutes: 2, bump: 253, routesTotal: 5n });
  assert.throws(() => decodeRouterConfig(orchestrator), /expected 120 bytes of config account data, got 56/);
});

test('route addresses are derived per source and route id, one step state per hop', async () => {
  const [source] = (await addresses(1)) as Address[];
  const a = await findRouteAddresses({ source: source!, routeId: 1n, hopCount: 10 });
  const b = await findRouteAddresses({ source: source!, routeId: 2n, hopCount: 3 });
  assert.equal(a.steps.length, 10);
  assert.equal(b.steps.length, 3);
  assert.notEqual(a.route[0], b.route[0]);
  assert.equal(a.orchestrator[0], b.orchestrator[0]);
  assert.deepEqual(await findRoutePda(source!, 1n), a.route);
  assert.equal(new Set([a.route[0], a.custody[0], ...a.steps.map(([s]) => s)]).size, 12);
});
