// The HTTP screening provider against a local server speaking the screening API's format.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { type Address, generateKeyPairSigner } from '@solana/kit';
import { createHttpScreening, createListScreening } from '../../src/screening/providers.ts';
import { type ScreeningApi, type ScreeningApiMode, startScreeningApi } from './screening-api.ts';

const API_KEY = 'screening-key-0123';

describe('the HTTP screening provider', () => {
  let api: ScreeningApi;
  let address: Address;
  before(async () => {
    api = await startScreeningApi(API_KEY);
  });
  beforeEach(async () => {
    api.mode = 'answer';
    api.flagged.clear();
    api.requests.length = 0;
    address = (await generateKeyPairSigner()).address;
  });
  after(() => api.close());

  const provider = (options: { apiKey?: string; baseUrl?: string; timeoutMs?: number } = {}) =>
    createHttpScreening({ baseUrl: api.url, apiKey: API_KEY, timeoutMs: 2_000, ...options });

  test('asks GET /api/v1/address/{address} with the X-API-Key header; no identification is clear', async () => {
    assert.equal(await provider().screen(address), 'clear');
    assert.deepEqual(api.requests, [{ path: `/api/v1/address/${address}`, apiKey: API_KEY }]);
  });

  test('any identification flags the address', async () => {
    api.flagged.add(address);
    assert.equal(await provider().screen(address), 'flagged');
  });

  test('a base URL with a trailing slash keeps one slash before api', async () => {
    await provider({ baseUrl: `${api.url}/` }).screen(address);
    assert.equal(api.requests[0]?.path, `/api/v1/address/${address}`);
  });

  test('encodes the address into the path', async () => {
    // Not a Solana address, but the provider must not let any string change the request's path.
    await provider().screen('a/b?c' as Address);
    assert.equal(api.requests[0]?.path, '/api/v1/address/a%2Fb%3Fc');
  });

  test('a key the API refuses (HTTP 401) throws', async () => {
    await assert.rejects(provider({ apiKey: 'wrong' }).screen(address), /HTTP 401/);
  });

  const failures: [ScreeningApiMode, RegExp][] = [
    ['error', /HTTP 500/],
    ['hang', /timeout|aborted/i],
    ['not_json', /JSON/],
    ['no_identifications', /without identifications/],
  ];
  for (const [mode, error] of failures) {
    test(`an API that answers ${mode} throws: it never passes as clear`, async () => {
      api.mode = mode;
      await assert.rejects(provider({ timeoutMs: 100 }).screen(address), error);
    });
  }

  test('the caller’s signal aborts a hanging request', async () => {
    api.mode = 'hang';
    const caller = new AbortController();
    const screening = provider({ timeoutMs: 60_000 }).screen(address, { signal: caller.signal });
    caller.abort(new Error('the caller gave up'));
    await assert.rejects(screening, /the caller gave up/);
  });

  test('an unreachable API throws', async () => {
    await assert.rejects(provider({ baseUrl: 'http://127.0.0.1:1' }).screen(address));
  });
});

describe('the list screening provider', () => {
  test('flags exactly the listed addresses', async () => {
    const [listed, other] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    const provider = createListScreening([listed.address]);
    assert.equal(await provider.screen(listed.address), 'flagged');
    assert.equal(await provider.screen(other.address), 'clear');
  });
});
