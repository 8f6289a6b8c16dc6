import createClient from 'openapi-fetch';
import type { components, operations, paths } from './openapi.ts';

type Schemas = components['schemas'];

/** A transfer as `GET /transfers/{id}` shows it. */
export type Transfer = Schemas['Transfer'];
/** A transfer as the create call answers it: the quote-time fields. */
export type TransferQuote = Schemas['TransferQuote'];
export type TransferStatus = Transfer['status'];
export type TransferPhase = Transfer['phase'];
export type FeeEstimate = Schemas['FeeEstimate'];
/** What prepare answers as `preparedTxs`. */
export type PreparedTransactionBundle = Schemas['PreparedTransactionBundle'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type UsageSummary = Schemas['UsageSummary'];
export type ErrorEnvelope = Schemas['ErrorEnvelope'];

type JsonBody<Operation> = Operation extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;
type Query<Operation> = Operation extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

export type EstimateTransferRequest = JsonBody<operations['estimateTransfer']>;
export type CreateTransferRequest = JsonBody<operations['createTransfer']>;
export type ConfirmBroadcastRequest = JsonBody<operations['confirmBroadcast']>;
export type ConfirmFundingRequest = NonNullable<JsonBody<operations['confirmFunding']>>;
export type CreateWebhookRequest = JsonBody<operations['createWebhook']>;
export type ListTransfersQuery = Query<operations['listTransfers']>;
export type ListEventsQuery = Query<operations['listEvents']>;
export type ListWebhookDeliveriesQuery = Query<operations['listWebhookDeliveries']>;
export type UsageQuery = Query<operations['getUsage']>;
export type ListRewardClaimsQuery = Query<operations['listRewardClaims']>;

/** The error codes a client retries on its own: rate limit, a concurrent retry, a dependency down. */
export const RETRIED_CODES: readonly string[] = ['MH_004', 'MH_072', 'MH_091'];

/**
 * An error answered by the service: `code` is its stable `MH_` code (docs/integrating.md says
 * what to do about each), `param` the field at fault, `requestId` what to quote to support.
 */
export class TransferRouterError extends Error {
  readonly code: string;
  readonly status: number;
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  /** Seconds the service asked to wait before retrying (`Retry-After`), when it did. */
  readonly retryAfterSeconds: number | undefined;

  constructor(input: {
    code: string;
    status: number;
    message: string;
    param?: string | undefined;
    requestId?: string | undefined;
    retryAfterSeconds?: number | undefined;
  }) {
    super(`${input.code}: ${input.message}`);
    this.name = 'TransferRouterError';
    this.code = input.code;
    this.status = input.status;
    this.param = input.param;
    this.requestId = input.requestId;
    this.retryAfterSeconds = input.retryAfterSeconds;
  }
}

/** Whether `error` is a {@link TransferRouterError}, with one of `codes` when given. */
export function isTransferRouterError(error: unknown, ...codes: string[]): error is TransferRouterError {
  return error instanceof TransferRouterError && (codes.length === 0 || codes.includes(error.code));
}

/** One retry the client is about to make, for logging. */
export interface RetryNotice {
  code: string;
  /** 1 for the first retry. */
  attempt: number;
  delayMs: number;
  method: string;
  url: string;
}

export interface TransferRouterClientOptions {
  /** The service, e.g. `http://127.0.0.1:8080` (paths carry their `/api/v1`). */
  baseUrl: string;
  /**
   * `mh_test_...` or `mh_live_...`. Keep it on your backend: in a browser, leave it out and point
   * `baseUrl` at your backend, which passes the calls on with the key added.
   */
  apiKey?: string;
  /** Retries of MH_004, MH_072 and MH_091 after the first answer (default 3; 0 turns them off). */
  maxRetries?: number;
  /** A retry that would wait longer than this is not made: the error is thrown (default 60 s). */
  maxRetryDelayMs?: number;
  /** Called before each retry. */
  onRetry?: (notice: RetryNotice) => void;
  /** A fresh Idempotency-Key for each call that is not given one (default `crypto.randomUUID()`). */
  idempotencyKey?: () => string;
  /** The fetch to use (default `globalThis.fetch`). */
  fetch?: (request: Request) => Promise<Response>;
  /** How the client waits between retries (default a timer); tests give their own. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
  /**
   * The Idempotency-Key of a POST. Omitted, each call gets a fresh one (its own retries keep it);
   * pass your own to make a call safe to repeat across restarts of your process.
   */
  idempotencyKey?: string;
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The `MH_` code of an error answer, or undefined when the body is not the error envelope. */
async function errorCode(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.json()) as Partial<ErrorEnvelope>;
    return typeof body.error?.code === 'string' ? body.error.code : undefined;
  } catch {
    return undefined;
  }
}

/** The error a failed answer stands for. */
function errorFrom(response: Response, body: unknown): TransferRouterError {
  const envelope = (body as Partial<ErrorEnvelope> | undefined)?.error;
  const retryAfter = retryAfterMs(response.headers);
  return new TransferRouterError({
    code: envelope?.code ?? (response.status >= 500 ? 'MH_090' : 'MH_016'),
    status: response.status,
    message: envelope?.message ?? `HTTP ${response.status} without an error envelope`,
    param: envelope?.param,
    requestId: envelope?.requestId ?? response.headers.get('x-request-id') ?? undefined,
    retryAfterSeconds: retryAfter === undefined ? undefined : Math.ceil(retryAfter / 1000),
  });
}

/** The data of a successful answer; a {@link TransferRouterError} for any other. */
async function unwrap<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await pending;
  if (!response.ok) throw errorFrom(response, error);
  return data as T;
}

/**
 * A typed client for the Transfer Router API. Each method is named after its operation's
 * `operationId` and answers the response body, or throws a {@link TransferRouterError}. Every POST
 * carries an Idempotency-Key (a fresh one unless given), and answers MH_004, MH_072 and MH_091
 * are retried with the same key after `Retry-After` (or a short backoff when the service gives
 * none). `raw` is the underlying openapi-fetch client for anything else.
 */
export function createTransferRouterClient(options: TransferRouterClientOptions) {
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const sleep = options.sleep ?? delay;
  const maxRetries = options.maxRetries ?? 3;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 60_000;
  const newKey = options.idempotencyKey ?? (() => crypto.randomUUID());

  /** Sends a request, retrying it (same body, same Idempotency-Key) while the answer says to. */
  async function fetchWithRetries(request: Request): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const response = await baseFetch(request.clone());
      if (attempt > maxRetries || ![409, 429, 503].includes(response.status)) return response;
      const code = await errorCode(response.clone());
      if (code === undefined || !RETRIED_CODES.includes(code)) return response;
      const delayMs = retryAfterMs(response.headers) ?? Math.min(500 * 2 ** (attempt - 1), maxRetryDelayMs);
      if (delayMs > maxRetryDelayMs) return response;
      await response.body?.cancel();
      options.onRetry?.({ code, attempt, delayMs, method: request.method, url: request.url });
      await sleep(delayMs, request.signal);
    }
  }

  const api = createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    fetch: fetchWithRetries,
    headers: options.apiKey === undefined ? {} : { 'x-api-key': options.apiKey },
  });
  const header = (call?: CallOptions) => ({ 'Idempotency-Key': call?.idempotencyKey ?? newKey() });
  const init = (call?: CallOptions) => (call?.signal ? { signal: call.signal } : {});

  return {
    /** The openapi-fetch client underneath (API key and retries included, no Idempotency-Key). */
    raw: api,

    /** `POST /transfers/estimate`: fees and the SOL the source spends, without creating anything. */
    estimateTransfer: (body: EstimateTransferRequest, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/transfers/estimate', { body, params: { header: header(call) }, ...init(call) }),
      ),
    /** `POST /transfers`: a transfer in status `quote`, priced until `expiresAt`. */
    createTransfer: (body: CreateTransferRequest, call?: CallOptions) =>
      unwrap(api.POST('/api/v1/transfers', { body, params: { header: header(call) }, ...init(call) })),
    /** `GET /transfers`: newest first. */
    listTransfers: (query: ListTransfersQuery = {}, call?: CallOptions) =>
      unwrap(api.GET('/api/v1/transfers', { params: { query }, ...init(call) })),
    /** `GET /transfers/{transferId}`. */
    getTransfer: (transferId: number, call?: CallOptions) =>
      unwrap(api.GET('/api/v1/transfers/{transferId}', { params: { path: { transferId } }, ...init(call) })),
    /** `GET /transfers/by-external/{externalId}`. */
    getTransferByExternalId: (externalId: string, call?: CallOptions) =>
      unwrap(
        api.GET('/api/v1/transfers/by-external/{externalId}', {
          params: { path: { externalId } },
          ...init(call),
        }),
      ),
    /** `POST /transfers/{transferId}/prepare`: the bundle the source signs (again after any interruption). */
    prepareTransfer: (transferId: number, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/transfers/{transferId}/prepare', {
          params: { path: { transferId }, header: header(call) },
          ...init(call),
        }),
      ),
    /** `POST /transfers/{transferId}/confirm-broadcast`: reports the signatures of what landed. */
    confirmBroadcast: (transferId: number, body: ConfirmBroadcastRequest, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/transfers/{transferId}/confirm-broadcast', {
          params: { path: { transferId }, header: header(call) },
          body,
          ...init(call),
        }),
      ),
    /** `POST /transfers/{transferId}/funding/refresh`: the transfer as the chain shows it now. */
    refreshFunding: (transferId: number, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/transfers/{transferId}/funding/refresh', {
          params: { path: { transferId }, header: header(call) },
          ...init(call),
        }),
      ),
    /** `POST /transfers/{transferId}/funding/confirm`: waits up to `timeoutSeconds` for the deployment. */
    confirmFunding: (transferId: number, body: ConfirmFundingRequest = {}, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/transfers/{transferId}/funding/confirm', {
          params: { path: { transferId }, header: header(call) },
          body,
          ...init(call),
        }),
      ),
    /** `POST /transfers/{transferId}/rescue/prepare`: the bundle that gives a failed route's funds back to the source. */
    prepareRescue: (transferId: number, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/transfers/{transferId}/rescue/prepare', {
          params: { path: { transferId }, header: header(call) },
          ...init(call),
        }),
      ),
    /** `POST /transfers/{transferId}/rescue/confirm`: reports the broadcast rescue's signatures. */
    confirmRescue: (transferId: number, rescueSignatures: string[], call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/transfers/{transferId}/rescue/confirm', {
          params: { path: { transferId }, header: header(call) },
          body: { rescueSignatures },
          ...init(call),
        }),
      ),
    /** `POST /transfers/{transferId}/reclaim-rent/prepare`: the bundle that returns a settled route's rent. */
    prepareRentReclaim: (transferId: number, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/transfers/{transferId}/reclaim-rent/prepare', {
          params: { path: { transferId }, header: header(call) },
          ...init(call),
        }),
      ),
    /** `POST /transfers/{transferId}/reclaim-rent/confirm`: reports the broadcast reclaim's signatures. */
    confirmRentReclaim: (transferId: number, reclaimSignatures: string[], call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/transfers/{transferId}/reclaim-rent/confirm', {
          params: { path: { transferId }, header: header(call) },
          body: { reclaimSignatures },
          ...init(call),
        }),
      ),
    /** `POST /webhooks`: registers an endpoint; its `secret` is shown only in this answer. */
    createWebhook: (body: CreateWebhookRequest, call?: CallOptions) =>
      unwrap(api.POST('/api/v1/webhooks', { body, params: { header: header(call) }, ...init(call) })),
    /** `GET /webhooks`. */
    listWebhooks: (call?: CallOptions) => unwrap(api.GET('/api/v1/webhooks', { ...init(call) })),
    /** `DELETE /webhooks/{endpointId}`. */
    deleteWebhook: (endpointId: number, call?: CallOptions) =>
      unwrap(
        api.DELETE('/api/v1/webhooks/{endpointId}', { params: { path: { endpointId } }, ...init(call) }),
      ),
    /** `POST /webhooks/{endpointId}/rotate-secret`: a new secret; the old one keeps signing for `overlapSeconds`. */
    rotateWebhookSecret: (endpointId: number, body: { overlapSeconds?: number } = {}, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/webhooks/{endpointId}/rotate-secret', {
          params: { path: { endpointId }, header: header(call) },
          body,
          ...init(call),
        }),
      ),
    /** `POST /webhooks/{endpointId}/enable`: re-enables an endpoint disabled after failing deliveries. */
    enableWebhook: (endpointId: number, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/webhooks/{endpointId}/enable', {
          params: { path: { endpointId }, header: header(call) },
          ...init(call),
        }),
      ),
    /** `POST /webhooks/{endpointId}/test`: sends a signed `ping` now and answers how it went. */
    testWebhook: (endpointId: number, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/webhooks/{endpointId}/test', {
          params: { path: { endpointId }, header: header(call) },
          ...init(call),
        }),
      ),
    /** `GET /webhooks/{endpointId}/deliveries`: the delivery attempts to an endpoint, newest first. */
    listWebhookDeliveries: (endpointId: number, query: ListWebhookDeliveriesQuery = {}, call?: CallOptions) =>
      unwrap(
        api.GET('/api/v1/webhooks/{endpointId}/deliveries', {
          params: { path: { endpointId }, query },
          ...init(call),
        }),
      ),
    /** `GET /events`: events with how their deliveries went. */
    listEvents: (query: ListEventsQuery = {}, call?: CallOptions) =>
      unwrap(api.GET('/api/v1/events', { params: { query }, ...init(call) })),
    /** `POST /events/{eventId}/resend`: delivers an event again (to one endpoint when given). */
    resendEvent: (eventId: string, body: { endpointId?: number } = {}, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/events/{eventId}/resend', {
          params: { path: { eventId }, header: header(call) },
          body,
          ...init(call),
        }),
      ),
    /** `GET /usage`: counts and volume of this key's integration and mode. */
    getUsage: (query: UsageQuery = {}, call?: CallOptions) =>
      unwrap(api.GET('/api/v1/usage', { params: { query }, ...init(call) })),
    /** `GET /rewards`: the integration's rewards, accrued, claimed and claimable. */
    getRewards: (call?: CallOptions) => unwrap(api.GET('/api/v1/rewards', { ...init(call) })),
    /** `POST /rewards/wallet`: where claims pay the rewards. */
    setRewardsWallet: (wallet: string, call?: CallOptions) =>
      unwrap(
        api.POST('/api/v1/rewards/wallet', {
          body: { wallet },
          params: { header: header(call) },
          ...init(call),
        }),
      ),
    /** `POST /rewards/claim`: pays what is claimable to the rewards wallet. */
    claimRewards: (call?: CallOptions) =>
      unwrap(api.POST('/api/v1/rewards/claim', { params: { header: header(call) }, ...init(call) })),
    /** `GET /rewards/claims`: the claims, newest first. */
    listRewardClaims: (query: ListRewardClaimsQuery = {}, call?: CallOptions) =>
      unwrap(api.GET('/api/v1/rewards/claims', { params: { query }, ...init(call) })),
    /** `GET /healthz`: the service is alive. */
    getHealth: (call?: CallOptions) => unwrap(api.GET('/healthz', { ...init(call) })),
    /** `GET /readyz`: the service's database and chain answer. */
    getReadiness: (call?: CallOptions) => unwrap(api.GET('/readyz', { ...init(call) })),
  };
}

/** The client {@link createTransferRouterClient} makes. */
export type TransferRouterClient = ReturnType<typeof createTransferRouterClient>;
