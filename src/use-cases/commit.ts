import type { Sql } from '../store/db.ts';

/**
 * How a use case's change is committed, in one transaction with whatever the caller keeps beside
 * it: an endpoint commits it with the request's idempotent answer (rendering what the change
 * returns in the same transaction), a worker in a plain transaction.
 */
export type Commit<T, R = T> = (change: (tx: Sql) => Promise<T>) => Promise<R>;
