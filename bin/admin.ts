import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { adminTokenPath } from '../src/bootstrap.ts';
import { loadCliDefaults } from '../src/cli-defaults.ts';
import { readServiceFile, serviceFilePath } from '../src/service-file.ts';
import { DEPLOY_OPTIONS, DEPLOY_USAGE, platformDeploy } from './admin-deploy.ts';

const USAGE = `Transfer Router admin CLI

Usage: transfer-router-admin <command> [arguments] [options]
       npm run admin -- <command> [arguments] [options]

Commands:
  integrations list
  integrations show <id>
  integrations create --name <name> [--settings <json>]
  integrations update <id> [--name <name>] [--settings <json>]   (a setting set to null returns to its default)
  integrations suspend <id>
  integrations resume <id>
  keys list <integrationId>
  keys create <integrationId> --mode test|live                  (prints the key once)
  keys revoke <keyId>
  platform status                                               (program, protocol config, platform keys
                                                                 and balances, and what is missing)
  platform init                                                 (creates the protocol config, or updates it to
                                                                 the service's keys; exits 1 when it cannot)
${DEPLOY_USAGE}
  platform withdraw --to <wallet> [--lamports <n>] [--mint <mint> --amount <raw>]
                                                                (withdraws the platform's own earnings from the
                                                                 protocol config; refused when it would take
                                                                 what integrators are owed)
  rewards show <integrationId>                                  (rewards wallet, balances and latest claims,
                                                                 test and live)
  rewards coverage                                              (what integrators are owed against what the
                                                                 platform's earnings hold)

Options:
  --url <url>       the service (default $TRANSFER_ROUTER_URL, else http://$HOST:$PORT when PORT is set,
                    else where the local service in $DATA_DIR (./data) says it listens, else http://127.0.0.1:8080)
  --token <token>   admin token (default $ADMIN_TOKEN, else the local token in $DATA_DIR/admin-token)
  -h, --help

${DEPLOY_OPTIONS}`;

type Call = { method: 'GET' | 'POST' | 'PATCH'; path: string; body?: unknown };

/** Maps the command line to one admin API call. */
function toCall(
  positionals: string[],
  values: {
    name?: string;
    settings?: string;
    mode?: string;
    to?: string;
    lamports?: string;
    mint?: string;
    amount?: string;
  },
): Call {
  const [group, action, id] = positionals;
  const need = (value: string | undefined, what: string) => {
    if (!value) throw new UsageError(`missing ${what}`);
    return value;
  };
  const settings = () => {
    if (values.settings === undefined) return {};
    try {
      return { settings: JSON.parse(values.settings) };
    } catch {
      throw new UsageError('--settings must be JSON, e.g. \'{"defaultHops":5}\'');
    }
  };
  switch (`${group} ${action}`) {
    case 'integrations list':
      return { method: 'GET', path: '/admin/v1/integrations' };
    case 'integrations show':
      return { method: 'GET', path: `/admin/v1/integrations/${need(id, '<id>')}` };
    case 'integrations create':
      return {
        method: 'POST',
        path: '/admin/v1/integrations',
        body: { name: need(values.name, '--name'), ...settings() },
      };
    case 'integrations update':
      return {
        method: 'PATCH',
        path: `/admin/v1/integrations/${need(id, '<id>')}`,
        body: { ...(values.name ? { name: values.name } : {}), ...settings() },
      };
    case 'integrations suspend':
    case 'integrations resume':
      return { method: 'POST', path: `/admin/v1/integrations/${need(id, '<id>')}/${action}` };
    case 'keys list':
      return { method: 'GET', path: `/admin/v1/integrations/${need(id, '<integrationId>')}/keys` };
    case 'keys create':
      return {
        method: 'POST',
        path: `/admin/v1/integrations/${need(id, '<integrationId>')}/keys`,
        body: { mode: need(values.mode, '--mode test|live') },
      };
    case 'keys revoke':
      return { method: 'POST', path: `/admin/v1/keys/${need(id, '<keyId>')}/revoke` };
    case 'platform status':
      return { method: 'GET', path: '/admin/v1/platform' };
    case 'platform init':
      return { method: 'POST', path: '/admin/v1/platform/init' };
    case 'platform withdraw':
      if (values.lamports === undefined && values.mint === undefined)
        throw new UsageError('give --lamports, or --mint and --amount, or both');
      if ((values.mint === undefined) !== (values.amount === undefined))
        throw new UsageError('give --mint and --amount together');
      return {
        method: 'POST',
        path: '/admin/v1/platform/withdraw',
        body: {
          destination: need(values.to, '--to <wallet>'),
          ...(values.lamports === undefined ? {} : { lamports: values.lamports }),
          ...(values.mint === undefined ? {} : { mint: values.mint, amountRaw: values.amount }),
        },
      };
    case 'rewards show':
      return { method: 'GET', path: `/admin/v1/integrations/${need(id, '<integrationId>')}/rewards` };
    case 'rewards coverage':
      return { method: 'GET', path: '/admin/v1/rewards/coverage' };
    default:
      throw new UsageError(`unknown command: ${positionals.join(' ') || '(none)'}`);
  }
}

class UsageError extends Error {}

/** The service did not answer: the message says where the CLI looked and why there. */
class UnreachableError extends Error {}

/** Where the service is, and what said so. */
async function serviceUrl(explicit: string | undefined): Promise<{ url: string; from: string }> {
  if (explicit) return { url: explicit, from: '--url' };
  const defaults = loadCliDefaults();
  if (defaults.url) return defaults.url;
  const file = serviceFilePath(defaults.dataDir);
  const running = await readServiceFile(defaults.dataDir);
  if (running) return { url: running.url, from: `recorded by the running service in ${file}` };
  return { url: defaults.defaultUrl, from: `the default; no running service is recorded in ${file}` };
}

async function adminToken(explicit: string | undefined): Promise<string> {
  const defaults = loadCliDefaults();
  const token = explicit ?? defaults.adminToken;
  if (token) return token;
  try {
    return (await readFile(adminTokenPath(defaults.dataDir), 'utf8')).trim();
  } catch {
    throw new UsageError(
      `no admin token: pass --token, set ADMIN_TOKEN, or run in the directory whose data/ the local service created (looked in ${adminTokenPath(defaults.dataDir)})`,
    );
  }
}

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      name: { type: 'string' },
      settings: { type: 'string' },
      mode: { type: 'string' },
      to: { type: 'string' },
      lamports: { type: 'string' },
      mint: { type: 'string' },
      amount: { type: 'string' },
      rpc: { type: 'string' },
      'admin-keypair': { type: 'string' },
      'program-keypair': { type: 'string' },
      'program-id': { type: 'string' },
      elf: { type: 'string' },
      'priority-fee': { type: 'string' },
      concurrency: { type: 'string' },
      'close-buffer': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || positionals.length === 0) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  if (positionals.join(' ') === 'platform deploy')
    return platformDeploy(values, (message) => new UsageError(message));
  const call = toCall(positionals, values);
  const token = await adminToken(values.token);
  const service = await serviceUrl(values.url);
  const base = service.url.replace(/\/$/, '');
  let response: Response;
  try {
    response = await fetch(`${base}${call.path}`, {
      method: call.method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(call.method === 'POST' ? { 'idempotency-key': `cli-${randomBytes(12).toString('hex')}` } : {}),
      },
      ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
    });
  } catch (error) {
    // fetch reports only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, ...) is its cause.
    const cause = (error as Error).cause as NodeJS.ErrnoException | undefined;
    throw new UnreachableError(
      `cannot reach the service at ${base} (${service.from}): ${cause?.code ?? cause?.message ?? (error as Error).message}.\n` +
        'Is it running (npm start)? Otherwise pass --url or set TRANSFER_ROUTER_URL.',
    );
  }
  const text = await response.text();
  let output = text;
  let body: unknown;
  try {
    body = JSON.parse(text);
    output = JSON.stringify(body, null, 2);
  } catch {
    // Not JSON: print as received.
  }
  // An init that could not act answers 200 with what stands in the way: a failure for a script.
  const refused = (body as { action?: unknown } | undefined)?.action === 'refused';
  const ok = response.ok && !refused;
  (ok ? process.stdout : process.stderr).write(`${output}\n`);
  // What the service flags (a live key on a local chain) is said apart from the answer too.
  const warning = (body as { warning?: unknown } | undefined)?.warning;
  if (typeof warning === 'string') process.stderr.write(`warning: ${warning}\n`);
  return ok ? 0 : 1;
}

run(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${message}\n${error instanceof UsageError ? `\n${USAGE}\n` : ''}`);
    process.exit(error instanceof UnreachableError ? 1 : 2);
  },
);
