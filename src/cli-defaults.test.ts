import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { loadCliDefaults } from './cli-defaults.ts';

test("the admin CLI's defaults: a URL only when the environment names one, with the variable that did", () => {
  assert.deepEqual(loadCliDefaults({ DATA_DIR: '/srv/tr' }), {
    url: undefined,
    defaultUrl: 'http://127.0.0.1:8080',
    adminToken: undefined,
    dataDir: '/srv/tr',
    rpcUrl: undefined,
    adminKeypair: undefined,
    routerProgramId: undefined,
    localChainProfile: undefined,
    localChainSeed: undefined,
  });
  // `platform deploy` reaches the chain with the service's own settings.
  const { rpcUrl, adminKeypair, routerProgramId } = loadCliDefaults({
    RPC_URL: 'https://api.devnet.solana.com',
    PLATFORM_ADMIN_KEYPAIR: 'keys/admin.json',
    ROUTER_PROGRAM_ID: 'TRouterProgram11111111111111111111111111111',
  });
  assert.deepEqual(
    { rpcUrl, adminKeypair, routerProgramId },
    {
      rpcUrl: 'https://api.devnet.solana.com',
      adminKeypair: 'keys/admin.json',
      routerProgramId: 'TRouterProgram11111111111111111111111111111',
    },
  );
  assert.deepEqual(loadCliDefaults({ PORT: '9090', HOST: '::1' }).url, {
    url: 'http://[::1]:9090',
    from: 'PORT',
  });
  assert.deepEqual(loadCliDefaults({ PORT: '9090', HOST: '0.0.0.0' }).url, {
    url: 'http://127.0.0.1:9090',
    from: 'PORT',
  });
  assert.deepEqual(loadCliDefaults({ PORT: '9090', TRANSFER_ROUTER_URL: 'https://tr.example' }).url, {
    url: 'https://tr.example',
    from: 'TRANSFER_ROUTER_URL',
  });
  assert.equal(loadCliDefaults({}).dataDir, resolve('./data'));
  // `npm run demo` checks the running chain against the profile these ask for.
  const { localChainProfile, localChainSeed } = loadCliDefaults({
    LOCAL_CHAIN_PROFILE: 'mainnet',
    LOCAL_CHAIN_SEED: 'rehearsal',
  });
  assert.deepEqual(
    { localChainProfile, localChainSeed },
    { localChainProfile: 'mainnet', localChainSeed: 'rehearsal' },
  );
});
