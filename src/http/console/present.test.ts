import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assetName, duration, eventLabel, explorerUrl, isLive, lateness, sol, utc } from './present.ts';
import { isConsolePath, signInLocation } from './session.ts';

test('amounts, times and durations as the console words them', () => {
  assert.equal(sol(2_039_280n), '0.00203928 SOL');
  assert.equal(sol(0), '0 SOL');
  assert.equal(sol(12_345_678_901_234_567_890n), '12345678901.23456789 SOL', 'exact beyond 2^53');
  assert.equal(utc(new Date('2026-06-01T12:00:05.731Z')), '2026-06-01 12:00:05 UTC');
  assert.deepEqual([0, 45, 60, 185, 3600, 7380].map(duration), [
    '0 s',
    '45 s',
    '1 min',
    '3 min 5 s',
    '1 h',
    '2 h 3 min',
  ]);
  assert.deepEqual([-3, 0, 1, 75].map(lateness), ['3 s early', 'on time', '1 s late', '1 min 15 s late']);
  assert.equal(assetName('So11111111111111111111111111111111111111112', null), 'SOL');
  assert.equal(assetName('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', null), 'EPjF…Dt1v');
  assert.equal(assetName('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 'USDC'), 'USDC');
});

test('a transfer’s page keeps refreshing until the service has nothing more to do on its own', () => {
  assert.deepEqual((['quote', 'awaiting_signature', 'processing'] as const).map(isLive), [true, true, true]);
  assert.deepEqual((['completed', 'failed', 'expired', 'refunded'] as const).map(isLive), [
    false,
    false,
    false,
    false,
  ]);
});

test('events in words', () => {
  assert.equal(eventLabel('transfer.hop_complete', { hopsCompleted: 2, hops: 3 }), 'Hop 2 of 3 landed');
  assert.equal(eventLabel('transfer.phase_changed', { phase: 'settled' }), 'Phase changed to settled');
  assert.equal(eventLabel('transfer.something_new', {}), 'transfer.something_new');
});

test('explorer links name the cluster; the local chain has none', () => {
  const signature =
    '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW';
  assert.equal(explorerUrl('mainnet', signature), `https://explorer.solana.com/tx/${signature}`);
  assert.equal(
    explorerUrl('devnet', signature),
    `https://explorer.solana.com/tx/${signature}?cluster=devnet`,
  );
  assert.equal(
    explorerUrl('testnet', signature),
    `https://explorer.solana.com/tx/${signature}?cluster=testnet`,
  );
  assert.equal(explorerUrl('localnet', signature), null);
});

test('after signing in, the console returns only to its own pages', () => {
  assert.equal(isConsolePath('/dashboard/transfers/12'), true);
  assert.equal(isConsolePath('/dashboard/transfers?status=failed&cursor=bzI1'), true);
  for (const elsewhere of [
    'https://elsewhere.example/',
    '//elsewhere.example/dashboard',
    '/api/v1/transfers',
    '/dashboard//x',
    '/dashboardx',
  ]) {
    assert.equal(isConsolePath(elsewhere), false, elsewhere);
  }
  assert.equal(
    signInLocation('revoked', '/dashboard/transfers/12'),
    '/dashboard/sign-in?ended=revoked&next=%2Fdashboard%2Ftransfers%2F12',
  );
  assert.equal(signInLocation(undefined, 'https://elsewhere.example/'), '/dashboard/sign-in');
});
