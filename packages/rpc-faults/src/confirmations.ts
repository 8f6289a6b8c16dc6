// `processed` before `confirmed`: a share of landed transactions is shown processed for a while after
// the proxy first sees it land, as a node shows a transaction whose block is not yet voted on.
import type { Dice } from './dice.ts';
import type { RpcCall } from './json.ts';
import type { FaultPlan } from './plan.ts';

/** How long what was drawn for a signature is kept: it must not go from confirmed back to processed. */
const REMEMBERED_MS = 10 * 60_000;

interface Status {
  confirmationStatus?: string | null;
  confirmations?: number | null;
}

/** Rewrites answers so that the signatures drawn stay `processed` for `processedForMs`. */
export function createConfirmationLag(plan: FaultPlan, dice: Dice, now: () => number) {
  // Per signature seen landed: until when it shows processed (0: never held).
  const seen = new Map<string, { at: number; until: number }>();
  let shown = 0;
  let sweptAt = now();

  function processed(signature: string): boolean {
    const t = now();
    let entry = seen.get(signature);
    if (!entry) {
      entry = { at: t, until: dice.chance(plan.processedFirst) ? t + plan.processedForMs : 0 };
      seen.set(signature, entry);
    }
    if (t - sweptAt > REMEMBERED_MS) {
      sweptAt = t;
      for (const [key, { at }] of seen) if (at < t - REMEMBERED_MS) seen.delete(key);
    }
    return t < entry.until;
  }

  return {
    /** Whether answers to `call` may need rewriting. */
    concerns: (call: RpcCall) =>
      plan.processedFirst > 0 && (call.method === 'getSignatureStatuses' || call.method === 'getTransaction'),
    /** The result to give for `call` instead of `result`, the endpoint's. */
    rewrite(call: RpcCall, result: unknown): unknown {
      if (call.method === 'getTransaction') {
        const signature = call.params[0];
        // `getTransaction` reads confirmed blocks only.
        if (result !== null && typeof signature === 'string' && processed(signature)) {
          shown++;
          return null;
        }
        return result;
      }
      const signatures = (call.params[0] ?? []) as unknown[];
      const { context, value } = result as { context: unknown; value: (Status | null)[] };
      return {
        context,
        value: value.map((status, i) => {
          const signature = signatures[i];
          if (!status || typeof signature !== 'string' || !processed(signature)) return status;
          shown++;
          return { ...status, confirmationStatus: 'processed', confirmations: 0 };
        }),
      };
    },
    /** How many answers showed a transaction processed only. */
    shown: () => shown,
  };
}
