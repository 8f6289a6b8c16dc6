import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = join(import.meta.dirname, '..', '..');

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  logs: string[];
  /** Sends a signal and resolves with the exit code once the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `node src/main.ts` as a separate process and resolves once it listens. */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  // A DATA_DIR given by the caller outlives the process; otherwise a fresh one is removed at stop.
  const dataDir = env.DATA_DIR ?? (await mkdtemp(join(tmpdir(), 'tr-process-')));
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      MODE: 'local',
      HOST: '127.0.0.1',
      PORT: '0',
      LOCAL_RPC_PORT: '0',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${logs.join('\n')}`)), 20_000);
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        logs.push(line);
        const match = /"url":"(http:\/\/[^"]+)"/.exec(line);
        if (match && line.includes('Transfer Router listening')) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    }
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${logs.join('\n')}`));
    });
  });
  return {
    url,
    child,
    logs,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null) child.kill(signal);
      const code = await exited;
      if (!env.DATA_DIR) await rm(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Runs the admin CLI and resolves with its exit code and output. */
export function runAdminCli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['bin/admin.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
