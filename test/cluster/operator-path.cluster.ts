import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Address, createSolanaRpc, lamports } from '@solana/kit';
import { PROGRAM_DATA_HEADER_BYTES } from '../../src/chain/loader.ts';
import { ROUTER_PROGRAM_ADDRESS, routerProgramPath } from '../../src/chain/router/program.ts';
import { createRpcChain } from '../../src/chain/rpc-chain.ts';
import { generateKeypair, type KeypairBytes } from '../../src/platform/keypair.ts';
import { generatePlatformKeys } from '../../src/platform/local-keys.ts';
import { findProgramDataAddress, readProgramDeployment } from '../../src/platform/program-account.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import {
  type ChainProcess,
  runAdminCli,
  runDemoCli,
  type ServiceProcess,
  startChainProcess,
  startServiceProcess,
} from '../helpers/process.ts';

// An operator's path to a cluster, rehearsed on the project's chain run alone as its own process:
// the admin CLI deploys the router through the upgradeable loader, `platform init` creates the
// config, an API process and a worker process start against that chain, and a wallet's transfer
// completes. Then upgrades: the admin's lands, anyone else's is refused before anything is sent.

const ADMIN_TOKEN = 'cluster-admin-token-0123456789abcdef';
const keys = generatePlatformKeys();
let dir: string;
let adminKeyFile: string;

const keygen = (key: KeypairBytes) => JSON.stringify(key.toKeygenArray());

async function fund(rpcUrl: string, address: Address, sol: bigint) {
  await createSolanaRpc(rpcUrl)
    .requestAirdrop(address, lamports(sol * 1_000_000_000n))
    .send();
}

/** The program as the chain holds it: its upgrade authority and its bytes (without the room left after them). */
async function programOnChain(rpcUrl: string, program: Address, length: number) {
  const chain = createRpcChain({ rpcUrl });
  const programData = await findProgramDataAddress(program);
  const [programAccount, programDataAccount] = await chain.getAccounts([program, programData]);
  const deployment = readProgramDeployment(programAccount ?? null, programDataAccount ?? null);
  assert.ok(deployment.deployed && deployment.upgradeable, 'deployed through the upgradeable loader');
  const bytes = (programDataAccount!.data as Uint8Array).subarray(PROGRAM_DATA_HEADER_BYTES);
  return { upgradeAuthority: deployment.upgradeAuthority, bytes: bytes.subarray(0, length) };
}

const elf = async (variant: 'v0' | 'v3') => new Uint8Array(await readFile(routerProgramPath(variant)));

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tr-cluster-'));
  adminKeyFile = join(dir, 'admin.json');
  await writeFile(adminKeyFile, keygen(keys.admin), { mode: 0o600 });
});
after(() => rm(dir, { recursive: true, force: true }));

describe('a chain with no program: the admin CLI deploys the router, the service runs a transfer on it', () => {
  let chain: ChainProcess;
  let database: TestDatabase;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let programId: Address;
  before(async () => {
    [chain, database] = await Promise.all([startChainProcess(), createTestDatabase({ poolSize: 2 })]);
    await fund(chain.rpcUrl, keys.admin.address, 2n);
    await fund(chain.rpcUrl, keys.feeWallet.address, 1n);
  });
  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
    await database?.drop();
    await chain?.stop();
  });

  test('platform deploy: a new program, the admin its upgrade authority; run again, nothing to do', async () => {
    const programKeyFile = join(dir, 'router-program.json');
    const deploy = () =>
      runAdminCli(['platform', 'deploy', '--program-keypair', programKeyFile], {
        RPC_URL: chain.rpcUrl,
        PLATFORM_ADMIN_KEYPAIR: adminKeyFile,
      });
    const deployed = await deploy();
    assert.equal(deployed.code, 0, deployed.stderr);
    const result = JSON.parse(deployed.stdout);
    programId = result.programId;
    assert.equal(result.action, 'deployed');
    assert.equal(result.elf, 'v0');
    assert.equal(result.upgradeAuthority, keys.admin.address);
    assert.equal(result.programKeypair, programKeyFile);
    assert.notEqual(programId, ROUTER_PROGRAM_ADDRESS);
    assert.equal((await stat(programKeyFile)).mode & 0o777, 0o600, 'the generated program key is private');
    assert.match(deployed.stderr, /Generated the program's keypair \w+ in /);
    const v0 = await elf('v0');
    assert.equal(result.maxDataLen, String(2 * v0.length));
    assert.deepEqual(await programOnChain(chain.rpcUrl, programId, v0.length), {
      upgradeAuthority: keys.admin.address,
      bytes: v0,
    });

    const again = await deploy();
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(
      (({ action, programId, writes, spentLamports }) => ({ action, programId, writes, spentLamports }))(
        JSON.parse(again.stdout),
      ),
      { action: 'unchanged', programId, writes: 0, spentLamports: '0' },
    );
  });

  test('platform init through the CLI, an API and a worker process on the chain, a transfer completes', async () => {
    assert.ok(programId, 'the program was deployed');
    const env = {
      MODE: 'production',
      DATABASE_URL: database.url,
      ADMIN_TOKEN,
      ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      RPC_URL: chain.rpcUrl,
      CLUSTER: 'localnet',
      ROUTER_PROGRAM_ID: programId,
      PLATFORM_ADMIN_KEYPAIR: adminKeyFile,
      SCREENING_AUTHORITY_KEYPAIR: keygen(keys.screeningAuthority),
      PLATFORM_FEE_KEYPAIR: keygen(keys.feeWallet),
      PRICE_SOURCES: 'fixed',
      METRICS_PORT: '0',
    };
    [api, worker] = await Promise.all([
      startServiceProcess({ ...env, WORKERS_ENABLED: 'false' }),
      startServiceProcess(env, { workersOnly: true }),
    ]);
    const init = await runAdminCli(['platform', 'init', '--url', api.url], { ADMIN_TOKEN });
    assert.equal(init.code, 0, init.stderr);
    const initialised = JSON.parse(init.stdout);
    assert.equal(initialised.action, 'initialized');
    assert.equal(initialised.platform.ready, true, JSON.stringify(initialised.platform.problems));
    assert.equal(initialised.platform.program.address, programId);

    const demo = await runDemoCli([
      '--url',
      api.url,
      '--admin-token',
      ADMIN_TOKEN,
      '--rpc',
      chain.rpcUrl,
      '--time-travel',
    ]);
    assert.equal(demo.code, 0, `${demo.stderr}\n${demo.stdout}`);
    assert.match(demo.stdout, /^5\. Transfer \d+: completed \(phase settled\)$/m);
    assert.match(demo.stdout, /hop 3 of 3 done/);
    assert.ok(
      worker.logs.some((line) => line.includes('hop landed; transfer completed')),
      'the worker process ran the hops',
    );
    assert.ok(!api.logs.some((line) => line.includes('"worker":"keeper"')), 'the API process runs no keeper');
  });
});

describe('a chain started with the router preloaded, upgradeable by the admin (npm run localnet -- --upgrade-authority)', () => {
  let chain: ChainProcess;
  before(async () => {
    chain = await startChainProcess([
      '--program',
      `${ROUTER_PROGRAM_ADDRESS}=${routerProgramPath('v0')}`,
      '--upgrade-authority',
      adminKeyFile,
    ]);
    await fund(chain.rpcUrl, keys.admin.address, 2n);
  });
  after(() => chain?.stop());

  test('the admin upgrades it (v0 to v3); another key is refused and nothing is sent', async () => {
    const [v0, v3] = await Promise.all([elf('v0'), elf('v3')]);
    assert.deepEqual(await programOnChain(chain.rpcUrl, ROUTER_PROGRAM_ADDRESS, v0.length), {
      upgradeAuthority: keys.admin.address,
      bytes: v0,
    });
    const intruder = generateKeypair();
    await fund(chain.rpcUrl, intruder.address, 2n);
    const upgrade = (key: KeypairBytes) =>
      runAdminCli(['platform', 'deploy', '--elf', 'v3', '--program-keypair', join(dir, 'absent.json')], {
        RPC_URL: chain.rpcUrl,
        ROUTER_PROGRAM_ID: ROUTER_PROGRAM_ADDRESS,
        PLATFORM_ADMIN_KEYPAIR: keygen(key),
      });

    const refused = await upgrade(intruder);
    assert.equal(refused.code, 1);
    assert.equal(refused.stdout, '');
    const refusal = JSON.parse(refused.stderr);
    assert.equal(refusal.action, 'refused');
    assert.equal(
      refusal.message,
      `The program ${ROUTER_PROGRAM_ADDRESS}'s upgrade authority is ${keys.admin.address}, not the admin ${intruder.address}: only ${keys.admin.address} can upgrade it (give its keypair as PLATFORM_ADMIN_KEYPAIR or --admin-keypair).`,
    );
    assert.equal(refusal.spentLamports, '0');
    assert.deepEqual((await programOnChain(chain.rpcUrl, ROUTER_PROGRAM_ADDRESS, v0.length)).bytes, v0);

    const upgraded = await upgrade(keys.admin);
    assert.equal(upgraded.code, 0, upgraded.stderr);
    const result = JSON.parse(upgraded.stdout);
    assert.equal(result.action, 'upgraded');
    assert.equal(result.programKeypair, null, 'an upgrade needs no program key');
    assert.equal(
      BigInt(result.spentLamports),
      BigInt(result.writes + 2) * 5_000n,
      'the buffer rent came back: fees only',
    );
    assert.deepEqual(await programOnChain(chain.rpcUrl, ROUTER_PROGRAM_ADDRESS, v3.length), {
      upgradeAuthority: keys.admin.address,
      bytes: v3,
    });
  });
});

test('platform deploy without a cluster is a usage error; an unreachable one fails with exit status 1', async () => {
  const usage = await runAdminCli(['platform', 'deploy'], { PLATFORM_ADMIN_KEYPAIR: adminKeyFile });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /^error: platform deploy needs the cluster: pass --rpc or set RPC_URL\n/);
  const unreachable = await runAdminCli(
    ['platform', 'deploy', '--rpc', 'http://127.0.0.1:1', '--program-id', ROUTER_PROGRAM_ADDRESS],
    { PLATFORM_ADMIN_KEYPAIR: adminKeyFile },
  );
  assert.equal(unreachable.code, 1, unreachable.stderr);
  const failure = JSON.parse(unreachable.stderr);
  assert.equal(failure.action, 'failed');
  assert.match(
    failure.message,
    /^The chain at http:\/\/127\.0\.0\.1:1 failed a request \(CHAIN_UNAVAILABLE: .+\)\.$/,
  );
  assert.ok(!unreachable.stderr.includes(keygen(keys.admin)), 'the key is never printed');
});
