import { type ChildProcess, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import type { PlatformKeys } from '../../src/platform/platform.ts';
import { ENCRYPTION_KEY, type TestApp } from '../helpers/app.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** A worker process: its log lines (parsed), and how it ended once it has. */
export interface WorkerProcess {
  child: ChildProcess;
  logs: Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Asks it to stop (SIGTERM) and resolves once it has exited. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function watch(child: ChildProcess): WorkerProcess {
  const logs: Record<string, unknown>[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ msg: line });
      }
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    logs,
    exited,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Where a worker process finds the test app's database and chain, and the key its secrets are sealed with. */
export function sharedWith(t: TestApp) {
  return {
    DATABASE_URL: t.database.url,
    RPC_URL: t.chain.rpcUrl,
    ENCRYPTION_KEY: ENCRYPTION_KEY.toString('hex'),
  };
}

/**
 * What an `npm run worker` process needs to run beside the test app: its database and chain, the
 * platform's keys, metrics on a free port.
 */
export function workerProcessEnv(t: TestApp, keys: PlatformKeys): Record<string, string> {
  return {
    ...sharedWith(t),
    CLUSTER: 'localnet',
    PLATFORM_ADMIN_KEYPAIR: JSON.stringify(keys.admin.toKeygenArray()),
    SCREENING_AUTHORITY_KEYPAIR: JSON.stringify(keys.screeningAuthority.toKeygenArray()),
    PLATFORM_FEE_KEYPAIR: JSON.stringify(keys.feeWallet.toKeygenArray()),
    METRICS_PORT: '0',
  };
}

/**
 * Starts the keeper worker of test/keeper/fixtures/crashing-worker.ts on the test app's database
 * and chain; `env` adds its crash plan.
 */
export function startCrashingWorker(t: TestApp, env: Record<string, string> = {}): WorkerProcess {
  return watch(
    spawn(process.execPath, [join(ROOT, 'test/keeper/fixtures/crashing-worker.ts')], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...sharedWith(t), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** Polls `condition` until it holds; fails after `timeoutMs` saying `what` it waited for. */
export async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await delay(50);
  }
}
