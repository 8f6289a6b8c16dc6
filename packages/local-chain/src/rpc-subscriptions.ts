// WebSocket subscriptions of the local endpoint, fed by the ledger's slot and transaction events:
// signatures, slots and roots, accounts, program accounts and transaction logs, with the
// parameters, notification shapes and error codes of a validator's PubSub service. Signature and
// account subscriptions notify once their commitment is reached (default `finalized`, as on a
// validator); program and logs subscriptions notify as transactions are processed.
import { type WebSocket, WebSocket as WebSocketState } from 'ws';
import { decodeBase58Exact, encodeBase58 } from './base58.ts';
import type { TxRecord } from './history.ts';
import { keyOf } from './keys.ts';
import type { Commitment, Ledger } from './ledger.ts';
import { accountEncoding, accountFilter, errorBody, invalidParams, RpcError, uiAccount } from './rpc-json.ts';

interface Subscription {
  id: number;
  socket: WebSocket;
  onSlot?(slot: number): void;
  onTransaction?(record: TxRecord, keys: Uint8Array[], writable: Uint8Array[]): void;
}

type Config = Record<string, unknown>;

const UNSUBSCRIBE = new Set([
  'signatureUnsubscribe',
  'slotUnsubscribe',
  'rootUnsubscribe',
  'accountUnsubscribe',
  'programUnsubscribe',
  'logsUnsubscribe',
]);

function address(value: unknown): Uint8Array {
  const bytes = typeof value === 'string' ? decodeBase58Exact(value, 32) : null;
  if (!bytes) throw invalidParams('Invalid param: Invalid');
  return bytes;
}

function configOf(value: unknown): Config {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Config) : {};
}

function commitmentOf(config: Config): Commitment {
  const commitment = config.commitment ?? 'finalized';
  if (commitment !== 'processed' && commitment !== 'confirmed' && commitment !== 'finalized')
    throw invalidParams(`Invalid param: unknown commitment ${String(commitment)}`);
  return commitment;
}

const RANK: Record<Commitment, number> = { processed: 0, confirmed: 1, finalized: 2 };

/** What tells two states of an account apart. */
function fingerprint(account: ReturnType<Ledger['getAccount']>): string {
  return account
    ? `${account.lamports}:${keyOf(account.owner)}:${Buffer.from(account.data).toString('base64')}`
    : 'none';
}

/** Minimal logger (pino-compatible). */
export interface ChainLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** The subscriptions of every connected socket. */
export function createSubscriptions(ledger: Ledger, log?: ChainLog) {
  let nextId = 0;
  const subscriptions = new Map<number, Subscription>();

  function notify(sub: Subscription, method: string, result: unknown) {
    if (sub.socket.readyState !== WebSocketState.OPEN) return;
    sub.socket.send(JSON.stringify({ jsonrpc: '2.0', method, params: { result, subscription: sub.id } }));
  }

  // Each sets up a new subscription from the request's params; what it returns runs once the
  // subscription id has been answered.
  const subscribe: Record<string, (sub: Subscription, params: unknown[]) => (() => void) | undefined> = {
    signatureSubscribe(sub, params) {
      const signature = params[0];
      if (typeof signature !== 'string' || !decodeBase58Exact(signature, 64))
        throw invalidParams('Invalid param: Invalid');
      const commitment = commitmentOf(configOf(params[1]));
      // The transaction's status, once it has reached the commitment asked for.
      const reached = (): TxRecord | null => {
        const record = ledger.signatureStatus(signature, false);
        if (!record) return null;
        const status = ledger.confirmationOf(record.slot).confirmationStatus;
        return RANK[status] >= RANK[commitment] ? record : null;
      };
      const done = (record: TxRecord) => {
        notify(sub, 'signatureNotification', {
          context: { slot: record.slot },
          value: { err: record.err?.json ?? null },
        });
        subscriptions.delete(sub.id);
      };
      const ready = reached();
      if (ready) return () => done(ready);
      const check = () => {
        const record = reached();
        if (record) done(record);
      };
      sub.onTransaction = (record) => {
        if (record.signature === signature) check();
      };
      if (!ledger.instant) sub.onSlot = check;
      return undefined;
    },
    slotSubscribe(sub) {
      sub.onSlot = (slot) =>
        notify(sub, 'slotNotification', {
          parent: ledger.block(slot).parentSlot,
          root: ledger.slot('finalized'),
          slot,
        });
      return undefined;
    },
    rootSubscribe(sub) {
      let root = -1;
      sub.onSlot = () => {
        const finalized = ledger.slot('finalized');
        if (finalized > root) notify(sub, 'rootNotification', finalized);
        root = finalized;
      };
      return undefined;
    },
    accountSubscribe(sub, params) {
      const key = address(params[0]);
      const config = configOf(params[1]);
      const encoding = accountEncoding(config.encoding ?? 'binary');
      const commitment = commitmentOf(config);
      const wanted = keyOf(key);
      const send = (slot: number) => {
        const account = ledger.getAccount(key, commitment);
        notify(sub, 'accountNotification', {
          context: { slot },
          value: account && uiAccount(ledger, account, encoding),
        });
      };
      if (ledger.instant || commitment === 'processed') {
        sub.onTransaction = (record, _keys, writable) => {
          if (writable.some((k) => keyOf(k) === wanted)) send(record.slot);
        };
        return undefined;
      }
      // At a higher commitment, a change shows once the block that made it has reached it.
      let seen = fingerprint(ledger.getAccount(key, commitment));
      sub.onSlot = () => {
        const now = fingerprint(ledger.getAccount(key, commitment));
        if (now === seen) return;
        seen = now;
        send(ledger.slot(commitment));
      };
      return undefined;
    },
    programSubscribe(sub, params) {
      const program = keyOf(address(params[0]));
      const config = configOf(params[1]);
      const encoding = accountEncoding(config.encoding ?? 'binary');
      const matches = accountFilter(config.filters);
      sub.onTransaction = (record, _keys, writable) => {
        for (const key of writable) {
          const account = ledger.getAccount(key);
          if (!account || keyOf(account.owner) !== program || !matches(account.data)) continue;
          notify(sub, 'programNotification', {
            context: { slot: record.slot },
            value: { account: uiAccount(ledger, account, encoding), pubkey: encodeBase58(key) },
          });
        }
      };
      return undefined;
    },
    logsSubscribe(sub, params) {
      const filter = params[0];
      let mentioned: string | undefined;
      if (typeof filter === 'object' && filter !== null && 'mentions' in filter) {
        const { mentions } = filter as { mentions: unknown };
        if (!Array.isArray(mentions) || mentions.length !== 1)
          throw invalidParams('Invalid Request: Only 1 address supported');
        mentioned = keyOf(address(mentions[0]));
      } else if (filter !== 'all' && filter !== 'allWithVotes') {
        throw invalidParams('Invalid params: expected "all", "allWithVotes" or { mentions: [address] }');
      }
      sub.onTransaction = (record, keys) => {
        if (mentioned !== undefined && !keys.some((k) => keyOf(k) === mentioned)) return;
        notify(sub, 'logsNotification', {
          context: { slot: record.slot },
          value: { err: record.err?.json ?? null, logs: record.logs, signature: record.signature },
        });
      };
      return undefined;
    },
  };

  // A failing notification is logged: it must not fail the request that produced the event.
  function each(run: (sub: Subscription) => void) {
    for (const sub of [...subscriptions.values()]) {
      try {
        run(sub);
      } catch (error) {
        log?.error({ err: error }, 'local chain notification failed');
      }
    }
  }
  const offSlot = ledger.onSlot((slot) => each((sub) => sub.onSlot?.(slot)));
  const offTransaction = ledger.onTransaction((record, keys, writable) =>
    each((sub) => sub.onTransaction?.(record, keys, writable)),
  );

  function onMessage(socket: WebSocket, text: string) {
    const reply = (body: object) => socket.send(JSON.stringify(body));
    let request: { id?: unknown; method?: unknown; params?: unknown };
    try {
      request = JSON.parse(text);
    } catch {
      reply(errorBody(null, -32700, 'Parse error'));
      return;
    }
    if (typeof request !== 'object' || request === null || Array.isArray(request)) {
      reply(errorBody(null, -32600, 'Invalid request'));
      return;
    }
    const { id, method } = request;
    if (!('id' in request)) return; // notifications (such as keep-alive pings) get no answer
    const params = Array.isArray(request.params) ? request.params : [];
    try {
      if (typeof method === 'string' && Object.hasOwn(subscribe, method)) {
        const sub: Subscription = { id: ++nextId, socket };
        const after = subscribe[method]?.(sub, params);
        subscriptions.set(sub.id, sub);
        reply({ jsonrpc: '2.0', result: sub.id, id });
        after?.();
      } else if (typeof method === 'string' && UNSUBSCRIBE.has(method)) {
        const sub = subscriptions.get(Number(params[0]));
        if (!sub || sub.socket !== socket) throw new RpcError(-32602, 'Invalid subscription id.');
        subscriptions.delete(sub.id);
        reply({ jsonrpc: '2.0', result: true, id });
      } else {
        reply(errorBody(id, -32601, 'Method not found'));
      }
    } catch (error) {
      if (error instanceof RpcError) reply(errorBody(id, error.code, error.message, error.data));
      else {
        log?.error({ err: error }, 'local chain subscription failed');
        reply(errorBody(id, -32603, 'Internal error'));
      }
    }
  }

  return {
    /** Serves the subscriptions of a newly connected socket. */
    connect(socket: WebSocket) {
      socket.on('message', (data) => onMessage(socket, data.toString()));
      socket.on('close', () => {
        for (const sub of [...subscriptions.values()])
          if (sub.socket === socket) subscriptions.delete(sub.id);
      });
      // A protocol error closes the socket (and 'close' follows); it must not end the process.
      socket.on('error', () => {});
    },
    /** Stops listening to the ledger. */
    dispose() {
      offSlot();
      offTransaction();
    },
  };
}
