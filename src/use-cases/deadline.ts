/** How long a use case waits for the chain and price sources before answering MH_091. */
const DEPENDENCY_DEADLINE_MS = 8_000;

/** A signal that fires when a use case has waited long enough for its dependencies. */
export function dependencyDeadline(): AbortSignal {
  return AbortSignal.timeout(DEPENDENCY_DEADLINE_MS);
}
