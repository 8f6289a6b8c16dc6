// The curl a reader meets first, run as the reader runs it, against the service listening on a
// port: the README's estimate, the one the first start prints, and both blocks of the guide's
// "With curl" (docs/integrating.md) in bash, a wallet signing and broadcasting in between. The
// guide's example of `preparedTxs` must have the shape prepare answers and the OpenAPI schema's.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { firstKeyBanner } from '../../src/bootstrap.ts';
import { type Caller, createTestApp, SOL_MINT, type TestApp } from '../helpers/app.ts';
import { type Bundle, broadcastBundle } from '../helpers/wallet.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

let t: TestApp;
let caller: Caller;
let url: string;
let dir: string;
before(async () => {
  t = await createTestApp();
  caller = await t.newCaller('test', { rateLimitMultiplier: 100 });
  url = await t.app.listen({ port: 0, host: '127.0.0.1' });
  dir = await mkdtemp(join(tmpdir(), 'curl-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
  await t.close();
});

/** Runs a script in bash, stopping at the first command that fails (a curl refused included). */
async function bash(script: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: dir,
    env: { ...process.env, ...env },
  });
  return stdout;
}

/** The JSON values a script printed one after another (curl adds no newline). */
function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let depth = 0;
  let start = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') {
      if (depth++ === 0) start = i;
    } else if ((char === '}' || char === ']') && --depth === 0) {
      values.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return values;
}

/** A value's structure: key names and value types, recursively (an array by its first item). */
function shape(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? ['empty'] : [shape(value[0])];
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as object)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, entry]) => [key, shape(entry)]),
    );
  }
  return typeof value;
}

/** The text of a page from a heading to the next heading of its level or above (code blocks aside). */
function section(page: string, heading: string): string {
  const lines = page.split('\n');
  const start = lines.indexOf(heading);
  assert.ok(start >= 0, `the page has "${heading}"`);
  const level = heading.indexOf(' ');
  let fenced = false;
  let end = start + 1;
  for (; end < lines.length; end++) {
    const line = lines[end]!;
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced && /^#+ /.test(line) && line.indexOf(' ') <= level) break;
  }
  return lines.slice(start, end).join('\n');
}

const blocks = (text: string, language: string) =>
  [...text.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!);

/** An estimate's flat fee is for 3 hops. */
function assertThreeHops(estimate: { totalFlatFeeLamports: number; flatFeeLamportsPerHop: number }) {
  assert.equal(estimate.totalFlatFeeLamports, 3 * estimate.flatFeeLamportsPerHop, 'priced for 3 hops');
}

test('the README’s estimate and the one the first start prints answer for 3 hops', async () => {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const curl = blocks(readme, 'sh').find((block) => block.includes('/transfers/estimate'));
  assert.ok(curl, 'the README shows an estimate');
  const [fromReadme] = jsonValues(
    await bash(curl.replaceAll('http://127.0.0.1:8080', url), { KEY: caller.key }),
  ) as Parameters<typeof assertThreeHops>[0][];
  assertThreeHops(fromReadme!);

  const printed = firstKeyBanner(caller.key, true, url)
    .split('\n')
    .find((line) => line.trim().startsWith('curl '));
  assert.ok(printed, 'the first start prints a curl');
  const [fromBanner] = jsonValues(await bash(printed)) as Parameters<typeof assertThreeHops>[0][];
  assertThreeHops(fromBanner!);
});

test('the guide’s curl path runs as written: the transfer named by the id create answered', async () => {
  // Another integration's transfer comes first, so a path naming a fixed id would miss.
  const wallet: KeyPairSigner = await generateKeyPairSigner();
  await t.chain.cheats.airdrop(wallet.address, 50_000_000_000n);
  const strangers = await (await t.newCaller()).post('/api/v1/transfers', {
    tokenMint: SOL_MINT,
    amountRaw: '500000000',
    amountTokens: '0.5',
    sourceOwner: wallet.address,
    recipientWallet: (await generateKeyPairSigner()).address,
  });
  assert.equal(strangers.statusCode, 200, strangers.body);

  const guide = await readFile(join(ROOT, 'docs', 'integrating.md'), 'utf8');
  const [quoting, reporting] = blocks(section(guide, '## With curl'), 'sh');
  assert.ok(quoting && reporting, 'the guide shows two curl blocks');
  // The reader fills in the four variables at the top; the test sets them in the environment.
  const variables = /^(API|KEY|WALLET|RECIPIENT)=.*\n/gm;
  assert.equal(quoting.match(variables)?.length, 4);
  const env = {
    API: `${url}/api/v1`,
    KEY: caller.key,
    WALLET: wallet.address,
    RECIPIENT: (await generateKeyPairSigner()).address,
  };
  const first = quoting.replace(variables, '');
  // What the second block needs of the first: its helpers and the transfer's id.
  const helpers = first.slice(0, first.indexOf('# 1.'));
  const id = first.match(/^ID=.*$/m)?.[0];
  assert.ok(id, 'the first block keeps the id in $ID');

  const quoted = jsonValues(await bash(first, env));
  assert.equal(quoted.length, 3, 'the estimate, the transfer, the prepared bundle');
  const transfer = JSON.parse(await readFile(join(dir, 'transfer.json'), 'utf8'));
  assert.deepEqual(quoted[1], transfer);
  assert.equal(transfer.hops, 3);
  const prepared = JSON.parse(await readFile(join(dir, 'prepared.json'), 'utf8'));
  assert.equal(prepared.transfer.id, transfer.id);
  assert.equal(prepared.transfer.status, 'awaiting_signature');

  // The wallet's part, then steps 3 to 5 with its signatures in the variables the guide names.
  const bundle = prepared.preparedTxs as Bundle;
  const funding = await broadcastBundle(t.chain.chain, wallet, bundle, { through: 'keeperFunding' });
  const step3 = reporting.slice(0, reporting.indexOf('# 4.'));
  const steps4and5 = reporting.slice(reporting.indexOf('# 4.'));
  const signatures = { FUNDING: funding.keeperFundingSignature ?? '' };
  const [afterFunding] = jsonValues(await bash(`${helpers}${id}\n${step3}`, { ...env, ...signatures })) as {
    transfer: { id: number; phase: string };
  }[];
  assert.deepEqual([afterFunding?.transfer.id, afterFunding?.transfer.phase], [transfer.id, 'funding']);

  const rest = await broadcastBundle(t.chain.chain, wallet, { ...bundle, keeperFundingTx: null });
  const [reported, read] = jsonValues(
    await bash(`${helpers}${id}\n${steps4and5}`, {
      ...env,
      ...signatures,
      ROUTE_INIT: JSON.stringify(rest.routeInitSignatures),
      ORCHESTRATOR_INIT: rest.orchestratorInitSignature ?? '',
      SESSION_INIT: JSON.stringify(rest.sessionInitSignatures ?? []),
    }),
  ) as [{ transfer: { id: number; status: string } }, { id: number; status: string }];
  assert.deepEqual([reported.transfer.id, reported.transfer.status], [transfer.id, 'processing']);
  assert.deepEqual([read.id, read.status], [transfer.id, 'processing']);

  // The guide's preparedTxs example: the shape of this bundle, valid against the OpenAPI schema.
  const [example, ...others] = blocks(section(guide, '### What the wallet signs'), 'json').map(
    (block) => JSON.parse(block) as unknown,
  );
  assert.deepEqual(others, [], 'one example');
  assert.deepEqual(shape(example), shape(bundle));
  const document = (await (await fetch(`${url}/api/v1/openapi.json`)).json()) as { components: object };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'doc', components: document.components });
  const validate = ajv.compile({ $ref: 'doc#/components/schemas/PreparedTransactionBundle' });
  assert.ok(validate(example), ajv.errorsText(validate.errors));
});
