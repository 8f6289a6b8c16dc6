import { createServer, type Server } from 'node:net';
import type { Config } from './config.ts';

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

/** Raised when a port the configuration names cannot be listened on; the message says what to change. */
export class PortUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PortUnavailableError';
  }
}

/** Explains why `claim` could not be listened on, naming the variable that changes it. */
export function portUnavailable(claim: PortClaim, error: NodeJS.ErrnoException): PortUnavailableError {
  const where = `port ${claim.port} on ${claim.host}`;
  const what = `${claim.purpose}${claim.derived ? ` (${claim.derived})` : ''}`;
  // For a derived port (the WebSocket one, the variable's + 1), a value 2 above keeps both off it.
  const example = `${claim.variable}=${claim.port + (claim.derived ? 2 : 1)}`;
  const choose = `choose another port with ${claim.variable} (e.g. \`${example} npm start\`; 0 picks a free one)`;
  if (error.code === 'EADDRINUSE')
    return new PortUnavailableError(
      `Cannot start: ${where} is already in use, so ${what} cannot listen there. Stop the program that uses it, or ${choose}.`,
    );
  if (error.code === 'EACCES')
    return new PortUnavailableError(
      `Cannot start: ${where} needs privileges this process does not have, so ${what} cannot listen there; ${choose}.`,
    );
  return new PortUnavailableError(
    `Cannot start: ${what} cannot listen on ${where} (${error.code ?? error.message}); check ${claim.variable} and ${claim.hostVariable}.`,
  );
}

function listen(claim: PortClaim): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ port: claim.port, host: claim.host }, () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * Listens once on every fixed port (port 0 is skipped: the system picks a free one) and lets go, so
 * that a taken port stops a start at once, before the database is migrated, the chain started or
 * anything created. Each port is held until all are checked, so two settings naming one port are
 * caught too. Written by hand: listening the way the servers will is the only exact check (a
 * connect probe misses a port bound to another address), and port libraries search free ports
 * instead of checking given ones.
 */
export async function checkPortsFree(claims: readonly PortClaim[]): Promise<void> {
  const held: { claim: PortClaim; server: Server }[] = [];
  try {
    for (const claim of claims) {
      if (claim.port === 0) continue;
      const same = held.find((other) => other.claim.port === claim.port);
      try {
        held.push({ claim, server: await listen(claim) });
      } catch (error) {
        if (same && (error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
          const name = (c: PortClaim) => c.derived ?? c.variable;
          throw new PortUnavailableError(
            `Cannot start: ${name(same.claim)} and ${name(claim)} both name port ${claim.port} (${same.claim.purpose} and ${claim.purpose}); give ${claim.variable} another value.`,
          );
        }
        throw portUnavailable(claim, error as NodeJS.ErrnoException);
      }
    }
  } finally {
    await Promise.all(held.map(({ server }) => close(server)));
  }
}

/** The ports this start will listen on, with the variables that choose them. */
export function servicePorts(config: Config) {
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
  return { http, metrics, chain };
}

/** A listen failure of the local chain as the port it concerns, when it is one. */
export function chainPortError(error: unknown, claims: PortClaim[]): unknown {
  const failure = error as NodeJS.ErrnoException;
  if (failure.code !== 'EADDRINUSE' && failure.code !== 'EACCES') return error;
  // The chain's transport reports which address failed only in its message.
  const claim = claims.find((c) => failure.message.endsWith(`:${c.port}`)) ?? claims[0];
  return claim ? portUnavailable(claim, failure) : error;
}
