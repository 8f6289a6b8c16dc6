// The proxy: a Fastify server that takes JSON-RPC requests, passes them to the upstream endpoint
// with undici, and meets each with the faults its plan draws; WebSocket connections pass through.
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import Fastify, { type FastifyReply } from 'fastify';
import { Agent, request } from 'undici';
import { createConfirmationLag } from './confirmations.ts';
import { createDice } from './dice.ts';
import { answer, parseExact, type RpcCall, readCall } from './json.ts';
import { type FaultPlan, faultPlan } from './plan.ts';
import { createStaleReads } from './stale.ts';

/** Options of startFaultProxy. */
export interface FaultProxyOptions {
  /** The JSON-RPC endpoint requests are passed to, e.g. `http://127.0.0.1:8899`. */
  upstream: string;
  /** The faults (none unless given), seed included. */
  faults?: Partial<FaultPlan>;
  host?: string;
  /** Port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /** The time in milliseconds, which places stale windows and ends processed periods (default `Date.now`). */
  now?: () => number;
}

/** What the proxy did so far, by fault. */
export interface FaultStats {
  requests: number;
  /** Requests passed on to the endpoint (a dropped send's preflight not counted). */
  passed: number;
  rateLimited: number;
  unavailable: number;
  held: number;
  droppedSends: number;
  staleWindows: number;
  staleAnswers: number;
  /** Answers that showed a landed transaction as processed only (or not yet found by getTransaction). */
  processedShown: number;
}

/** A running proxy. */
export interface FaultProxy {
  /** Where clients send their JSON-RPC requests. */
  url: string;
  plan: FaultPlan;
  stats(): FaultStats;
  close(): Promise<void>;
}

/** The first signature of a transaction as `sendTransaction` carries it (base58 unless said otherwise). */
function signatureOf(call: RpcCall): string {
  const [wire, config] = call.params as [string, { encoding?: string } | undefined];
  const bytes = config?.encoding === 'base64' ? Buffer.from(wire, 'base64') : getBase58Encoder().encode(wire);
  // One byte of signature count (fewer than 128 signatures), then the first signature.
  return getBase58Decoder().decode(bytes.subarray(1, 65));
}

/** Starts a proxy in front of `options.upstream`; resolves once it listens. */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const plan = faultPlan(options.faults);
  const dice = createDice(plan.seed);
  const now = options.now ?? Date.now;
  const stale = createStaleReads(plan, dice, now);
  const lag = createConfirmationLag(plan, dice, now);
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const closing = new AbortController();
  const counts = {
    requests: 0,
    passed: 0,
    rateLimited: 0,
    unavailable: 0,
    held: 0,
    droppedSends: 0,
    staleAnswers: 0,
  };

  async function pass(body: string) {
    counts.passed++;
    const response = await request(options.upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      dispatcher: agent,
      signal: closing.signal,
    });
    return { status: response.statusCode, text: await response.body.text() };
  }

  /** Whether the endpoint's preflight (a simulation, as `sendTransaction` runs it) passes the transaction. */
  async function preflightPasses(call: RpcCall): Promise<boolean> {
    const [wire, config = {}] = call.params as [string, Record<string, unknown> | undefined];
    if (config.skipPreflight === true) return true;
    const simulation = {
      encoding: config.encoding ?? 'base58',
      sigVerify: true,
      ...(config.preflightCommitment ? { commitment: config.preflightCommitment } : {}),
    };
    const { status, text } = await pass(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'preflight',
        method: 'simulateTransaction',
        params: [wire, simulation],
      }),
    );
    counts.passed--;
    const body = status === 200 ? (parseExact(text) as { result?: { value?: { err?: unknown } } }) : {};
    return body.result?.value?.err === null;
  }

  /** Sends the answer to `call`: as the endpoint gave it, or with its id and transaction statuses rewritten. */
  function finish(reply: FastifyReply, call: RpcCall | null, text: string, replayed: boolean) {
    if (!call || (!replayed && !lag.concerns(call))) return reply.type('application/json').send(text);
    const body = parseExact(text) as { result?: unknown; error?: unknown };
    if (!('result' in body))
      return reply.type('application/json').send(replayed ? { ...body, id: call.id } : text);
    const result = lag.concerns(call) ? lag.rewrite(call, body.result) : body.result;
    return reply.type('application/json').send(answer(call.id, result));
  }

  async function handle(text: string, reply: FastifyReply) {
    counts.requests++;
    const call = readCall(text);
    const roll = dice.next();
    if (roll < plan.rateLimited) {
      counts.rateLimited++;
      const error = {
        jsonrpc: '2.0',
        error: { code: 429, message: 'Too many requests' },
        id: call?.id ?? null,
      };
      return reply.code(429).header('retry-after', String(plan.retryAfterSeconds)).send(error);
    }
    if (roll < plan.rateLimited + plan.unavailable) {
      counts.unavailable++;
      return reply.code(503).type('text/plain').send('Service Unavailable');
    }
    if (roll < plan.rateLimited + plan.unavailable + plan.held) {
      counts.held++;
      await delay(plan.holdMs, undefined, { signal: closing.signal });
    }
    if (call?.method === 'sendTransaction' && dice.chance(plan.dropSends) && (await preflightPasses(call))) {
      counts.droppedSends++;
      return reply.type('application/json').send(answer(call.id, signatureOf(call)));
    }
    const key = call && stale.keyOf(call);
    const replayed = key ? stale.replay(key) : null;
    if (replayed !== null) {
      counts.staleAnswers++;
      return finish(reply, call, replayed, true);
    }
    const upstream = await pass(text);
    if (upstream.status !== 200) return reply.code(upstream.status).send(upstream.text);
    if (key) stale.remember(key, upstream.text);
    return finish(reply, call, upstream.text, false);
  }

  const app = Fastify({ bodyLimit: 5 * 1024 * 1024, forceCloseConnections: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  const stats = (): FaultStats => ({
    ...counts,
    staleWindows: stale.windows(),
    processedShown: lag.shown(),
  });
  app.get('/faults', async () => stats());
  app.post('*', async (req, reply) => {
    try {
      return await handle(String(req.body ?? ''), reply);
    } catch (error) {
      if (closing.signal.aborted) return reply.code(503).send('Service Unavailable');
      return reply
        .code(502)
        .type('text/plain')
        .send(`Bad Gateway: ${(error as Error).message}`);
    }
  });
  // WebSocket subscriptions pass through untouched: the upgrade request is replayed to the endpoint
  // and the two connections joined, so one URL serves both, as a provider's does.
  const tunnels = new Set<Socket>();
  app.server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const target = new URL(options.upstream);
    const upstream = connect(Number(target.port || 80), target.hostname, () => {
      const headers: string[] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        headers.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`);
      upstream.write(head);
      client.pipe(upstream).pipe(client);
    });
    for (const [socket, other] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      tunnels.add(socket);
      socket.on('error', () => other.destroy());
      socket.on('close', () => {
        tunnels.delete(socket);
        other.destroy();
      });
    }
  });
  const url = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  return {
    url,
    plan,
    stats,
    async close() {
      closing.abort();
      for (const socket of tunnels) socket.destroy();
      await app.close();
      await agent.close();
    },
  };
}
