// The local JSON-RPC endpoint at the wire level: whole request/response bodies as validators shape
// them, cheat codes, and WebSocket confirmation through @solana/kit's own helpers.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { zstdDecompressSync } from 'node:zlib';
import {
  type Address,
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  createSolanaRpc,
  createSolanaRpcSubscriptions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64Decoder,
  getCompiledTransactionMessageEncoder,
  getSignatureFromTransaction,
  lamports,
  pipe,
  type Rpc,
  type RpcSubscriptions,
  type SolanaRpcApi,
  type SolanaRpcSubscriptionsApi,
  sendAndConfirmTransactionFactory,
  setTransactionMessageFeePayer,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from '@solana/kit';
import { getSetComputeUnitPriceInstruction } from '@solana-program/compute-budget';
import { getTransferSolInstruction } from '@solana-program/system';
import WebSocket from 'ws';
import { type LocalChain, startLocalChain } from '../src/index.ts';
import { manualClock, signTransaction, slotsMs } from '../src/testing.ts';

const SOL = 1_000_000_000n;
const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const clock = manualClock(new Date('2026-05-01T00:00:00Z'));
let local: LocalChain;
let url: string;

before(async () => {
  local = await startLocalChain({ rpcPort: 0, clock, autoTick: false });
  url = local.rpcUrl as string;
});
after(() => local.close());

async function post(body: unknown): Promise<{ status: number; text: string; json: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text, json: text ? parseExact(text) : undefined };
}

/** Parses JSON keeping integers beyond 2^53 exact (as bigints), as kit's client does. */
function parseExact(text: string): unknown {
  return JSON.parse(text, (_k, v, ctx?: { source?: string }) =>
    typeof v === 'number' && !Number.isSafeInteger(v) && /^\d+$/.test(ctx?.source ?? '')
      ? BigInt(ctx?.source as string)
      : v,
  );
}

async function call(method: string, params: unknown[] = []): Promise<unknown> {
  const { json } = await post({ jsonrpc: '2.0', id: 1, method, params });
  const body = json as { result?: unknown; error?: unknown };
  if (body.error) throw Object.assign(new Error('rpc error'), { body: body.error });
  return body.result;
}

async function callError(method: string, params: unknown[] = []): Promise<unknown> {
  const { json } = await post({ jsonrpc: '2.0', id: 7, method, params });
  return json;
}

const slotNow = () => local.ledger.slot();

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes raw HTTP on one connection and reads every answer until the server closes it. */
async function exchange(raw: string, { halfClose = false } = {}): Promise<RawAnswer[]> {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  if (halfClose) socket.end(raw);
  else socket.write(raw);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'close');
  let text = Buffer.concat(chunks).toString('latin1');
  const answers: RawAnswer[] = [];
  while (text.length > 0) {
    const headEnd = text.indexOf('\r\n\r\n');
    const [statusLine = '', ...lines] = text.slice(0, headEnd).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((line) => [
        line.slice(0, line.indexOf(':')).toLowerCase(),
        line.slice(line.indexOf(':') + 1).trim(),
      ]),
    );
    const length = Number(headers['content-length'] ?? 0);
    answers.push({
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: text.slice(headEnd + 4, headEnd + 4 + length),
    });
    text = text.slice(headEnd + 4 + length);
  }
  return answers;
}

function mintData(decimals: number, supply: bigint): string {
  const data = Buffer.alloc(82);
  data.writeBigUInt64LE(supply, 36);
  data[44] = decimals;
  data[45] = 1;
  return data.toString('hex');
}

describe('node-level methods', () => {
  test('health, version, genesis hash, slot and epoch info; CORS preflight', async () => {
    assert.equal(await call('getHealth'), 'ok');
    const version = (await call('getVersion')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(version).sort(), ['feature-set', 'solana-core']);
    assert.equal(version['solana-core'], '4.3.0');
    assert.equal(await call('getGenesisHash'), local.ledger.genesisHash);
    const slot = slotNow();
    assert.equal(await call('getSlot'), slot);
    assert.equal(await call('getBlockHeight'), slot);
    assert.deepEqual(await call('getEpochInfo'), {
      absoluteSlot: slot,
      blockHeight: slot,
      epoch: 0,
      slotIndex: slot,
      slotsInEpoch: 432000,
      transactionCount: local.ledger.epochInfo().transactionCount,
    });
    assert.deepEqual(
      await call('getRecentPrioritizationFees', [[TOKEN_PROGRAM]]),
      Array.from({ length: Math.min(150, slot + 1) }, (_, index) => ({
        prioritizationFee: 0,
        slot: slot - Math.min(149, slot) + index,
      })),
    );
    assert.deepEqual(
      await callError('getRecentPrioritizationFees', [Array.from({ length: 129 }, () => TOKEN_PROGRAM)]),
      { jsonrpc: '2.0', error: { code: -32602, message: 'Too many inputs provided; max 128' }, id: 7 },
    );
    const health = await fetch(`${url}/health`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), 'ok');
    // A page on another origin sends what @solana/kit's transport sends: JSON and its client header.
    const preflight = await fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://127.0.0.1:3000',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,solana-client',
      },
    });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
    const allowed = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/,\s*/);
    assert.ok(
      ['content-type', 'solana-client'].every((name) => allowed.includes(name)),
      allowed.join(', '),
    );
  });

  test('JSON-RPC errors have the standard codes and shapes', async () => {
    const raw = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{oops',
    });
    assert.deepEqual(await raw.json(), {
      jsonrpc: '2.0',
      error: { code: -32700, message: 'Parse error' },
      id: null,
    });
    assert.deepEqual(await callError('getNothing'), {
      jsonrpc: '2.0',
      error: { code: -32601, message: 'Method not found' },
      id: 7,
    });
    assert.deepEqual((await post({ id: 3, method: 'getSlot' })).json, {
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid request' },
      id: 3,
    });
    assert.deepEqual(await callError('getBalance', ['abc']), {
      jsonrpc: '2.0',
      error: { code: -32602, message: 'Invalid param: WrongSize' },
      id: 7,
    });
    assert.deepEqual(await callError('getBalance', ['0OIl']), {
      jsonrpc: '2.0',
      error: { code: -32602, message: 'Invalid param: Invalid' },
      id: 7,
    });
    const slot = slotNow();
    assert.deepEqual(await callError('getSlot', [{ minContextSlot: slot + 5 }]), {
      jsonrpc: '2.0',
      error: {
        code: -32016,
        message: 'Minimum context slot has not been reached',
        data: { contextSlot: slot },
      },
      id: 7,
    });
    const batch = await post([
      { jsonrpc: '2.0', id: 1, method: 'getHealth' },
      { jsonrpc: '2.0', id: 2, method: 'nope' },
      { jsonrpc: '2.0', method: 'getHealth' },
    ]);
    assert.deepEqual(batch.json, [
      { jsonrpc: '2.0', result: 'ok', id: 1 },
      { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 2 },
    ]);
    const notification = await post({ jsonrpc: '2.0', method: 'getHealth' });
    assert.equal(notification.status, 204);
    assert.equal(notification.text, '');
  });
});

describe('accounts', () => {
  test('getAccountInfo in every encoding, u64 values kept exact, data slices', async () => {
    const address = (await generateKeyPairSigner()).address;
    const owner = (await generateKeyPairSigner()).address;
    // JSON.stringify cannot write bigints: send the raw text, as kit does.
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"jsonrpc":"2.0","id":1,"method":"surfnet_setAccount","params":["${address}",{"lamports":18446744073709551615,"owner":"${owner}","data":"00010203deadbeef"}]}`,
    });
    assert.deepEqual(await response.json(), {
      jsonrpc: '2.0',
      result: { context: { apiVersion: '4.3.0', slot: slotNow() }, value: null },
      id: 1,
    });
    const balance = await post({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: [address] });
    assert.equal(
      balance.text,
      `{"jsonrpc":"2.0","result":{"context":{"apiVersion":"4.3.0","slot":${slotNow()}},"value":18446744073709551615},"id":1}`,
    );
    const base = { executable: false, owner, rentEpoch: 18446744073709551615n, space: 8 };
    const info = async (config: object) => {
      const { json } = await post({
        jsonrpc: '2.0',
        id: 1,
        method: 'getAccountInfo',
        params: [address, config],
      });
      return (json as { result: { value: { data: unknown } } }).result.value;
    };
    const base58 = getBase58Decoder().decode(Buffer.from('00010203deadbeef', 'hex'));
    assert.deepEqual(await info({}), { ...base, lamports: 18446744073709551615n, data: base58 });
    assert.deepEqual(await info({ encoding: 'base58' }), {
      ...base,
      lamports: 18446744073709551615n,
      data: [base58, 'base58'],
    });
    assert.deepEqual(await info({ encoding: 'base64' }), {
      ...base,
      lamports: 18446744073709551615n,
      data: ['AAECA96tvu8=', 'base64'],
    });
    assert.deepEqual(await info({ encoding: 'jsonParsed' }), {
      ...base,
      lamports: 18446744073709551615n,
      data: ['AAECA96tvu8=', 'base64'],
    });
    assert.deepEqual(await info({ encoding: 'base64', dataSlice: { offset: 4, length: 2 } }), {
      ...base,
      lamports: 18446744073709551615n,
      data: ['3q0=', 'base64'],
    });
    const zstd = (await info({ encoding: 'base64+zstd' })).data as [string, string];
    assert.equal(zstd[1], 'base64+zstd');
    assert.equal(zstdDecompressSync(Buffer.from(zstd[0], 'base64')).toString('hex'), '00010203deadbeef');
    assert.deepEqual(await call('getAccountInfo', [owner]), {
      context: { apiVersion: '4.3.0', slot: slotNow() },
      value: null,
    });
    // Past 128 bytes, base58 (the default encoding) is refused as validators refuse it.
    await call('surfnet_setAccount', [owner, { lamports: 1, data: '00'.repeat(129) }]);
    assert.deepEqual(await callError('getAccountInfo', [owner]), {
      jsonrpc: '2.0',
      error: {
        code: -32600,
        message: 'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
      },
      id: 7,
    });
  });

  test('jsonParsed mints, token accounts and programs; token cheat codes', async () => {
    const mint = (await generateKeyPairSigner()).address;
    const owner = (await generateKeyPairSigner()).address;
    await call('surfnet_setAccount', [
      mint,
      { lamports: 1_461_600, owner: TOKEN_PROGRAM, data: mintData(4, 90_000n) },
    ]);
    assert.deepEqual(await call('surfnet_setTokenAccount', [owner, mint, { amount: 12_345 }]), {
      context: { apiVersion: '4.3.0', slot: slotNow() },
      value: null,
    });
    const mintInfo = (await call('getAccountInfo', [mint, { encoding: 'jsonParsed' }])) as { value: unknown };
    assert.deepEqual(mintInfo.value, {
      data: {
        parsed: {
          info: {
            decimals: 4,
            freezeAuthority: null,
            isInitialized: true,
            mintAuthority: null,
            supply: '90000',
          },
          type: 'mint',
        },
        program: 'spl-token',
        space: 82,
      },
      executable: false,
      lamports: 1461600,
      owner: TOKEN_PROGRAM,
      rentEpoch: 18446744073709551615n,
      space: 82,
    });
    const owned = (await call('getTokenAccountsByOwner', [
      owner,
      { programId: TOKEN_PROGRAM },
      { encoding: 'jsonParsed' },
    ])) as {
      value: { pubkey: string; account: { data: unknown; lamports: number } }[];
    };
    assert.equal(owned.value.length, 1);
    const ata = owned.value[0]?.pubkey as string;
    assert.deepEqual(owned.value[0]?.account.data, {
      parsed: {
        info: {
          isNative: false,
          mint,
          owner,
          state: 'initialized',
          tokenAmount: { amount: '12345', decimals: 4, uiAmount: 1.2345, uiAmountString: '1.2345' },
        },
        type: 'account',
      },
      program: 'spl-token',
      space: 165,
    });
    assert.equal(owned.value[0]?.account.lamports, 2_039_280);
    assert.deepEqual(((await call('getTokenAccountBalance', [ata])) as { value: unknown }).value, {
      amount: '12345',
      decimals: 4,
      uiAmount: 1.2345,
      uiAmountString: '1.2345',
    });
    assert.deepEqual(((await call('getTokenSupply', [mint])) as { value: unknown }).value, {
      amount: '90000',
      decimals: 4,
      uiAmount: 9,
      uiAmountString: '9',
    });
    await call('surfnet_setTokenAccount', [owner, mint, { state: 'frozen' }]);
    const frozen = (await call('getAccountInfo', [ata, { encoding: 'jsonParsed' }])) as {
      value: { data: { parsed: { info: { state: string; tokenAmount: { amount: string } } } } };
    };
    assert.equal(frozen.value.data.parsed.info.state, 'frozen');
    assert.equal(frozen.value.data.parsed.info.tokenAmount.amount, '12345');
    assert.deepEqual(await callError('surfnet_setTokenAccount', [owner, owner, { amount: 1 }]), {
      jsonrpc: '2.0',
      error: { code: -32602, message: 'Invalid param: the mint does not exist or is not a mint' },
      id: 7,
    });
    assert.deepEqual(await callError('getTokenAccountBalance', [mint]), {
      jsonrpc: '2.0',
      error: { code: -32602, message: 'Invalid param: not a Token account' },
      id: 7,
    });
    const program = (await call('getAccountInfo', [TOKEN_PROGRAM, { encoding: 'jsonParsed' }])) as {
      value: {
        data: { program: string; parsed: { type: string; info: { programData: string } } };
        executable: boolean;
      };
    };
    assert.equal(program.value.executable, true);
    assert.equal(program.value.data.program, 'bpf-upgradeable-loader');
    assert.equal(program.value.data.parsed.type, 'program');
  });
});

describe('transactions', () => {
  test('preflight failures carry the validator error object; getTransaction follows the version rule', async () => {
    const payer = await generateKeyPairSigner();
    await local.cheats.airdrop(payer.address, SOL);
    const { value: lifetime } = (await call('getLatestBlockhash')) as {
      value: { blockhash: string; lastValidBlockHeight: number };
    };
    const tooMuch = await signTransaction(
      payer,
      [
        getTransferSolInstruction({
          source: payer,
          destination: (await generateKeyPairSigner()).address,
          amount: lamports(2n * SOL),
        }),
      ],
      { blockhash: lifetime.blockhash, lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight) },
    );
    assert.deepEqual(await callError('sendTransaction', [tooMuch.base64, { encoding: 'base64' }]), {
      jsonrpc: '2.0',
      error: {
        code: -32002,
        message: 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1',
        data: {
          accounts: null,
          err: { InstructionError: [0, { Custom: 1 }] },
          fee: null,
          innerInstructions: null,
          loadedAccountsDataSize: null,
          loadedAddresses: null,
          logs: [
            'Program 11111111111111111111111111111111 invoke [1]',
            `Transfer: insufficient lamports ${SOL - 5000n}, need ${2n * SOL}`,
            'Program 11111111111111111111111111111111 failed: custom program error: 0x1',
          ],
          postBalances: null,
          postTokenBalances: null,
          preBalances: null,
          preTokenBalances: null,
          replacementBlockhash: null,
          returnData: null,
          unitsConsumed: 150,
        },
      },
      id: 7,
    });
    const to = (await generateKeyPairSigner()).address;
    const ok = await signTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: to, amount: lamports(SOL / 2n) })],
      {
        blockhash: lifetime.blockhash,
        lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight),
      },
    );
    // base58 is the default encoding of sendTransaction.
    assert.equal(await call('sendTransaction', [getBase58Decoder().decode(ok.bytes)]), ok.signature);
    assert.deepEqual(await callError('getTransaction', [ok.signature]), {
      jsonrpc: '2.0',
      error: {
        code: -32015,
        message:
          'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0',
      },
      id: 7,
    });
    const slot = slotNow();
    const asJson = (await call('getTransaction', [
      ok.signature,
      { maxSupportedTransactionVersion: 0 },
    ])) as Record<string, unknown>;
    assert.deepEqual(asJson, {
      blockTime: local.ledger.unixTimestamp(),
      meta: {
        computeUnitsConsumed: 150,
        err: null,
        fee: 5000,
        innerInstructions: [],
        loadedAddresses: { readonly: [], writable: [] },
        logMessages: [
          'Program 11111111111111111111111111111111 invoke [1]',
          'Program 11111111111111111111111111111111 success',
        ],
        postBalances: [Number(SOL / 2n - 5000n), Number(SOL / 2n), 1],
        postTokenBalances: [],
        preBalances: [Number(SOL), 0, 1],
        preTokenBalances: [],
        rewards: [],
        status: { Ok: null },
      },
      slot,
      transaction: {
        message: {
          accountKeys: [payer.address, to, '11111111111111111111111111111111'],
          addressTableLookups: [],
          header: { numReadonlySignedAccounts: 0, numReadonlyUnsignedAccounts: 1, numRequiredSignatures: 1 },
          instructions: [
            {
              accounts: [0, 1],
              data: getBase58Decoder().decode(
                Uint8Array.of(2, 0, 0, 0, ...new Uint8Array(new BigUint64Array([SOL / 2n]).buffer)),
              ),
              programIdIndex: 2,
              stackHeight: null,
            },
          ],
          recentBlockhash: lifetime.blockhash,
        },
        signatures: [ok.signature],
      },
      version: 0,
    });
    const asBase64 = (await call('getTransaction', [
      ok.signature,
      { maxSupportedTransactionVersion: 0, encoding: 'base64' },
    ])) as {
      transaction: [string, string];
    };
    assert.deepEqual(asBase64.transaction, [ok.base64, 'base64']);
    const statuses = (await call('getSignatureStatuses', [[ok.signature, tooMuch.signature]])) as {
      value: unknown[];
    };
    assert.deepEqual(statuses.value, [
      { confirmationStatus: 'finalized', confirmations: null, err: null, slot, status: { Ok: null } },
      null,
    ]);
  });

  test('malformed, oversized and unsanitary transaction bytes are refused as validators refuse them', async () => {
    const payer = await generateKeyPairSigner();
    await local.cheats.airdrop(payer.address, SOL);
    const { value: lifetime } = (await call('getLatestBlockhash')) as {
      value: { blockhash: string; lastValidBlockHeight: number };
    };
    const to = (await generateKeyPairSigner()).address;
    const transfer = (amount: bigint) =>
      signTransaction(
        payer,
        [getTransferSolInstruction({ source: payer, destination: to, amount: lamports(amount) })],
        { blockhash: lifetime.blockhash, lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight) },
      );
    const { bytes } = await transfer(SOL / 10n);
    const type = 'solana_transaction::versioned::VersionedTransaction';
    const refusal = async (wire: Uint8Array | string, method = 'sendTransaction') => {
      const text = typeof wire === 'string' ? wire : Buffer.from(wire).toString('base64');
      const answer = (await callError(method, [text, { encoding: 'base64' }])) as {
        error: { code: number; message: string };
      };
      return answer.error;
    };
    const undecodable = (detail: RegExp | string) => (error: { code: number; message: string }) => {
      assert.equal(error.code, -32602);
      assert.ok(error.message.startsWith(`failed to deserialize ${type}: `), error.message);
      if (typeof detail === 'string') assert.equal(error.message, `failed to deserialize ${type}: ${detail}`);
      else assert.match(error.message, detail);
    };
    undecodable(/./)(await refusal(bytes.subarray(0, 100)));
    undecodable(/./)(await refusal(bytes.subarray(0, 100), 'simulateTransaction'));
    // The transfer's 12 bytes of data, their length before them, then the v0 message's empty
    // list of lookup tables: the length written in two bytes where one suffices.
    const lengthAt = bytes.length - 1 - 12 - 1;
    assert.equal(bytes[lengthAt], 12);
    const aliased = Uint8Array.from([
      ...bytes.subarray(0, lengthAt),
      12 | 0x80,
      0,
      ...bytes.subarray(lengthAt + 1),
    ]);
    undecodable('short_vec: alias encoding')(await refusal(aliased));
    const v1 = bytes.slice();
    assert.equal(v1[65], 0x80);
    v1[65] = 0x81;
    undecodable('invalid value: unsupported message version 1')(await refusal(v1));
    // A second signature for a message that asks for one.
    const twoSignatures = Uint8Array.from([
      2,
      ...bytes.subarray(1, 65),
      ...new Uint8Array(64),
      ...bytes.subarray(65),
    ]);
    assert.deepEqual(await refusal(twoSignatures), {
      code: -32602,
      message: 'invalid transaction: Transaction failed to sanitize accounts offsets correctly',
    });
    assert.deepEqual(await refusal('A'.repeat(1648)), {
      code: -32602,
      message: `base64 encoded ${type} too large: 1648 bytes (max: encoded/raw 1644/1232)`,
    });
    assert.deepEqual(await refusal(new Uint8Array(1233)), {
      code: -32602,
      message: `decoded ${type} too large: 1233 bytes (max: 1232 bytes)`,
    });
    assert.deepEqual(await callError('sendTransaction', ['1'.repeat(1684)]), {
      jsonrpc: '2.0',
      error: {
        code: -32602,
        message: `base58 encoded ${type} too large: 1684 bytes (max: encoded/raw 1683/1232)`,
      },
      id: 7,
    });
    assert.equal(((await call('getBalance', [payer.address])) as { value: number }).value, Number(SOL));
    // Bytes after a whole transaction are ignored, as validators ignore them.
    const padded = await transfer(SOL / 5n);
    const landed = await call('sendTransaction', [
      Buffer.from([...padded.bytes, 0, 0, 0]).toString('base64'),
      { encoding: 'base64' },
    ]);
    assert.equal(landed, padded.signature);
    const recorded = (await call('getTransaction', [
      padded.signature,
      { encoding: 'base64', maxSupportedTransactionVersion: 0 },
    ])) as { transaction: [string, string] };
    assert.deepEqual(recorded.transaction, [padded.base64, 'base64']);
  });

  test('getFeeForMessage prices a message while its blockhash lives', async () => {
    const payer = await generateKeyPairSigner();
    const { value: lifetime } = (await call('getLatestBlockhash')) as {
      value: { blockhash: string; lastValidBlockHeight: number };
    };
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(payer.address, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          {
            blockhash: lifetime.blockhash as never,
            lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight),
          },
          m,
        ),
      (m) =>
        appendTransactionMessageInstructions(
          [getTransferSolInstruction({ source: payer, destination: payer.address, amount: 1 })],
          m,
        ),
    );
    const bytes = getCompiledTransactionMessageEncoder().encode(compileTransactionMessage(message));
    const base64 = getBase64Decoder().decode(bytes);
    assert.equal(((await call('getFeeForMessage', [base64])) as { value: unknown }).value, 5000);
    clock.advance(slotsMs(151));
    assert.equal(((await call('getFeeForMessage', [base64])) as { value: unknown }).value, null);
  });

  test('getRecentPrioritizationFees: per recent block, its least price, raised by the accounts asked about', async () => {
    clock.advance(slotsMs(150));
    const [busy, quiet] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    await local.cheats.airdrop(busy.address, SOL);
    await local.cheats.airdrop(quiet.address, SOL);
    // The airdrops wrote both accounts without a price: the blocks that count come after theirs.
    clock.advance(slotsMs(1));
    const lifetime = local.ledger.latestBlockhash();
    const send = async (payer: typeof busy, microLamports: bigint | null) => {
      const transfer = getTransferSolInstruction({ source: payer, destination: payer.address, amount: 1 });
      const price = microLamports === null ? [] : [getSetComputeUnitPriceInstruction({ microLamports })];
      const tx = await signTransaction(payer, [...price, transfer], {
        blockhash: lifetime.blockhash,
        lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight),
      });
      await call('sendTransaction', [tx.base64, { encoding: 'base64' }]);
    };
    // One block: a transaction writing `busy` at 7,000 micro-lamports per unit, one writing `quiet`
    // without a price. The next: `busy` at 9,000 only.
    await send(busy, 7_000n);
    await send(quiet, null);
    const first = slotNow();
    clock.advance(slotsMs(1));
    await send(busy, 9_000n);
    const fees = async (addresses: string[]) =>
      new Map(
        (
          (await call('getRecentPrioritizationFees', [addresses])) as {
            slot: number;
            prioritizationFee: number;
          }[]
        ).map((entry) => [entry.slot, entry.prioritizationFee]),
      );
    const busyFees = await fees([busy.address, TOKEN_PROGRAM]);
    assert.equal(busyFees.size, 150);
    assert.equal(Math.max(...busyFees.keys()), first + 1, 'the last 150 slots, the current one last');
    assert.equal(busyFees.get(first), 7_000, 'what writing `busy` cost in that block');
    assert.equal(busyFees.get(first + 1), 9_000);
    assert.equal(busyFees.get(first - 1), 0, 'an empty block costs nothing');
    const anyFees = await fees([]);
    assert.equal(anyFees.get(first), 0, 'the least price of the block');
    assert.equal(anyFees.get(first + 1), 9_000, 'a block of one transaction: its price');
    assert.equal((await fees([quiet.address])).get(first), 0);
    // 150 slots on, both blocks are forgotten.
    clock.advance(slotsMs(150));
    assert.deepEqual([...(await fees([busy.address])).values()], Array(150).fill(0));
  });

  test('surfnet_timeTravel moves slot and clock forward only', async () => {
    const start = slotNow();
    const result = await call('surfnet_timeTravel', [{ absoluteSlot: start + 1000 }]);
    assert.deepEqual(result, {
      absoluteSlot: start + 1000,
      blockHeight: start + 1000,
      epoch: 0,
      slotIndex: start + 1000,
      slotsInEpoch: 432000,
      transactionCount: local.ledger.epochInfo().transactionCount,
    });
    const target = local.ledger.chainTimeMs() + 86_400_000;
    const after = (await call('surfnet_timeTravel', [{ absoluteTimestamp: target }])) as {
      absoluteSlot: number;
    };
    assert.equal(after.absoluteSlot, start + 1000 + 216_000);
    const clockSysvar = (await call('getAccountInfo', [
      'SysvarC1ock11111111111111111111111111111111',
      { encoding: 'base64' },
    ])) as {
      value: { data: [string, string] };
    };
    const data = Buffer.from(clockSysvar.value.data[0], 'base64');
    assert.equal(data.readBigUInt64LE(0), BigInt(start + 1000 + 216_000));
    assert.equal(Number(data.readBigInt64LE(32)), Math.floor(target / 1000));
    assert.deepEqual(await callError('surfnet_timeTravel', [{ absoluteSlot: start }]), {
      jsonrpc: '2.0',
      error: {
        code: -32602,
        message: `Cannot travel to the past: slot ${start} is before the current slot ${start + 217_000}`,
      },
      id: 7,
    });

    // Into the middle of a slot: a new slot starts there, and the clock reads the second asked for.
    const midSlot = local.ledger.chainTimeMs() + 1_500;
    const landed = (await call('surfnet_timeTravel', [{ absoluteTimestamp: midSlot }])) as {
      absoluteSlot: number;
    };
    assert.equal(landed.absoluteSlot, start + 217_000 + 4);
    const moved = (await call('getAccountInfo', [
      'SysvarC1ock11111111111111111111111111111111',
      { encoding: 'base64' },
    ])) as { value: { data: [string, string] } };
    assert.equal(
      Number(Buffer.from(moved.value.data[0], 'base64').readBigInt64LE(32)),
      Math.floor(midSlot / 1000),
    );
  });

  test('a time travel is announced to onTimeTravel listeners, by the method or in process; a refused one is not', async () => {
    const heard: number[] = [];
    const unsubscribe = local.onTimeTravel((chainTimeMs) => heard.push(chainTimeMs));
    const byMethod = local.ledger.chainTimeMs() + 60_000;
    await call('surfnet_timeTravel', [{ absoluteTimestamp: byMethod }]);
    await callError('surfnet_timeTravel', [{ absoluteTimestamp: byMethod - 1 }]);
    const inProcess = byMethod + 60_000;
    await local.cheats.timeTravel({ absoluteTimestamp: inProcess });
    unsubscribe();
    await local.cheats.timeTravel({ absoluteTimestamp: inProcess + 60_000 });
    assert.deepEqual(heard, [byMethod, inProcess]);
  });
});

describe('blocks and history', () => {
  const SYSTEM = '11111111111111111111111111111111';
  const V0_REFUSED =
    'Transaction version (0) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": 0';

  test('every slot is a block: getBlock in each transactionDetails, getBlockTime, getBlocks', async () => {
    clock.advance(slotsMs(1));
    const payer = await generateKeyPairSigner();
    const to = (await generateKeyPairSigner()).address;
    const funded = await local.cheats.airdrop(payer.address, SOL);
    const lifetime = local.ledger.latestBlockhash();
    const tx = await signTransaction(
      payer,
      [getTransferSolInstruction({ source: payer, destination: to, amount: lamports(SOL / 4n) })],
      { blockhash: lifetime.blockhash, lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight) },
    );
    await call('sendTransaction', [tx.base64, { encoding: 'base64' }]);
    const slot = slotNow();
    const blockTime = local.ledger.unixTimestamp();
    const parent = (await call('getBlock', [slot - 1, { transactionDetails: 'none', rewards: false }])) as {
      blockhash: string;
    };
    const head = {
      blockHeight: slot,
      blockTime,
      blockhash: lifetime.blockhash,
      parentSlot: slot - 1,
      previousBlockhash: parent.blockhash,
    };
    assert.deepEqual(parent, {
      blockHeight: slot - 1,
      blockTime: local.ledger.block(slot - 1).blockTime,
      blockhash: parent.blockhash,
      parentSlot: slot - 2,
      previousBlockhash: local.ledger.block(slot - 2).blockhash,
    });
    assert.deepEqual(await call('getBlock', [slot, { transactionDetails: 'signatures' }]), {
      ...head,
      rewards: [],
      signatures: [funded, tx.signature],
    });
    // Whole transactions: v0 ones only for clients that say they read them.
    assert.deepEqual(await callError('getBlock', [slot]), {
      jsonrpc: '2.0',
      error: { code: -32015, message: V0_REFUSED },
      id: 7,
    });
    const full = (await call('getBlock', [slot, { maxSupportedTransactionVersion: 0, rewards: false }])) as {
      transactions: unknown[];
    };
    const {
      slot: _slot,
      blockTime: _time,
      ...landed
    } = (await call('getTransaction', [tx.signature, { maxSupportedTransactionVersion: 0 }])) as {
      slot: number;
      blockTime: number;
      meta: Record<string, unknown>;
    };
    delete landed.meta.rewards;
    assert.deepEqual(full, { ...head, transactions: [full.transactions[0], landed] });
    const accounts = (await call('getBlock', [
      slot,
      { transactionDetails: 'accounts', maxSupportedTransactionVersion: 0 },
    ])) as { transactions: unknown[] };
    assert.deepEqual(accounts.transactions[1], {
      meta: {
        err: null,
        fee: 5000,
        postBalances: [Number(SOL - SOL / 4n - 5000n), Number(SOL / 4n), 1],
        postTokenBalances: [],
        preBalances: [Number(SOL), 0, 1],
        preTokenBalances: [],
        rewards: [],
        status: { Ok: null },
      },
      transaction: {
        accountKeys: [
          { pubkey: payer.address, signer: true, source: 'transaction', writable: true },
          { pubkey: to, signer: false, source: 'transaction', writable: true },
          { pubkey: SYSTEM, signer: false, source: 'transaction', writable: false },
        ],
        signatures: [tx.signature],
      },
      version: 0,
    });
    assert.equal(await call('getBlockTime', [slot]), blockTime);
    assert.deepEqual(await call('getBlocks', [slot - 2, slot + 5]), [slot - 2, slot - 1, slot]);
    assert.deepEqual(await call('getBlocks', [slot, { commitment: 'finalized' }]), [slot]);
    assert.deepEqual(await call('getBlocksWithLimit', [slot - 1, 5]), [slot - 1, slot]);
    assert.equal(await call('getFirstAvailableBlock'), 0);
    assert.equal(await call('minimumLedgerSlot'), 0);
    // Slots that have not come yet, commitments below confirmed and oversized ranges are refused.
    assert.deepEqual(await callError('getBlock', [slot + 1]), {
      jsonrpc: '2.0',
      error: { code: -32004, message: `Block not available for slot ${slot + 1}` },
      id: 7,
    });
    assert.deepEqual(await callError('getBlockTime', [slot + 1]), {
      jsonrpc: '2.0',
      error: { code: -32004, message: `Block not available for slot ${slot + 1}` },
      id: 7,
    });
    assert.deepEqual(await callError('getBlock', [slot, { commitment: 'processed' }]), {
      jsonrpc: '2.0',
      error: { code: -32602, message: 'Method does not support commitment below `confirmed`' },
      id: 7,
    });
    assert.deepEqual(await callError('getBlocksWithLimit', [0, 500_001]), {
      jsonrpc: '2.0',
      error: { code: -32602, message: 'Limit too large; max 500000' },
      id: 7,
    });
  });

  test('blocks older than the oldest remembered transaction are reported as cleaned up', async (t) => {
    const own = manualClock(new Date('2026-05-01T00:00:00Z'));
    const small = await startLocalChain({
      rpcPort: 0,
      wsPort: null,
      clock: own,
      autoTick: false,
      maxRecordedTransactions: 1,
    });
    t.after(() => small.close());
    const wallet = (await generateKeyPairSigner()).address;
    await small.cheats.airdrop(wallet, SOL);
    // Past the status cache, so that nothing keeps the first record from being forgotten.
    own.advance(slotsMs(301));
    await small.cheats.airdrop(wallet, SOL);
    const ask = async (method: string, params: unknown[]) => {
      const response = await fetch(small.rpcUrl as string, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return response.json();
    };
    assert.deepEqual(await ask('getBlock', [0]), {
      jsonrpc: '2.0',
      error: {
        code: -32001,
        message: 'Block 0 cleaned up, does not exist on node. First available block: 1',
      },
      id: 1,
    });
    assert.deepEqual(await ask('getBlocks', [0, 3]), { jsonrpc: '2.0', result: [1, 2, 3], id: 1 });
    assert.deepEqual(await ask('getFirstAvailableBlock', []), { jsonrpc: '2.0', result: 1, id: 1 });
  });

  test('getSignaturesForAddress lists newest first with memos; limit, before and until page through', async () => {
    const wallet = await generateKeyPairSigner();
    const first = await local.cheats.airdrop(wallet.address, SOL);
    clock.advance(slotsMs(1));
    const second = await local.cheats.airdrop(wallet.address, SOL);
    const lifetime = local.ledger.latestBlockhash();
    const tx = await signTransaction(
      wallet,
      [getTransferSolInstruction({ source: wallet, destination: wallet.address, amount: lamports(1n) })],
      { blockhash: lifetime.blockhash, lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight) },
    );
    await call('sendTransaction', [tx.base64, { encoding: 'base64' }]);
    const entries = (await call('getSignaturesForAddress', [wallet.address])) as Record<string, unknown>[];
    const entry = (signature: string) => {
      const record = local.ledger.getTransaction(signature);
      return {
        blockTime: record?.blockTime,
        confirmationStatus: 'finalized',
        err: null,
        signature,
        slot: record?.slot,
      };
    };
    assert.deepEqual(
      entries.map(({ memo: _memo, ...rest }) => rest),
      [entry(tx.signature), entry(second), entry(first)],
    );
    assert.equal(entries[0]?.memo, null);
    assert.match(entries[1]?.memo as string, /^\[\d+\] airdrop \d+$/);
    const page = async (cfg: object) =>
      ((await call('getSignaturesForAddress', [wallet.address, cfg])) as { signature: string }[]).map(
        (e) => e.signature,
      );
    assert.deepEqual(await page({ limit: 2 }), [tx.signature, second]);
    assert.deepEqual(await page({ before: tx.signature }), [second, first]);
    assert.deepEqual(await page({ until: first }), [tx.signature, second]);
    assert.deepEqual(await page({ before: tx.signature, until: first }), [second]);
    // An unknown `before` finds nothing; an unknown `until` does not bound the search.
    const unknown = getBase58Decoder().decode(new Uint8Array(64).fill(7));
    assert.deepEqual(await page({ before: unknown }), []);
    assert.deepEqual(await page({ until: unknown }), [tx.signature, second, first]);
    for (const limit of [0, 1001]) {
      assert.deepEqual(await callError('getSignaturesForAddress', [wallet.address, { limit }]), {
        jsonrpc: '2.0',
        error: { code: -32602, message: 'Invalid limit; max 1000' },
        id: 7,
      });
    }
  });
});

describe('subscriptions', () => {
  test('@solana/kit sendAndConfirmTransaction confirms over WebSocket; account notifications flow', async () => {
    const rpc = createSolanaRpc(url) as Rpc<SolanaRpcApi>;
    const rpcSubscriptions = createSolanaRpcSubscriptions(
      local.wsUrl as string,
    ) as RpcSubscriptions<SolanaRpcSubscriptionsApi>;
    const payer = await generateKeyPairSigner();
    const to = (await generateKeyPairSigner()).address as Address;
    await local.cheats.airdrop(payer.address, SOL);
    const abort = new AbortController();
    const notifications = await rpcSubscriptions
      .accountNotifications(to, { encoding: 'base64' })
      .subscribe({ abortSignal: abort.signal });
    // kit delivers only notifications that arrive after iteration started.
    const firstNotification = notifications[Symbol.asyncIterator]().next();
    const { value: lifetime } = await rpc.getLatestBlockhash().send();
    const tx = await pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(payer, m),
      (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime, m),
      (m) =>
        appendTransactionMessageInstructions(
          [getTransferSolInstruction({ source: payer, destination: to, amount: lamports(SOL / 4n) })],
          m,
        ),
      (m) => signTransactionMessageWithSigners(m),
    );
    const sendAndConfirm = sendAndConfirmTransactionFactory({ rpc, rpcSubscriptions });
    await sendAndConfirm(tx as Parameters<typeof sendAndConfirm>[0], { commitment: 'confirmed' });
    assert.equal((await rpc.getBalance(to).send()).value, SOL / 4n);
    const first = await firstNotification;
    abort.abort();
    assert.deepEqual(first.value, {
      context: { slot: BigInt(slotNow()) },
      value: {
        data: ['', 'base64'],
        executable: false,
        lamports: SOL / 4n,
        owner: '11111111111111111111111111111111',
        rentEpoch: 18446744073709551615n,
        space: 0n,
      },
    });
    const statuses = await rpc.getSignatureStatuses([getSignatureFromTransaction(tx)]).send();
    assert.equal(statuses.value[0]?.confirmationStatus, 'finalized');
  });
  test('logs and program subscriptions notify every landed transaction they match; bad filters are refused', async () => {
    const payer = await generateKeyPairSigner();
    const to = (await generateKeyPairSigner()).address;
    await local.cheats.airdrop(payer.address, SOL);
    const socket = new WebSocket(local.wsUrl as string);
    const messages: unknown[] = [];
    socket.on('message', (data) => messages.push(parseExact(data.toString())));
    await once(socket, 'open');
    const received = async (count: number) => {
      while (messages.length < count) await once(socket, 'message');
    };
    const request = (id: number, method: string, params: unknown[]) =>
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    request(1, 'logsSubscribe', [{ mentions: [payer.address, to] }]);
    request(2, 'logsSubscribe', ['everything']);
    request(3, 'logsSubscribe', [{ mentions: [payer.address] }, { commitment: 'confirmed' }]);
    request(4, 'programSubscribe', [
      '11111111111111111111111111111111',
      { encoding: 'base64', filters: [{ dataSize: 0 }] },
    ]);
    await received(4);
    const lifetime = local.ledger.latestBlockhash();
    const send = async (amount: bigint) => {
      const tx = await signTransaction(
        payer,
        [getTransferSolInstruction({ source: payer, destination: to, amount: lamports(amount) })],
        { blockhash: lifetime.blockhash, lastValidBlockHeight: BigInt(lifetime.lastValidBlockHeight) },
      );
      await call('sendTransaction', [tx.base64, { encoding: 'base64', skipPreflight: true }]);
      return tx.signature;
    };
    // Without preflight a failing transfer lands with its error and pays its fee.
    const failed = await send(2n * SOL);
    const paid = await send(SOL / 2n);
    await received(9);
    socket.close();
    const [logs, program] = [
      (messages[2] as { result: number }).result,
      (messages[3] as { result: number }).result,
    ];
    const context = { slot: slotNow() };
    const system = (lamports: bigint) => ({
      data: ['', 'base64'],
      executable: false,
      lamports: Number(lamports),
      owner: '11111111111111111111111111111111',
      rentEpoch: 18446744073709551615n,
      space: 0,
    });
    const notification = (method: string, subscription: number, value: unknown) => ({
      jsonrpc: '2.0',
      method,
      params: { result: { context, value }, subscription },
    });
    assert.deepEqual(messages, [
      {
        jsonrpc: '2.0',
        error: { code: -32602, message: 'Invalid Request: Only 1 address supported' },
        id: 1,
      },
      {
        jsonrpc: '2.0',
        error: {
          code: -32602,
          message: 'Invalid params: expected "all", "allWithVotes" or { mentions: [address] }',
        },
        id: 2,
      },
      { jsonrpc: '2.0', result: logs, id: 3 },
      { jsonrpc: '2.0', result: program, id: 4 },
      notification('logsNotification', logs, {
        err: { InstructionError: [0, { Custom: 1 }] },
        logs: [
          'Program 11111111111111111111111111111111 invoke [1]',
          `Transfer: insufficient lamports ${SOL - 5000n}, need ${2n * SOL}`,
          'Program 11111111111111111111111111111111 failed: custom program error: 0x1',
        ],
        signature: failed,
      }),
      // The recipient does not exist yet: only the payer (its fee) is notified.
      notification('programNotification', program, { account: system(SOL - 5000n), pubkey: payer.address }),
      notification('logsNotification', logs, {
        err: null,
        logs: [
          'Program 11111111111111111111111111111111 invoke [1]',
          'Program 11111111111111111111111111111111 success',
        ],
        signature: paid,
      }),
      notification('programNotification', program, {
        account: system(SOL / 2n - 10_000n),
        pubkey: payer.address,
      }),
      notification('programNotification', program, { account: system(SOL / 2n), pubkey: to }),
    ]);
  });
});

describe('transport', () => {
  test('pipelined requests on one connection are answered in order, each with its own id', async () => {
    // One write holding three requests; the last asks the server to close when done.
    const bodies = [1, 2, 3].map((id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'getHealth' }));
    const answers = await exchange(
      bodies
        .map(
          (body, i) =>
            `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${i === 2 ? 'Connection: close\r\n' : ''}\r\n${body}`,
        )
        .join(''),
    );
    assert.deepEqual(
      answers.map((a) => a.body),
      [1, 2, 3].map((id) => `{"jsonrpc":"2.0","result":"ok","id":${id}}`),
    );
  });

  test('chunked bodies, other methods and HTTP/1.0 are served on the same connections, in order', async () => {
    const rpc = (id: number, method: string) => JSON.stringify({ jsonrpc: '2.0', id, method });
    const plain = (body: string) =>
      `POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const chunked = rpc(2, 'getSlot');
    const answers = await exchange(
      [
        plain(rpc(1, 'getHealth')),
        // A chunked body, then a GET and a POST after it on the same connection.
        `POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n${chunked.slice(0, 5)}\r\n${(chunked.length - 5).toString(16)}\r\n${chunked.slice(5)}\r\n0\r\n\r\n`,
        'GET /health HTTP/1.1\r\nHost: x\r\n\r\n',
        `POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${rpc(3, 'getHealth').length}\r\n\r\n${rpc(3, 'getHealth')}`,
      ].join(''),
    );
    assert.deepEqual(
      answers.map((a) => [a.status, a.body]),
      [
        [200, '{"jsonrpc":"2.0","result":"ok","id":1}'],
        [200, `{"jsonrpc":"2.0","result":${slotNow()},"id":2}`],
        [200, 'ok'],
        [200, '{"jsonrpc":"2.0","result":"ok","id":3}'],
      ],
    );
    assert.equal(answers[0]?.headers['content-type'], 'application/json');
    assert.equal(answers[0]?.headers['access-control-allow-origin'], '*');
    assert.equal(answers[3]?.headers.connection, 'close');

    // HTTP/1.0 closes after its answer unless asked to keep the connection.
    const [old] = await exchange(`POST / HTTP/1.0\r\nContent-Length: 45\r\n\r\n${rpc(4, 'getHealth')}`);
    assert.deepEqual([old?.status, old?.body], [200, '{"jsonrpc":"2.0","result":"ok","id":4}']);
    // A head with bare line feeds is refused rather than waited on.
    const [bare] = await exchange(`POST / HTTP/1.1\nHost: x\nContent-Length: 45\n\n${rpc(7, 'getHealth')}`);
    assert.equal(bare?.status, 400);
    // A client that ends its side right after its requests still gets every answer.
    const ended = await exchange(plain(rpc(6, 'getHealth')).repeat(2), { halfClose: true });
    assert.deepEqual(
      ended.map((a) => a.body),
      ['{"jsonrpc":"2.0","result":"ok","id":6}', '{"jsonrpc":"2.0","result":"ok","id":6}'],
    );
    // Nothing sent after a request that asked to close is run, even when the client ends its side
    // only once it has the answer.
    const unfunded = (await generateKeyPairSigner()).address;
    const airdrop = JSON.stringify({
      jsonrpc: '2.0',
      id: 8,
      method: 'requestAirdrop',
      params: [unfunded, 1_000_000_000],
    });
    const late = connect(Number(new URL(url).port), '127.0.0.1');
    late.write(
      `POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 45\r\n\r\n${rpc(8, 'getHealth')}${plain(airdrop)}`,
    );
    const lateAnswers: Buffer[] = [];
    late.on('data', (chunk: Buffer) => {
      lateAnswers.push(chunk);
      late.end();
    });
    await once(late, 'close');
    assert.match(Buffer.concat(lateAnswers).toString(), /\r\n\r\n\{"jsonrpc":"2\.0","result":"ok","id":8\}$/);
    assert.equal(((await call('getBalance', [unfunded])) as { value: number }).value, 0);
    // A body sent only after "100 Continue".
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    const body = rpc(5, 'getHealth');
    socket.write(
      `POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    await once(socket, 'data');
    assert.equal(Buffer.concat(received).toString(), 'HTTP/1.1 100 Continue\r\n\r\n');
    socket.write(body);
    await once(socket, 'close');
    assert.match(
      Buffer.concat(received).toString(),
      /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{"jsonrpc":"2\.0","result":"ok","id":5\}$/,
    );
  });

  test('a burst of concurrent requests gets every answer back to its own request', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => i + 1);
    const answers = await Promise.all(
      ids.map((id) => post({ jsonrpc: '2.0', id, method: 'getSlot' }).then((r) => r.json)),
    );
    assert.deepEqual(
      answers,
      ids.map((id) => ({ jsonrpc: '2.0', result: slotNow(), id })),
    );
  });

  test('oversized bodies, other methods and a taken port are refused', async () => {
    const tooLarge = await post({ jsonrpc: '2.0', id: 1, method: 'getHealth', pad: 'x'.repeat(1024 * 1024) });
    assert.equal(tooLarge.status, 413);
    assert.deepEqual(tooLarge.json, {
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Request body too large' },
      id: null,
    });
    const get = await fetch(url);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST, OPTIONS');
    await assert.rejects(startLocalChain({ rpcPort: Number(new URL(url).port), clock, autoTick: false }), {
      code: 'EADDRINUSE',
    });
  });

  test('subscriptions also upgrade on the RPC port; answers and notifications share the socket', async () => {
    const payer = await generateKeyPairSigner();
    const landed = await local.cheats.airdrop(payer.address, SOL);
    const socket = new WebSocket(url.replace('http', 'ws'));
    const messages: unknown[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    await once(socket, 'open');
    const received = async (count: number) => {
      while (messages.length < count) await once(socket, 'message');
    };
    socket.send('{oops');
    // Valid JSON that is not a request object is refused, and the endpoint keeps serving.
    socket.send('null');
    socket.send('5');
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'signatureSubscribe', params: [landed] }));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'slotUnsubscribe', params: [987654] }));
    await received(6);
    socket.close();
    const subscription = (messages[3] as { result: number }).result;
    assert.deepEqual(messages, [
      { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null },
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null },
      { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request' }, id: null },
      { jsonrpc: '2.0', result: subscription, id: 1 },
      {
        jsonrpc: '2.0',
        method: 'signatureNotification',
        params: { result: { context: { slot: slotNow() }, value: { err: null } }, subscription },
      },
      { jsonrpc: '2.0', error: { code: -32602, message: 'Invalid subscription id.' }, id: 2 },
    ]);
  });
});
