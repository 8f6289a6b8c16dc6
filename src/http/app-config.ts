import type { FeeSchedule } from '../domain/fees.ts';
import type { WebhookNetworkPolicy } from '../webhooks/sender.ts';
import type { HttpTimeouts } from './protocol-errors.ts';

/** The HTTP app's settings (src/wiring/api.ts takes them from the configuration). */
export interface AppConfig {
  bodyLimitBytes: number;
  /** Connection timeouts: a request that does not arrive in time is answered 408. */
  timeouts: HttpTimeouts;
  metricsEnabled: boolean;
  authCacheMs: number;
  adminToken: string | undefined;
  quoteTtlMs: number;
  feeSchedule: FeeSchedule;
  webhookPolicy: WebhookNetworkPolicy;
  /** The reachability ping's timeout when registering an endpoint (5 s unless tests shorten it). */
  webhookPingTimeoutMs?: number;
  /** How often funding/confirm looks at the chain while it waits (1 s unless tests shorten it). */
  fundingPollMs?: number;
  /** REWARDS_MIN_CLAIM_LAMPORTS (1,000,000 unless configured). */
  rewardsMinClaimLamports?: bigint;
  /** The console's cookies are Secure whatever a request's protocol (MODE=production: behind a TLS front). */
  secureCookies?: boolean;
  /** Console sign-in attempts allowed per address a minute (10 unless tests raise it). */
  consoleSignInsPerMinute?: number;
  /** Console actions (a signed-in page's form posts) allowed per API key, and for the operator, a minute (60 unless tests raise it). */
  consoleActionsPerMinute?: number;
}
