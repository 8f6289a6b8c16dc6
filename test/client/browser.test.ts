import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Address, createSolanaRpc, generateKeyPairSigner, type Signature } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { Browser, Page } from 'playwright-core';
import { decodeRouteAccount, findRouteAddress } from '../../clients/typescript/src/index.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { browserUnavailable, bundleForBrowser, launchBrowser } from '../helpers/browser.ts';
import type { WalletPage } from './browser/wallet-page.ts';
import { listen } from './helpers.ts';

const PAGE =
  '<!doctype html><meta charset="utf-8"><title>Wallet</title><script type="module" src="/wallet-page.js"></script>';

/** Runs of equal entries as one: the client may report again while the service's node catches up. */
const outline = (entries: readonly string[]) =>
  entries.filter((entry, index) => entry !== entries[index - 1]);

/** The headers of `headers` named in `names`, those present. */
function pick(headers: IncomingHttpHeaders | Headers, names: readonly string[]): Record<string, string> {
  const value = (name: string) =>
    headers instanceof Headers ? headers.get(name) : (headers[name] as string | undefined);
  return Object.fromEntries(names.flatMap((name) => (value(name) ? [[name, value(name)!]] : [])));
}

/**
 * The integrator's backend: it serves the wallet page and its bundle, and passes the page's
 * `/api/v1/transfers` calls on to the service with the API key added, as the guide tells
 * integrators to (the page never holds the key). `calls` records what it passed on, `pageKeys`
 * any API key a request of the page carried.
 */
async function startBackend(input: { script: string; service: string; apiKey: string }) {
  const calls: string[] = [];
  const pageKeys: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    if (request.method === 'GET' && path === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
    } else if (request.method === 'GET' && path === '/wallet-page.js') {
      response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(input.script);
    } else if (path.startsWith('/api/v1/transfers')) {
      calls.push(`${request.method} ${path}`);
      if (request.headers['x-api-key'] !== undefined) pageKeys.push(String(request.headers['x-api-key']));
      (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        const answer = await fetch(new URL(path, input.service), {
          method: request.method ?? 'GET',
          headers: {
            ...pick(request.headers, ['content-type', 'idempotency-key']),
            'x-api-key': input.apiKey,
          },
          ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        });
        response
          .writeHead(answer.status, pick(answer.headers, ['content-type', 'retry-after', 'x-request-id']))
          .end(Buffer.from(await answer.arrayBuffer()));
      })().catch(() => response.writeHead(502).end());
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    pageKeys,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('the client in a browser: a wallet front end in Chromium signs and broadcasts the bundle', {
  skip: browserUnavailable(),
}, () => {
  let t: TestApp;
  let caller: Caller;
  let backend: Awaited<ReturnType<typeof startBackend>>;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  before(async () => {
    const script = await bundleForBrowser('test/client/browser/wallet-page.ts');
    assert.deepEqual(script.nodeImports, []);
    t = await createTestApp();
    caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
    backend = await startBackend({ script: script.code, service: await listen(t), apiKey: caller.key });
    browser = await launchBrowser();
    page = await browser.newPage();
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(backend.url);
    await page
      .waitForFunction(() => 'wallet' in globalThis)
      .catch((error: Error) => {
        throw new Error(`the wallet page did not load (${pageErrors.join('; ') || error.message})`);
      });
  });
  after(async () => {
    await browser?.close();
    await backend?.close();
    await t?.close();
  });

  test('native SOL from a keypair held in the page: the route is deployed on chain and the service has every signature', async () => {
    const wallet = (await page.evaluate(
      () => (globalThis as unknown as { wallet: WalletPage }).wallet.address,
    )) as Address;
    await t.chain.cheats.airdrop(wallet, 5_000_000_000n);
    const recipient = (await generateKeyPairSigner()).address;
    const amount = 2_000_000_000n;
    const terms = { tokenMint: SOL_MINT, amountRaw: String(amount), hops: 3 };
    const estimate = (await caller.post('/api/v1/transfers/estimate', terms)).json();
    const [feeAccount] = await findAssociatedTokenPda({
      owner: t.platform.configAddress,
      mint: SOL_MINT as Address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    const feeAccountExisted = (await t.chain.chain.getAccount(feeAccount)) !== null;
    const tokenRent = BigInt(await t.chain.chain.getMinimumBalanceForRentExemption(165));
    const lamportsBefore = BigInt(await t.chain.chain.getBalance(wallet));

    const { result, progress } = await page.evaluate(
      ([endpoints, order]) => (globalThis as unknown as { wallet: WalletPage }).wallet.send(endpoints, order),
      [
        { backend: backend.url, rpc: t.chain.rpcUrl },
        { ...terms, amountTokens: '2', arrivalSeconds: 60, recipientWallet: recipient },
      ] as const,
    );
    const id = result.transfer.id;
    assert.deepEqual(outline(progress), [
      'prepared',
      'confirmed:keeperFunding',
      'keeper_funding_reported',
      'confirmed:routeInit',
      'confirmed:orchestratorInit',
      'confirmed:sessionInit',
      'reported',
    ]);
    // Every API call of the page went through the backend, which added the key the page lacks.
    assert.deepEqual(backend.pageKeys, []);
    assert.deepEqual(outline(backend.calls), [
      'POST /api/v1/transfers',
      `POST /api/v1/transfers/${id}/prepare`,
      `POST /api/v1/transfers/${id}/confirm-broadcast`,
    ]);

    // The service saw the broadcast: the transfer is deployed, with the signatures the page sent.
    const transfer = (await caller.get(`/api/v1/transfers/${id}`)).json();
    assert.equal(transfer.status, 'processing');
    assert.equal(transfer.phase, 'executing');
    assert.equal(transfer.sourceOwner, wallet);
    const sent = result.signatures;
    assert.deepEqual(transfer.signatures.routeInit, sent.routeInitSignatures);
    assert.deepEqual(transfer.signatures.sessionInit, sent.sessionInitSignatures);
    const { rows } = await t.database.db.query<{ keeper: string; orchestrator: string }>(
      'SELECT keeper_funding_signature AS keeper, orchestrator_signature AS orchestrator FROM transfers WHERE id = $1',
      [id],
    );
    assert.deepEqual(rows, [
      { keeper: sent.keeperFundingSignature, orchestrator: sent.orchestratorInitSignature },
    ]);

    // On chain: each transaction the page sent landed, and the route holds the amount.
    const signatures = [
      sent.keeperFundingSignature,
      ...sent.routeInitSignatures,
      sent.orchestratorInitSignature,
      ...(sent.sessionInitSignatures ?? []),
    ] as Signature[];
    const { value: statuses } = await createSolanaRpc(t.chain.rpcUrl).getSignatureStatuses(signatures).send();
    assert.deepEqual(
      statuses.map((status) => status?.err),
      signatures.map(() => null),
    );
    const routeAddress = await findRouteAddress(t.platform.programAddress, wallet, id);
    const route = decodeRouteAccount((await t.chain.chain.getAccount(routeAddress))!.data);
    assert.ok(route, 'a route account at the route address');
    assert.equal(route.status, 'active');
    assert.equal(route.source, wallet);
    assert.equal(route.recipient, recipient);
    assert.equal(route.hopCount, 3);
    assert.equal(route.amount, amount);
    assert.equal(route.netAmount, BigInt(estimate.tokens.netDeliveredRaw));
    // The custody holds the amount; the 2 intermediate accounts of 3 hops are open and empty.
    assert.equal((await t.chain.chain.getTokenAccount(route.custody))?.amount, amount);
    assert.equal(route.hops.length, 2);
    for (const hop of route.hops) assert.equal((await t.chain.chain.getTokenAccount(hop))?.amount, 0n);
    // The wallet paid the estimate (less the fee account when it existed) and the amount; the
    // estimate counts no wrapped-SOL account: the bundle opened and closed one, its rent back.
    const spent = lamportsBefore - BigInt(await t.chain.chain.getBalance(wallet));
    const required = BigInt(estimate.sol.requiredSolUpFrontLamports) - (feeAccountExisted ? tokenRent : 0n);
    assert.equal(spent, required + amount);
  });
});
