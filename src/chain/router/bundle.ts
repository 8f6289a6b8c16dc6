/*
 * The transaction groups of a route's life, as lists of instructions per transaction (the caller
 * adds fee payer, blockhash and signatures): its deployment and its recovery, each its own module
 * under bundle/, within the limits of bundle/limits.ts; this one names them all.
 */

export {
  type DeploymentInput,
  type DeploymentPlan,
  planDeployment,
} from './bundle/deployment.ts';
export {
  hopsInCreateRoute,
  MAX_CLOSES_IN_RECOVERY_TX,
  MAX_HOPS_IN_ADD_HOPS_TX,
  MAX_HOPS_IN_CREATE_ROUTE_TX,
  MAX_HOPS_IN_NATIVE_CREATE_ROUTE_TX,
  MAX_STEPS_IN_INIT_STEPS_TX,
} from './bundle/limits.ts';
export { closableRouteAccounts, planRecovery, type RecoveryInput } from './bundle/recovery.ts';
