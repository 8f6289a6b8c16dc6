// The package's main entry, for browsers and Node.js alike: it imports no Node.js module. Verifying
// webhook deliveries needs Node.js and is `@transfer-router/client/webhooks` (webhooks.ts).
export {
  type BroadcastProgress,
  type BroadcastResult,
  type BroadcastRpc,
  type BundleGroup,
  type BundleLifetime,
  type BundleSenderOptions,
  type SignAndBroadcastOptions,
  signAndBroadcastBundle,
} from './bundle.ts';
export {
  type ChainRecoveryOptions,
  type ChainRecoveryProgress,
  type ChainRecoveryResult,
  type ChainRecoveryRpc,
  type ChainRecoveryTransaction,
  type RouteLocator,
  reclaimRentFromChain,
  rescueFromChain,
} from './chain-recovery.ts';
export {
  ChainRecoveryError,
  type ChainRecoveryErrorCode,
  isChainRecoveryError,
} from './chain-recovery-error.ts';
export {
  type CallOptions,
  type ConfirmBroadcastRequest,
  type ConfirmFundingRequest,
  type CreateTransferRequest,
  type CreateWebhookRequest,
  createTransferRouterClient,
  delay,
  type ErrorEnvelope,
  type EstimateTransferRequest,
  type FeeEstimate,
  isTransferRouterError,
  type ListEventsQuery,
  type ListRewardClaimsQuery,
  type ListTransfersQuery,
  type ListWebhookDeliveriesQuery,
  type PreparedTransactionBundle,
  RETRIED_CODES,
  type RetryNotice,
  type Transfer,
  type TransferPhase,
  type TransferQuote,
  type TransferRouterClient,
  type TransferRouterClientOptions,
  TransferRouterError,
  type TransferStatus,
  type UsageQuery,
  type UsageSummary,
  type WebhookEndpoint,
} from './client.ts';
export type { PingEvent, TransferEvent, WebhookEvent, WebhookEventSource } from './events.ts';
export { isLandingError, LandingError, type LandingErrorCode } from './landing-error.ts';
export type { components, operations, paths } from './openapi.ts';
export {
  type RecoveryKind,
  type RecoveryOptions,
  type RecoveryProgress,
  type RecoveryResult,
  reclaimRent,
  rescue,
} from './recovery.ts';
export {
  decodeRouteAccount,
  findRouteAddress,
  type RecoveryReturn,
  type RouteAccount,
  type RouteStatus,
} from './router.ts';
export type { LandingRpcApi, LandOptions } from './send.ts';
export { TransferWaitError, type WaitForTransferOptions, waitForTransfer } from './wait.ts';
