// The local chain's data directory: restarts resume exactly, writes are write-behind and atomic,
// damaged or partial files are handled as a crash would leave them.
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { generateKeyPairSigner, lamports } from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import { ChainDataError, startLocalChain } from '../src/index.ts';
import { manualClock, signTransaction, slotsMs } from '../src/testing.ts';
import { tempDir, walletOf } from './helpers.ts';

const SOL = 1_000_000_000n;

test('a restart resumes accounts, history, blockhashes, slot and time; time never goes back', async (t) => {
  const data = await tempDir('chain-restart');
  const clock = manualClock(new Date('2026-06-01T00:00:00Z'));
  let local = await startLocalChain({ dataDir: data.dir, rpcPort: 0, clock, autoTick: false });
  const payer = await generateKeyPairSigner();
  const to = (await generateKeyPairSigner()).address;
  const airdrop = await local.cheats.airdrop(payer.address, 2n * SOL);
  await local.cheats.timeTravel({ absoluteTimestamp: clock.now().getTime() + 86_400_000 });
  clock.advance(slotsMs(10));
  const before = await walletOf(local).clock();
  const signedEarlier = await signTransaction(
    payer,
    [getTransferSolInstruction({ source: payer, destination: to, amount: lamports(SOL) })],
    await walletOf(local).blockhash(),
  );
  await local.close();

  // The wall clock did not move while the chain was down; chain time must not fall back to it.
  local = await startLocalChain({ dataDir: data.dir, rpcPort: 0, clock, autoTick: false });
  t.after(() => local.close());
  t.after(data.cleanup);
  const wallet = walletOf(local);
  assert.deepEqual(await wallet.clock(), before);
  assert.equal(await wallet.balance(payer.address), 2n * SOL);
  assert.equal((await wallet.transaction(airdrop))?.slot, 0n);
  // A transaction signed before the restart with a still-valid blockhash lands after it.
  assert.equal(await wallet.send(signedEarlier), signedEarlier.signature);
  assert.equal(await wallet.balance(to), SOL);
  clock.advance(slotsMs(5));
  assert.equal((await wallet.clock()).slot, before.slot + 5n);
});

test('blocks keep their times across a restart; the next slot starts once the downtime is over', async (t) => {
  const data = await tempDir('chain-block-times');
  const clock = manualClock(new Date('2026-06-01T00:00:00Z'));
  let local = await startLocalChain({ dataDir: data.dir, rpcPort: 0, clock, autoTick: false });
  // A tenth of the way into slot 5.
  clock.advance(slotsMs(5) + 40);
  const slot = local.ledger.slot();
  const blockTimes = () => Array.from({ length: slot + 1 }, (_, s) => local.ledger.block(s).blockTime);
  const before = blockTimes();
  await local.close();

  clock.advance(3_600_000);
  local = await startLocalChain({ dataDir: data.dir, rpcPort: 0, clock, autoTick: false });
  t.after(() => local.close());
  t.after(data.cleanup);
  assert.equal(local.ledger.slot(), slot);
  assert.deepEqual(blockTimes(), before);
  // The rest of slot 5 runs after the restart.
  clock.advance(slotsMs(1) - 41);
  assert.equal(local.ledger.slot(), slot);
  clock.advance(1);
  assert.equal(local.ledger.slot(), slot + 1);
  assert.equal(local.ledger.block(slot + 1).blockTime, Math.floor(clock.now().getTime() / 1000));
});

test('saving is write-behind: nothing is written until a flush, then everything is', async (t) => {
  const data = await tempDir('chain-behind');
  t.after(data.cleanup);
  const local = await startLocalChain({
    dataDir: data.dir,
    rpcPort: 0,
    autoTick: false,
    flushIntervalMs: 3_600_000,
  });
  t.after(() => local.close());
  const stateBefore = await readFile(join(data.dir, 'state.bin'));
  const wallet = (await generateKeyPairSigner()).address;
  const signature = await local.cheats.airdrop(wallet, SOL);
  assert.deepEqual(await readFile(join(data.dir, 'state.bin')), stateBefore);
  await assert.rejects(readFile(join(data.dir, 'transactions.jsonl')), { code: 'ENOENT' });
  await local.flush();
  assert.notDeepEqual(await readFile(join(data.dir, 'state.bin')), stateBefore);
  const lines = (await readFile(join(data.dir, 'transactions.jsonl'), 'utf8')).trim().split('\n');
  assert.equal(lines.length, 1);
  assert.equal(JSON.parse(lines[0] as string).signature, signature);
});

test('a data directory serves one chain at a time', async (t) => {
  const data = await tempDir('chain-lock');
  t.after(data.cleanup);
  const first = await startLocalChain({ dataDir: data.dir, rpcPort: 0, autoTick: false });
  await assert.rejects(startLocalChain({ dataDir: data.dir, rpcPort: 0, autoTick: false }), ChainDataError);
  await first.close();
  const second = await startLocalChain({ dataDir: data.dir, rpcPort: 0, autoTick: false });
  await second.close();
});

test('a damaged snapshot is refused rather than silently replaced', async (t) => {
  const data = await tempDir('chain-damaged');
  t.after(data.cleanup);
  const local = await startLocalChain({ dataDir: data.dir, rpcPort: 0, autoTick: false });
  await local.close();
  const state = await readFile(join(data.dir, 'state.bin'));
  state[state.length - 10] = (state[state.length - 10] as number) ^ 0xff;
  await writeFile(join(data.dir, 'state.bin'), state);
  await assert.rejects(
    startLocalChain({ dataDir: data.dir, rpcPort: 0, autoTick: false }),
    /fails its checksum/,
  );
});

test('what a crash leaves behind (temp files, records past the snapshot, a torn line) is dropped', async (t) => {
  const data = await tempDir('chain-crash');
  let local = await startLocalChain({ dataDir: data.dir, rpcPort: 0, autoTick: false });
  const wallet = (await generateKeyPairSigner()).address;
  const kept = await local.cheats.airdrop(wallet, SOL);
  await local.close();
  const log = join(data.dir, 'transactions.jsonl');
  const line = JSON.parse((await readFile(log, 'utf8')).trim());
  await appendFile(log, `${JSON.stringify({ ...line, seq: line.seq + 1, signature: 'ghost' })}\n{"seq":`);
  await writeFile(join(data.dir, 'state.bin.tmp'), 'half a snapshot');

  local = await startLocalChain({ dataDir: data.dir, rpcPort: 0, autoTick: false });
  t.after(() => local.close());
  t.after(data.cleanup);
  assert.equal((await walletOf(local).transaction(kept))?.meta?.err, null);
  assert.equal(await walletOf(local).balance(wallet), SOL);
  const lines = (await readFile(log, 'utf8')).trim().split('\n');
  assert.deepEqual(
    lines.map((l) => JSON.parse(l).signature),
    [kept],
  );
  await assert.rejects(readFile(join(data.dir, 'state.bin.tmp')), { code: 'ENOENT' });
});
