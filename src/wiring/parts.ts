import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Chain } from '../chain/types.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import type { PlatformAdmin } from '../platform/admin.ts';
import type { Platform } from '../platform/platform.ts';
import type { servicePorts } from '../port-check.ts';
import type { LocalChainProfile } from '../service-file.ts';
import type { Db } from '../store/db.ts';
import type { Store } from '../store/index.ts';
import type { SecretBox } from '../store/secret-box.ts';
import type { WebhookSender } from '../webhooks/sender.ts';

/**
 * What the service opens once and every role shares: the store, the chain, the platform, the
 * webhook sender, the metrics registry, and where to register what a role must stop at close.
 */
export interface ServiceParts {
  config: Config;
  clock: Clock;
  logger: Logger;
  /** Says what the start is doing (component `startup`). */
  progress: Logger;
  /** The ports this start listens on, to name the one a listen fails on. */
  ports: ReturnType<typeof servicePorts>;
  db: Db;
  /** This process's name on its database connections (see {@link connectionName}). */
  applicationName: string;
  store: Store;
  /** Seals secrets with the deployment's encryption key, and derives keys from it. */
  secrets: SecretBox;
  chain: Chain;
  /** The embedded chain's JSON-RPC endpoint, when it runs. */
  localRpcUrl: string | undefined;
  /** The embedded chain's profile, when it runs. */
  localChainProfile: LocalChainProfile | undefined;
  /** Subscribes to the embedded chain's time travels, when it runs; answers the unsubscribe function. */
  onChainTimeTravel: ((listener: () => void) => () => void) | undefined;
  /** The router program, protocol config, platform keys and route settings. */
  platform: Platform;
  platformAdmin: PlatformAdmin;
  webhookSender: WebhookSender;
  /** One registry: the API serves the keeper's metrics beside its own. */
  metrics: Registry;
  /** Registers a stop to run at close, before every stop registered earlier. */
  onStop(stop: () => Promise<unknown>): void;
}

/** A background worker as its role creates it: started once, stopped at close. */
export interface Worker {
  start(): void;
  stop(): Promise<unknown>;
}

/** Prefix of the PostgreSQL application name of API processes' connections, followed by a process id. */
export const API_PROCESS_NAME = 'transfer-router api ';

/** Connections are named per process, so that API processes can tell how many of them there are. */
export function connectionName(api: boolean): string {
  return `${api ? API_PROCESS_NAME : 'transfer-router worker '}${randomBytes(4).toString('hex')}`;
}

/** What a start has brought up, to stop in reverse: the last started stops first. */
export function createShutdown(logger: Logger) {
  const stops: (() => Promise<unknown>)[] = [];
  return {
    add(stop: () => Promise<unknown>) {
      stops.push(stop);
    },
    /** Runs every stop, latest first; one that fails is logged and the next still runs. */
    async run() {
      for (const stop of [...stops].reverse())
        await stop().catch((error) => logger.error({ err: error }, 'close failed'));
    },
  };
}
