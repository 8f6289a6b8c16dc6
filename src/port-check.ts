import { createServer, type Server } from 'node:net';
import { resolve } from 'node:path';
import { type Config, DEFAULT_DATA_DIR } from './config.ts';
import { readServiceFile } from './service-file.ts';

/** A port the service is about to listen on, and the variables that choose it. */
export interface PortClaim {
  port: number;
  host: string;
  /** What listens there, e.g. "the HTTP API". */
  purpose: string;
  /** The variable that moves it, e.g. "PORT". */
  variable: string;
  /** How the port follows that variable, when it is not the variable itself (e.g. "LOCAL_RPC_PORT + 1"). */
  derived?: string;
  /** The variable that chooses the address. */
  hostVariable: string;
}

/**
 * What a port's refusal may name: the data directories whose `service.json` says which ports a
 * running Transfer Router holds (this start's, and the default one another `npm start` uses), and
 * the command that starts this process, for the example.
 */
export interface PortContext {
  /** This start's data directory. */
  dataDir: string;
  dirs: string[];
  command: string;
}

/** Raised when a port the configuration names cannot be listened on; the message says what to change. */
export class PortUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortUnavailableError';
  }
}

/** How far above a taken value a free one is looked for before suggesting 0 (the system's pick). */
const SEARCH = 100;

function listen(port: number, host: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port, host }, () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Listens on every one of `ports`, or on none (resolving null) when any cannot be listened on. */
async function holdAll(ports: { port: number; host: string }[]): Promise<Server[] | null> {
  const servers: Server[] = [];
  for (const { port, host } of ports) {
    try {
      servers.push(await listen(port, host));
    } catch {
      await Promise.all(servers.map(close));
      return null;
    }
  }
  return servers;
}

/** The claims of `claims` grouped by the variable that moves them, in order. */
function byVariable(claims: readonly PortClaim[]): PortClaim[][] {
  const groups = new Map<string, PortClaim[]>();
  for (const claim of claims) groups.set(claim.variable, [...(groups.get(claim.variable) ?? []), claim]);
  return [...groups.values()];
}

/**
 * For each group (the claims one variable moves), a value of its variable whose every port can be
 * listened on: its current one when `keepCurrent` and free, else the nearest free one above it, or
 * 0 (the system picks) when none is near. Ports found are held until every group has its value,
 * so no two values overlap, and ports this process or another holds are never suggested.
 */
async function freeValues(groups: PortClaim[][], keepCurrent: boolean): Promise<[string, number][]> {
  const reserved: Server[] = [];
  try {
    const values: [string, number][] = [];
    for (const group of groups) {
      const base = group.find((claim) => !claim.derived) ?? group[0]!;
      let found = 0;
      const highest = Math.max(...group.map((claim) => claim.port));
      for (let step = keepCurrent ? 0 : 1; base.port !== 0 && step <= SEARCH; step++) {
        if (highest + step > 65535) break;
        const servers = await holdAll(group.map((claim) => ({ port: claim.port + step, host: claim.host })));
        if (!servers) continue;
        reserved.push(...servers);
        found = base.port + step;
        break;
      }
      values.push([base.variable, found]);
    }
    return values;
  } finally {
    await Promise.all(reserved.map(close));
  }
}

/** A value for every port variable of `claims` that this start can use: its current one when free. */
export function freePortSettings(claims: readonly PortClaim[]): Promise<[string, number][]> {
  return freeValues(byVariable(claims), true);
}

/** A running Transfer Router holding a port, per the service file in its data directory. */
interface PortOwner {
  pid: number;
  dataDir: string;
}

function portOf(url: string): number {
  const parsed = new URL(url);
  return Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
}

/** The ports running Transfer Routers hold (their API, their embedded chain's JSON-RPC and WebSocket ports). */
async function portOwners(context: PortContext): Promise<Map<number, PortOwner>> {
  const owners = new Map<number, PortOwner>();
  for (const dir of context.dirs) {
    const service = await readServiceFile(dir);
    if (!service || service.pid === process.pid) continue;
    const ports = [portOf(service.url)];
    if (service.rpcUrl) ports.push(portOf(service.rpcUrl));
    // The embedded chain serves WebSocket subscriptions on its RPC port's next.
    if (service.rpcUrl && service.chainProfile) ports.push(portOf(service.rpcUrl) + 1);
    for (const port of ports) if (!owners.has(port)) owners.set(port, { pid: service.pid, dataDir: dir });
  }
  return owners;
}

const list = (items: string[]) =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

/**
 * "choose another port with PORT (e.g. `PORT=8081 LOCAL_RPC_PORT=8899 npm start`; ...)": the
 * example sets the changed variables to the values found and keeps every other fixed port of
 * `claims` as it is, so that it names every port this start needs.
 */
function choose(changed: [string, number][], claims: readonly PortClaim[], command: string): string {
  const variables = changed.map(([variable]) => variable);
  const values = new Map(
    claims.filter((claim) => claim.port !== 0 && !claim.derived).map((claim) => [claim.variable, claim.port]),
  );
  for (const [variable, value] of changed) values.set(variable, value);
  const example = [...values].map(([variable, value]) => `${variable}=${value}`).join(' ');
  return `choose ${variables.length > 1 ? 'other ports' : 'another port'} with ${list(variables)} (e.g. \`${example} ${command}\`; 0 picks a free one)`;
}

const purposeOf = (claim: PortClaim) => `${claim.purpose}${claim.derived ? ` (${claim.derived})` : ''}`;

/**
 * Explains ports found in use: by whom when a running Transfer Router holds them (its pid and data
 * directory, from its service file), and values of their variables that are free now.
 */
async function portsInUse(
  taken: PortClaim[],
  claims: readonly PortClaim[],
  context: PortContext,
): Promise<PortUnavailableError> {
  const variables = new Set(taken.map((claim) => claim.variable));
  const values = await freeValues(byVariable(claims.filter((claim) => variables.has(claim.variable))), false);
  const found = await portOwners(context);
  const owners = taken.map((claim) => found.get(claim.port));
  const named = (owner: PortOwner) =>
    owner.dataDir === context.dataDir ? 'on this DATA_DIR' : `DATA_DIR ${owner.dataDir}`;
  const one = new Set(owners.map((owner) => owner?.pid)).size === 1;
  const owner = one ? owners[0] : undefined;
  const hosts = new Set(taken.map((claim) => claim.host));
  const ports = taken.map((claim, index) => {
    const at = hosts.size > 1 ? ` on ${claim.host}` : '';
    if (one) return `${claim.port}${at}`;
    const by = owners[index];
    return `${claim.port}${at} (${by ? `another Transfer Router: pid ${by.pid}, ${named(by)}` : 'another program'})`;
  });
  const where = `${taken.length > 1 ? 'ports' : 'port'} ${list(ports)}${hosts.size === 1 ? ` on ${taken[0]!.host}` : ''}`;
  const by = owner ? ` by another Transfer Router (pid ${owner.pid}, ${named(owner)})` : '';
  const stop = owner
    ? 'Stop it'
    : !one
      ? 'Stop them'
      : taken.length > 1
        ? 'Stop the programs that use them'
        : 'Stop the program that uses it';
  return new PortUnavailableError(
    `Cannot start: ${where} ${taken.length > 1 ? 'are' : 'is'} already in use${by}, so ${list(taken.map(purposeOf))} cannot listen there. ${stop}, or ${choose(values, claims, context.command)}.`,
  );
}

/**
 * Explains why `claim` could not be listened on, naming the variable that changes it and a free
 * value for it; `group` is every claim of this start that its variable moves.
 */
export async function portUnavailable(
  claim: PortClaim,
  error: NodeJS.ErrnoException,
  context: PortContext,
  group: readonly PortClaim[] = [claim],
): Promise<PortUnavailableError> {
  if (error.code === 'EADDRINUSE') return portsInUse([claim], group, context);
  const where = `port ${claim.port} on ${claim.host}`;
  if (error.code === 'EACCES')
    return new PortUnavailableError(
      `Cannot start: ${where} needs privileges this process does not have, so ${purposeOf(claim)} cannot listen there; ${choose(await freeValues([[...group]], false), group, context.command)}.`,
    );
  return new PortUnavailableError(
    `Cannot start: ${purposeOf(claim)} cannot listen on ${where} (${error.code ?? error.message}); check ${claim.variable} and ${claim.hostVariable}.`,
  );
}

/**
 * Listens once on every fixed port (port 0 is skipped: the system picks a free one) and lets go, so
 * that a taken port stops a start at once, before the database is migrated, the chain started or
 * anything created. Every taken port is reported at once, with values that are free for all of
 * them; each port is held until all are checked, so two settings naming one port are caught too.
 * Written by hand: listening the way the servers will is the only exact check (a connect probe
 * misses a port bound to another address), and port libraries search free ports instead of
 * checking given ones.
 */
export async function checkPortsFree(claims: readonly PortClaim[], context: PortContext): Promise<void> {
  const held: { claim: PortClaim; server: Server }[] = [];
  const taken: PortClaim[] = [];
  try {
    for (const claim of claims) {
      if (claim.port === 0) continue;
      try {
        held.push({ claim, server: await listen(claim.port, claim.host) });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') {
          const group = claims.filter((other) => other.variable === claim.variable);
          throw await portUnavailable(claim, error as NodeJS.ErrnoException, context, group);
        }
        const same = [...held.map((other) => other.claim), ...taken].find(
          (other) => other.port === claim.port,
        );
        if (same) {
          const name = (c: PortClaim) => c.derived ?? c.variable;
          throw new PortUnavailableError(
            `Cannot start: ${name(same)} and ${name(claim)} both name port ${claim.port} (${same.purpose} and ${claim.purpose}); give ${claim.variable} another value.`,
          );
        }
        taken.push(claim);
      }
    }
    if (taken.length > 0) throw await portsInUse(taken, claims, context);
  } finally {
    await Promise.all(held.map(({ server }) => close(server)));
  }
}

/**
 * The ports this start will listen on, with the variables that choose them, and what their
 * refusal may name; `command` starts this process (`npm start`, `npm run worker`).
 */
export function servicePorts(config: Config, command = 'npm start') {
  const http: PortClaim = {
    port: config.http.port,
    host: config.http.host,
    purpose: 'the HTTP API',
    variable: 'PORT',
    hostVariable: 'HOST',
  };
  // Served only by a process without the API (the API serves /metrics itself).
  const metrics: PortClaim = {
    port: config.metricsPort,
    host: config.http.host,
    purpose: 'the metrics endpoint of the workers',
    variable: 'METRICS_PORT',
    hostVariable: 'HOST',
  };
  const chain: PortClaim[] = [];
  if (!config.chain.rpcUrl) {
    const { localRpcPort: port, localRpcHost: host } = config.chain;
    const common = { host, variable: 'LOCAL_RPC_PORT', hostVariable: 'LOCAL_RPC_HOST' };
    chain.push({ ...common, port, purpose: "the local chain's JSON-RPC endpoint" });
    // The chain serves WebSocket subscriptions on the next port too (none to check when it picks).
    if (port !== 0)
      chain.push({
        ...common,
        port: port + 1,
        purpose: "the local chain's WebSocket endpoint",
        derived: 'LOCAL_RPC_PORT + 1',
      });
  }
  const context: PortContext = {
    dataDir: config.dataDir,
    dirs: [...new Set([config.dataDir, resolve(DEFAULT_DATA_DIR)])],
    command,
  };
  return { http, metrics, chain, context };
}

/** A listen failure of the local chain as the port it concerns, when it is one. */
export async function chainPortError(
  error: unknown,
  claims: PortClaim[],
  context: PortContext,
): Promise<unknown> {
  const failure = error as NodeJS.ErrnoException;
  if (failure.code !== 'EADDRINUSE' && failure.code !== 'EACCES') return error;
  // The chain's transport reports which address failed only in its message.
  const claim = claims.find((c) => failure.message.endsWith(`:${c.port}`)) ?? claims[0];
  return claim ? portUnavailable(claim, failure, context, claims) : error;
}
