// The package's public entry: start a fault-injecting proxy, and the plan of its faults.
export { BAD_DAY, type FaultPlan, faultPlan, NO_FAULTS } from './plan.ts';
export { type FaultProxy, type FaultProxyOptions, type FaultStats, startFaultProxy } from './proxy.ts';
export { READ_METHODS } from './stale.ts';
