import { rawToTokens } from '../../domain/amounts.ts';
import { ERROR_CODES, type ErrorCode } from '../../domain/errors.ts';
import type { EventType, RecoveryAccountKind, TransferStatus } from '../../domain/transfer.ts';
import type { Cluster } from '../../platform/platform.ts';
import { NATIVE_SOL_MINT } from '../../prices/types.ts';

/*
 * How the console words and formats what it shows: amounts, times, lateness, statuses, event
 * types, error codes and block-explorer links. Pure functions the pages and their tests share.
 */

const LAMPORT_DECIMALS = 9;

/** Lamports in SOL, exactly: `2039280` → `0.00203928 SOL`. */
export function sol(lamports: bigint | number): string {
  return `${rawToTokens(BigInt(lamports), LAMPORT_DECIMALS)} SOL`;
}

/** Base units of a token in whole tokens, exactly, with its name: `1500000`, 6, `USDC` → `1.5 USDC`. */
export function tokenAmount(raw: bigint, decimals: number, name: string): string {
  return `${rawToTokens(raw, decimals)} ${name}`;
}

const USD = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

/** A USD figure the API reports (display only, never money the service moves): `$1,234.50`. */
export function usd(value: number): string {
  return USD.format(value);
}

/** A UTC day: `2026-06-01`. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** What a transfer moves, in words: its symbol, SOL for the native mint, else the mint abridged. */
export function assetName(mint: string, symbol: string | null): string {
  if (symbol) return symbol;
  return mint === NATIVE_SOL_MINT ? 'SOL' : `${mint.slice(0, 4)}…${mint.slice(-4)}`;
}

/** A moment in UTC to the second, as the console shows every time: `2026-06-01 12:00:05 UTC`. */
export function utc(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A duration in whole seconds, in words: `45 s`, `3 min 5 s`, `2 h 1 min`. */
export function duration(seconds: number): string {
  const s = Math.round(Math.abs(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const minutes = Math.floor((s % 3600) / 60);
  return `${Math.floor(s / 3600)} h${minutes ? ` ${minutes} min` : ''}`;
}

/** How late a hop landed after its due time, by the chain's clock. */
export function lateness(seconds: number): string {
  if (seconds <= 0) return seconds === 0 ? 'on time' : `${duration(seconds)} early`;
  return `${duration(seconds)} late`;
}

/** Statuses after which a transfer changes only when its integrator acts (live pages stop polling). */
const SETTLED_STATUSES: ReadonlySet<TransferStatus> = new Set(['completed', 'failed', 'expired', 'refunded']);

/** Whether the service may still move the transfer on its own, so its page keeps refreshing. */
export function isLive(status: TransferStatus): boolean {
  return !SETTLED_STATUSES.has(status);
}

/** A status in words. */
export function statusLabel(status: TransferStatus): string {
  return status === 'awaiting_signature' ? 'awaiting signature' : status;
}

/** A status's tone for its badge: the badge also says the status in words, never by colour alone. */
export function statusTone(status: TransferStatus): 'good' | 'bad' | 'busy' | 'quiet' {
  if (status === 'completed' || status === 'refunded') return 'good';
  if (status === 'failed') return 'bad';
  if (status === 'processing' || status === 'awaiting_signature') return 'busy';
  return 'quiet';
}

/** When each event type is emitted, as the webhook guide says it. */
const EVENT_MEANINGS: Record<EventType, string> = {
  'transfer.quote_created': 'a transfer is created',
  'transfer.deposit_confirmed': 'the route holding the tokens is verified on chain',
  'transfer.processing': 'the status becomes processing',
  'transfer.hop_complete': 'a hop landed on chain (once per hop)',
  'transfer.completed': 'the status becomes completed',
  'transfer.failed': 'the status becomes failed',
  'transfer.expired': 'the status becomes expired',
  'transfer.refunded': 'the status becomes refunded',
  'transfer.phase_changed': 'any phase change',
  'transfer.recoverable': 'the phase becomes recoverable',
  'transfer.rescued': 'a rescue is confirmed',
  'transfer.rent_reclaimed': 'a rent reclaim is confirmed',
};

/** When an event type is emitted, in words. */
export function eventMeaning(type: EventType): string {
  return EVENT_MEANINGS[type];
}

/** A webhook delivery's state in words, as the console's badges say it. */
export function deliveryLabel(status: 'pending' | 'succeeded' | 'failed'): string {
  return status === 'succeeded' ? 'delivered' : status;
}

/** A delivery's or a claim's tone for its badge (the badge also says it in words). */
export function outcomeTone(
  status: 'pending' | 'succeeded' | 'confirmed' | 'failed',
): 'good' | 'bad' | 'busy' {
  if (status === 'failed') return 'bad';
  return status === 'pending' ? 'busy' : 'good';
}

/** The accounts a rescue empties, in words. */
const ACCOUNT_KINDS: Record<RecoveryAccountKind, string> = {
  route_pda: 'route account',
  step_state: 'hop step state',
  orchestrator_config: 'source’s orchestrator config',
  keeper: 'route’s keeper',
  ata: 'token account',
};

/** A kind of account a rescue returns lamports from, in words. */
export function accountKindLabel(kind: RecoveryAccountKind): string {
  return ACCOUNT_KINDS[kind];
}

/** What an error code means, in words (the code table's message without its full stop). */
export function errorMeaning(code: string): string {
  const known = ERROR_CODES[code as ErrorCode];
  return known ? known.message.replace(/\.$/, '') : 'Unknown error';
}

/** What an event says happened, in words; `hop` is the hop count the event's transfer showed. */
export function eventLabel(type: string, after: { hopsCompleted?: number; hops?: number; phase?: string }) {
  switch (type) {
    case 'transfer.quote_created':
      return 'Quote created';
    case 'transfer.deposit_confirmed':
      return 'Deposit confirmed: the whole route is on chain';
    case 'transfer.processing':
      return 'Processing: the keeper took the route over';
    case 'transfer.hop_complete':
      return `Hop ${after.hopsCompleted ?? '?'} of ${after.hops ?? '?'} landed`;
    case 'transfer.completed':
      return 'Completed: the recipient received the transfer';
    case 'transfer.failed':
      return 'Failed';
    case 'transfer.expired':
      return 'Expired: the quote was not deployed in time';
    case 'transfer.refunded':
      return 'Refunded to the source';
    case 'transfer.phase_changed':
      return `Phase changed to ${after.phase ?? '?'}`;
    case 'transfer.recoverable':
      return 'Recoverable: the source can rescue its funds';
    case 'transfer.rescued':
      return 'Rescued: the route was closed and its funds returned';
    case 'transfer.rent_reclaimed':
      return 'Rent reclaimed by the source';
    default:
      return type;
  }
}

/**
 * A transaction's page on the Solana Explorer for the service's cluster, or null where no public
 * explorer shows it (the local chain).
 */
export function explorerUrl(cluster: Cluster, signature: string): string | null {
  const base = `https://explorer.solana.com/tx/${encodeURIComponent(signature)}`;
  if (cluster === 'mainnet') return base;
  if (cluster === 'devnet' || cluster === 'testnet') return `${base}?cluster=${cluster}`;
  return null;
}
