import autocannon from 'autocannon';

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
}

export interface LoadOptions {
  name: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A fixed body, or one built per request (e.g. a fresh Idempotency-Key needs a header per request). */
  body?: string;
  /** Builds each request: lets a POST carry a fresh Idempotency-Key or externalId. */
  perRequest?: () => { headers?: Record<string, string>; body?: string };
  connections?: number;
  durationSeconds?: number;
}

/** Drives HTTP load with autocannon and reports throughput and latency percentiles. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
    connections: options.connections ?? 16,
    duration: options.durationSeconds ?? 8,
    ...(options.perRequest
      ? {
          requests: [
            {
              setupRequest: (request: autocannon.Request): autocannon.Request => {
                const extra = options.perRequest!();
                return {
                  ...request,
                  headers: { ...request.headers, ...extra.headers },
                  ...(extra.body === undefined ? {} : { body: extra.body }),
                };
              },
            },
          ],
        }
      : {}),
  });
  return {
    name: options.name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

/** Renders rows as a markdown table. */
export function markdownTable(headers: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}
