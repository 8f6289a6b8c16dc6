// JSON-RPC bodies read and written without losing a digit: u64 values past 2^53 (a `rentEpoch`, a
// large balance) are kept as the endpoint wrote them.

/** `JSON.rawJSON` (Node 21+), which TypeScript's ES2024 library does not declare yet. */
const rawJson = (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON;

/** Parses JSON, keeping integers beyond 2^53 exactly as written. */
export function parseExact(text: string): unknown {
  return JSON.parse(text, (_key, value, context?: { source?: string }) =>
    typeof value === 'number' &&
    !Number.isSafeInteger(value) &&
    context?.source &&
    /^-?\d+$/.test(context.source)
      ? rawJson(context.source)
      : value,
  );
}

/** One JSON-RPC call, as the proxy needs to know it. */
export interface RpcCall {
  id: unknown;
  method: string;
  params: unknown[];
}

/** The call a body holds; null for a batch or anything that is not one well-formed call. */
export function readCall(text: string): RpcCall | null {
  let body: unknown;
  try {
    body = parseExact(text);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const { id, method, params } = body as { id?: unknown; method?: unknown; params?: unknown };
  if (typeof method !== 'string') return null;
  return { id: id ?? null, method, params: Array.isArray(params) ? params : [] };
}

/** A JSON-RPC answer to `id`. */
export const answer = (id: unknown, result: unknown) => JSON.stringify({ jsonrpc: '2.0', result, id });
