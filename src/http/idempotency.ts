import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import { isValidIdempotencyKey, requestFingerprint } from '../domain/idempotency.ts';
import type { Db, Sql } from '../store/db.ts';
import type { Claim, IdempotencyStore } from '../store/idempotency.ts';

/** `required` on the API's mutations, `optional` where a key is honoured but not demanded. */
export type IdempotencyPolicy = 'required' | 'optional';

declare module 'fastify' {
  interface FastifyContextConfig {
    idempotency?: IdempotencyPolicy;
  }
  interface FastifyRequest {
    /** The request's claimed Idempotency-Key; `settled` once its response is recorded or released. */
    idempotencyClaim: (Claim & { settled: boolean }) | null;
  }
}

export interface IdempotencyDeps {
  db: Db;
  store: IdempotencyStore;
  clock: Clock;
}

/** Runs a change in one transaction; see {@link createChangeRunner}. */
export type ChangeRunner = <T>(
  request: FastifyRequest,
  reply: FastifyReply,
  change: (tx: Sql) => Promise<T>,
) => Promise<T>;

/**
 * Runs a handler's change in one transaction and, when the request claimed an Idempotency-Key,
 * records the response it answers with (`change`'s result as the route serialises it) in that same
 * transaction: the change, its events and the record of having answered commit together, so a
 * crash can never leave a change whose retry would run it again. If the claim was taken over
 * meanwhile (a request that outlived the claim's timeout) the change is rolled back (MH_072).
 */
export function createChangeRunner(deps: IdempotencyDeps): ChangeRunner {
  return async (request, reply, change) => {
    const claim = request.idempotencyClaim;
    if (!claim || claim.settled) return deps.db.transaction(change);
    const result = await deps.db.transaction(async (tx) => {
      const result = await change(tx);
      const body = String(reply.serialize(result));
      if (!(await deps.store.complete(tx, claim, { status: reply.statusCode, body }, deps.clock.now()))) {
        throw inProgress();
      }
      return result;
    });
    claim.settled = true;
    return result;
  };
}

const inProgress = () =>
  new AppError(
    'MH_072',
    'A request with this Idempotency-Key is still in progress. Retry once it has finished.',
    { param: 'Idempotency-Key' },
  );

interface IdempotencyScopeDeps extends IdempotencyDeps {
  /** The scope of a request's keys (keys are per API key). */
  scopeOf: (request: FastifyRequest) => string;
  defaultPolicy: IdempotencyPolicy;
}

/**
 * Stripe's idempotency for POST requests of a scope: the first response to a key (status and
 * body, errors included) is stored and replayed for the key's lifetime with
 * `Idempotent-Replayed: true`; the same key with a different request is MH_071, and while the
 * first is still running MH_072. A 5xx is not stored: it says the service failed, not that the
 * request did, so a retry with the same key runs again. Routes that change state record their
 * response with their change ({@link createChangeRunner}); every other response is recorded here
 * as it is sent.
 */
export function registerIdempotency(scope: FastifyInstance, deps: IdempotencyScopeDeps) {
  scope.decorateRequest('idempotencyClaim', null);
  const claimKey = (request: FastifyRequest, reply: FastifyReply) =>
    claimIdempotencyKey(deps, request, reply);
  const storeResponse = (request: FastifyRequest, reply: FastifyReply, payload: unknown) =>
    storeIdempotentResponse(deps, request, reply, payload);
  const releaseUnsettled = (request: FastifyRequest) => releaseUnsettledClaim(deps.store, request);

  // Attached to POST routes only, so reads pay nothing for it.
  scope.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.includes('POST')) return;
    route.preValidation = appendHook(route.preValidation, claimKey as never);
    route.onSend = appendHook(route.onSend, storeResponse as never);
    route.onResponse = appendHook(route.onResponse, releaseUnsettled as never);
  });
}

/** A route's hooks of one kind with one more after them. */
function appendHook<T>(existing: T | T[] | undefined, hook: T): T[] {
  return existing === undefined ? [hook] : [...(Array.isArray(existing) ? existing : [existing]), hook];
}

/** The request's Idempotency-Key, undefined if it has none where none is demanded; MH_070 if invalid or missing. */
function idempotencyKey(request: FastifyRequest, policy: IdempotencyPolicy): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) {
    if (policy === 'optional') return undefined;
    throw new AppError(
      'MH_070',
      'Missing Idempotency-Key header. Send a unique key (8-64 characters of letters, digits, ".", "_", "-") with every POST.',
      { param: 'Idempotency-Key' },
    );
  }
  if (typeof header !== 'string' || !isValidIdempotencyKey(header)) {
    throw new AppError(
      'MH_070',
      'Invalid Idempotency-Key header: use 8-64 characters of letters, digits, ".", "_" and "-".',
      { param: 'Idempotency-Key' },
    );
  }
  return header;
}

/**
 * Before validation: claims the request's key, or answers at once by replaying the key's stored
 * response, or refuses a key used for another request (MH_071) or still in progress (MH_072).
 */
async function claimIdempotencyKey(deps: IdempotencyScopeDeps, request: FastifyRequest, reply: FastifyReply) {
  const key = idempotencyKey(request, request.routeOptions.config?.idempotency ?? deps.defaultPolicy);
  if (key === undefined) return;
  const result = await deps.store.claim({
    scope: deps.scopeOf(request),
    key,
    requestHash: requestFingerprint({
      method: request.method,
      route: request.routeOptions.url ?? request.url,
      params: request.params,
      body: request.body,
    }),
    method: request.method,
    path: request.url,
    now: deps.clock.now(),
  });
  switch (result.kind) {
    case 'claimed':
      request.idempotencyClaim = { ...result.claim, settled: false };
      return;
    case 'mismatch':
      throw new AppError(
        'MH_071',
        'This Idempotency-Key was already used with a different request. Use a new key for a new request.',
        { param: 'Idempotency-Key' },
      );
    case 'in_progress':
      throw inProgress();
    case 'completed':
      return reply
        .code(result.response.status)
        .header('idempotent-replayed', 'true')
        .type('application/json; charset=utf-8')
        .send(result.response.body);
  }
}

/** As the response is sent: records it for the claimed key, or releases the key after a 5xx. */
async function storeIdempotentResponse(
  deps: IdempotencyDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
) {
  const claim = request.idempotencyClaim;
  if (!claim || claim.settled) return payload;
  claim.settled = true;
  try {
    if (reply.statusCode >= 500 || typeof payload !== 'string') await deps.store.release(claim);
    else {
      await deps.store.complete(
        deps.db,
        claim,
        { status: reply.statusCode, body: payload },
        deps.clock.now(),
      );
    }
  } catch (error) {
    // The request itself succeeded or failed on its own terms; the client gets that answer. The
    // claim stays in progress until it is considered abandoned.
    request.log.error({ err: error }, 'storing the idempotent response failed');
  }
  return payload;
}

// A claim whose response was never stored (the client went away, storing failed) is released
// so that the client's retry runs instead of waiting for the claim to be considered abandoned.
async function releaseUnsettledClaim(store: IdempotencyStore, request: FastifyRequest) {
  const claim = request.idempotencyClaim;
  if (claim && !claim.settled) {
    claim.settled = true;
    await store.release(claim).catch((error) => request.log.warn({ err: error }, 'releasing claim failed'));
  }
}
