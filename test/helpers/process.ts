import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = join(import.meta.dirname, '..', '..');
const MAIN = join(ROOT, 'src', 'main.ts');

export interface ServiceProcess {
  /** Where the API listens; for workers alone, where they serve their metrics. */
  url: string;
  /** The process started: the service, or npm when started through `npm start`. */
  child: ChildProcess;
  /** The service's own process (the `pid` of its log lines). */
  pid: number;
  logs: string[];
  /** Sends a signal and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** The environment of a service process: local mode on free ports, in `dataDir`. */
function serviceEnv(dataDir: string, env: Record<string, string>) {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    MODE: 'local',
    HOST: '127.0.0.1',
    PORT: '0',
    LOCAL_RPC_PORT: '0',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    ...env,
  };
}

/**
 * Starts `node src/main.ts` as a separate process (or `npm start`, as a newcomer does, in a process
 * group of its own; with `workersOnly`, `npm run worker`'s `node src/main.ts --workers-only`) and
 * resolves once it listens. `cwd` (node only) is where it runs, which a relative DATA_DIR and the
 * default data directory are resolved against (the repository's root unless given).
 */
export async function startServiceProcess(
  env: Record<string, string>,
  options: { via?: 'node' | 'npm'; workersOnly?: boolean; cwd?: string } = {},
): Promise<ServiceProcess> {
  // A DATA_DIR given by the caller outlives the process; otherwise a fresh one is removed at stop.
  const dataDir = env.DATA_DIR ?? (await mkdtemp(join(tmpdir(), 'tr-process-')));
  const [command, args] =
    options.via === 'npm'
      ? ['npm', ['start', '--silent']]
      : [process.execPath, [MAIN, ...(options.workersOnly ? ['--workers-only'] : [])]];
  const ready = options.workersOnly
    ? { line: 'Transfer Router workers running', url: /"pid":(\d+),.*"metrics":"(http:\/\/[^"]+)"/ }
    : { line: 'Transfer Router listening', url: /"pid":(\d+),"url":"(http:\/\/[^"]+)"/ };
  const child = spawn(command, args, {
    cwd: options.via === 'npm' ? ROOT : (options.cwd ?? ROOT),
    env: serviceEnv(dataDir, env),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.via === 'npm',
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const removeDataDir = () => (env.DATA_DIR ? undefined : rm(dataDir, { recursive: true, force: true }));
  const listening = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Under npm, the whole group: npm does not pass SIGKILL on.
      if (options.via === 'npm') process.kill(-child.pid!, 'SIGKILL');
      else child.kill('SIGKILL');
      reject(new Error(`service did not start within 60 s:\n${logs.join('\n')}`));
    }, 60_000);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        logs.push(line);
        const match = ready.url.exec(line);
        if (match && line.includes(ready.line)) {
          clearTimeout(timer);
          resolve({ pid: Number(match[1]), url: match[2]! });
        }
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${logs.join('\n')}`));
    });
  }).catch(async (error) => {
    await exited;
    await removeDataDir();
    throw error;
  });
  return {
    ...listening,
    child,
    logs,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      const code = await exited;
      await removeDataDir();
      return code;
    },
  };
}

/**
 * Runs `node src/main.ts` (or `npm start --silent`) until it exits (a start that fails) and
 * resolves with its exit code and output; `cwd` as for {@link startServiceProcess}.
 */
export function runServiceProcess(
  env: Record<string, string> & { DATA_DIR: string },
  options: { via?: 'node' | 'npm'; cwd?: string } = {},
) {
  const [command, args] = options.via === 'npm' ? ['npm', ['start', '--silent']] : [process.execPath, [MAIN]];
  return collect(
    spawn(command, args, {
      cwd: options.via === 'npm' ? ROOT : (options.cwd ?? ROOT),
      env: serviceEnv(env.DATA_DIR, env),
    }),
  );
}

function collect(child: ChildProcess) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs the admin CLI and resolves with its exit code and output. */
export function runAdminCli(args: string[], env: Record<string, string> = {}) {
  return collect(
    spawn(process.execPath, ['bin/admin.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    }),
  );
}

/** Runs the demo (`npm run demo`'s script) until it exits and resolves with its exit code and output. */
export function runDemoCli(args: string[], env: Record<string, string> = {}) {
  return collect(
    spawn(process.execPath, ['bin/demo.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env },
    }),
  );
}

/** `npm run demo` running, its output read as it comes and its input open for Enter (`--step`). */
export interface DemoProcess {
  /** What the demo printed so far. */
  stdout(): string;
  /** Resolves with the first match of `pattern` in the demo's output, once it printed it. */
  printed(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Presses Enter in the demo's terminal: a line on its input. */
  enter(): void;
  /** Ends its input, then waits for it to exit (SIGTERM after 30 s); resolves with its code and output. */
  stop(): Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Starts `npm run demo -- <args>` as a person does, beside the service of `env.DATA_DIR`. */
export function startDemoProcess(args: string[], env: Record<string, string>): DemoProcess {
  const child = spawn('npm', ['run', '--silent', 'demo', '--', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return {
    stdout: () => stdout,
    printed(pattern, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const match = pattern.exec(stdout);
          if (!match) return false;
          clearTimeout(timer);
          child.stdout!.off('data', look);
          resolve(match);
          return true;
        };
        const timer = setTimeout(() => {
          child.stdout!.off('data', look);
          reject(new Error(`the demo did not print ${pattern} within ${timeoutMs} ms:\n${stdout}${stderr}`));
        }, timeoutMs);
        if (look()) return;
        child.stdout!.on('data', look);
        void exited.then(() => {
          if (look()) return;
          clearTimeout(timer);
          reject(new Error(`the demo exited without printing ${pattern}:\n${stdout}${stderr}`));
        });
      });
    },
    enter: () => child.stdin!.write('\n'),
    async stop() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGTERM'), 30_000);
      const code = await exited;
      clearTimeout(timer);
      return { code, stdout, stderr };
    },
  };
}

export interface ChainProcess {
  rpcUrl: string;
  /** Stops the chain (SIGTERM) and resolves with its exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts the chain alone as its own process, as `npm run localnet` does (the local-chain command),
 * in memory on free ports, and resolves once it prints its ready line.
 */
export async function startChainProcess(args: string[] = []): Promise<ChainProcess> {
  const child = spawn(
    process.execPath,
    ['packages/local-chain/src/serve.ts', '--port', '0', '--ephemeral', '--quiet', ...args],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output: string[] = [];
  const rpcUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the chain did not start within 30 s:\n${output.join('\n')}`));
    }, 30_000);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line);
        const ready = /^localnet ready rpcUrl=(\S+)/.exec(line);
        if (!ready) return;
        clearTimeout(timer);
        resolve(ready[1]!);
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`the chain exited with ${code}:\n${output.join('\n')}`));
    });
  });
  return {
    rpcUrl,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Whether a loopback port can be listened on now. */
export async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  const ok = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (ok) await new Promise((resolve) => server.close(resolve));
  return ok;
}
