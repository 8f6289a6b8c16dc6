// The mainnet profile through its endpoint: the misbehaving front answers some requests with 429
// and Retry-After, sockets are cut, the legacy Token program runs, and a sent transaction's status
// climbs from processed to confirmed as slots pass on the wall clock.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { generateKeyPairSigner, lamports } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { WebSocket } from 'ws';
import { chainProfile, MAINNET_WEATHER } from '../src/profile.ts';
import { type LocalChain, startLocalChain } from '../src/start.ts';
import { rpcCall, signTransaction } from '../src/testing.ts';

describe('the mainnet profile through its endpoint', () => {
  let chain: LocalChain;
  before(async () => {
    const profile = chainProfile('mainnet', 'endpoint-test');
    chain = await startLocalChain({
      rpcPort: 0,
      wsPort: null,
      profile: {
        ...profile,
        weather: { ...MAINNET_WEATHER, rateLimited: 0.3, held: 0, socketDropMeanMs: 200 },
      },
    });
  });
  after(() => chain.close());

  test('the front throttles some requests with 429 and Retry-After, and answers the rest', async () => {
    const statuses = new Map<number, number>();
    let retryAfter: string | null = null;
    for (let i = 0; i < 40; i++) {
      const response = await fetch(chain.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: i, method: 'getSlot', params: [] }),
      });
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      if (response.status === 429) retryAfter = response.headers.get('retry-after');
      await response.body?.cancel();
    }
    assert.ok((statuses.get(429) ?? 0) > 0 && (statuses.get(200) ?? 0) > 0, JSON.stringify([...statuses]));
    assert.equal(retryAfter, '1');
  });

  test('a WebSocket connection is cut after a while, as a provider cuts them', async () => {
    const socket = new WebSocket(chain.wsUrl);
    await new Promise((resolve) => socket.once('open', resolve));
    const closed = await Promise.race([
      new Promise((resolve) => socket.once('close', () => resolve(true))),
      delay(5_000, false),
    ]);
    assert.equal(closed, true);
  });

  test('now and then the endpoint answers as a node a few slots behind does', async () => {
    const lagging = await startLocalChain({
      rpcPort: 0,
      wsPort: null,
      profile: {
        ...chainProfile('mainnet', 'stale-test'),
        weather: { ...MAINNET_WEATHER, rateLimited: 0, unavailable: 0, held: 0, staleEveryMs: 1_000 },
      },
    });
    try {
      // The same slot answered for longer than three slots last: the node had fallen behind.
      let longest = 0;
      let since = Date.now();
      let last = -1;
      for (const end = Date.now() + 6_000; Date.now() < end; ) {
        const slot = (await rpcCall(lagging.rpcUrl, 'getSlot', [{ commitment: 'processed' }])) as number;
        if (slot !== last) {
          last = slot;
          since = Date.now();
        }
        longest = Math.max(longest, Date.now() - since);
        await delay(50);
      }
      assert.ok(longest >= 3 * lagging.ledger.slotMs, `the longest stale answer lasted ${longest} ms`);
    } finally {
      await lagging.close();
    }
  });

  test('a signature subscription at `confirmed` is told once the transaction is confirmed, not when processed', async () => {
    const quiet = await startLocalChain({
      rpcPort: 0,
      wsPort: null,
      profile: { ...chainProfile('mainnet', 'subscription-test'), weather: undefined },
    });
    try {
      const payer = await generateKeyPairSigner();
      await quiet.cheats.airdrop(payer.address, 2_000_000_000n);
      const lifetime = quiet.ledger.latestBlockhash('processed');
      const sent = await signTransaction(
        payer,
        [getTransferSolInstruction({ source: payer, destination: payer.address, amount: lamports(1n) })],
        { blockhash: lifetime.blockhash, lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight) },
      );
      const socket = new WebSocket(quiet.wsUrl);
      await new Promise((resolve) => socket.once('open', resolve));
      const notified = new Promise<string>((resolve) =>
        socket.on('message', (data) => {
          const message = JSON.parse(data.toString()) as { method?: string };
          if (message.method !== 'signatureNotification') return;
          const record = quiet.ledger.signatureStatus(sent.signature, false);
          resolve(record ? quiet.ledger.confirmationOf(record.slot).confirmationStatus : 'unknown');
        }),
      );
      socket.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'signatureSubscribe',
          params: [sent.signature, { commitment: 'confirmed' }],
        }),
      );
      // Sent until a leader has it (some sends are dropped).
      const sending = setInterval(() => quiet.ledger.submit(sent.bytes, { preflight: false }), 300);
      try {
        assert.notEqual(await notified, 'processed');
      } finally {
        clearInterval(sending);
        socket.close();
      }
    } finally {
      await quiet.close();
    }
  });

  test('the legacy Token program runs at the Token program id (deployed there, where p-token is built in)', async () => {
    const { value } = (await rpcCall(chain.rpcUrl, 'getAccountInfo', [
      TOKEN_PROGRAM_ADDRESS,
      { encoding: 'base64' },
    ])) as {
      value: { owner: string; executable: boolean };
    };
    assert.deepEqual(value && [value.owner, value.executable], [
      'BPFLoaderUpgradeab1e11111111111111111111111',
      true,
    ]);
  });

  test('a transfer is processed, then confirmed; confirmed reads see it only then', async () => {
    const payer = await generateKeyPairSigner();
    const recipient = await generateKeyPairSigner();
    await chain.cheats.airdrop(payer.address, 2_000_000_000n);
    // The faucet's block must be confirmed before a confirmed blockhash and balance include it.
    for (;;) {
      const balance = (await rpcCall(chain.rpcUrl, 'getBalance', [
        payer.address,
        { commitment: 'confirmed' },
      ])) as {
        value: number;
      };
      if (balance.value > 0) break;
      await delay(100);
    }
    const { value: lifetime } = (await rpcCall(chain.rpcUrl, 'getLatestBlockhash', [
      { commitment: 'confirmed' },
    ])) as {
      value: { blockhash: string; lastValidBlockHeight: number };
    };
    const sent = await signTransaction(
      payer,
      [
        getTransferSolInstruction({
          source: payer,
          destination: recipient.address,
          amount: lamports(1_000_000_000n),
        }),
      ],
      { blockhash: lifetime.blockhash, lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight) },
    );
    const seen: string[] = [];
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      // Sent again each round, as a sender does while unconfirmed (a leader may have dropped it);
      // without preflight, which would refuse bytes that already ran.
      await rpcCall(chain.rpcUrl, 'sendTransaction', [
        sent.base64,
        { encoding: 'base64', skipPreflight: true },
      ]);
      const { value } = (await rpcCall(chain.rpcUrl, 'getSignatureStatuses', [[sent.signature]])) as {
        value: ({ confirmationStatus: string } | null)[];
      };
      const status = value[0]?.confirmationStatus;
      if (status && status !== seen.at(-1)) {
        const confirmed = (await rpcCall(chain.rpcUrl, 'getBalance', [
          recipient.address,
          { commitment: 'confirmed' },
        ])) as {
          value: number;
        };
        assert.equal(confirmed.value > 0, status !== 'processed', `a confirmed read while ${status}`);
        seen.push(status);
      }
      if (seen.at(-1) === 'confirmed') break;
      await delay(100);
    }
    assert.deepEqual(seen.slice(-1), ['confirmed'], `statuses seen: ${seen}`);
  });
});
