// Stale windows: for a while now and then, reads are answered as a node that fell behind answers
// them, with what the endpoint answered to the same request before the window opened.
import type { Dice } from './dice.ts';
import type { RpcCall } from './json.ts';
import type { FaultPlan } from './plan.ts';

/** The methods a lagging node answers from its older state. */
export const READ_METHODS: ReadonlySet<string> = new Set([
  'getAccountInfo',
  'getMultipleAccounts',
  'getBalance',
  'getTokenAccountBalance',
  'getTokenAccountsByOwner',
  'getProgramAccounts',
  'getSignatureStatuses',
  'getTransaction',
  'getSignaturesForAddress',
  'getBlockHeight',
  'getSlot',
  'getEpochInfo',
  'getLatestBlockhash',
  'isBlockhashValid',
]);

/** What the stale windows need: the plan, the draws that place the windows, and the time. */
export function createStaleReads(plan: FaultPlan, dice: Dice, now: () => number) {
  const enabled = plan.staleEveryMs > 0;
  // The last answer to each read, with when it was given.
  const answers = new Map<string, { at: number; text: string }>();
  let window: { openedAt: number; until: number } | null = null;
  let nextAt = enabled ? now() + dice.exponential(plan.staleEveryMs) : Number.POSITIVE_INFINITY;
  let windows = 0;
  let sweptAt = now();

  /** The window open at `t`, opening the windows due by then (those nobody read in pass unseen). */
  function windowAt(t: number) {
    if (window && t < window.until) return window;
    window = null;
    while (t >= nextAt) {
      const openedAt = nextAt;
      const until = openedAt + plan.staleForMs;
      nextAt = until + dice.exponential(plan.staleEveryMs);
      if (t < until) {
        window = { openedAt, until };
        windows++;
      }
    }
    return window;
  }

  /** Forgets answers too old for any window to give again. */
  function sweep(t: number) {
    if (t - sweptAt < 1_000) return;
    sweptAt = t;
    for (const [key, { at }] of answers) {
      if (at < t - plan.staleMaxAgeMs - plan.staleForMs) answers.delete(key);
    }
  }

  return {
    /** The key a read is remembered by, or null when the call is no read (or stale windows are off). */
    keyOf: (call: RpcCall): string | null =>
      enabled && READ_METHODS.has(call.method) ? `${call.method}:${JSON.stringify(call.params)}` : null,
    /** In a stale window, the answer given to the same read before it opened (not too long before). */
    replay(key: string): string | null {
      const open = windowAt(now());
      const remembered = answers.get(key);
      if (!open || !remembered) return null;
      const fresh = remembered.at >= open.openedAt || remembered.at < open.openedAt - plan.staleMaxAgeMs;
      return fresh ? null : remembered.text;
    },
    /** Remembers the endpoint's answer to a read. */
    remember(key: string, text: string) {
      const t = now();
      answers.set(key, { at: t, text });
      sweep(t);
    },
    /** How many windows requests fell into. */
    windows: () => windows,
  };
}
