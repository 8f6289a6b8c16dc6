import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Base64EncodedWireTransaction, TransactionError } from '@solana/kit';
import { ROUTER_ERROR_CODES } from '../chain/router/errors.ts';
import { AppError } from '../domain/errors.ts';
import { assertFirstSimulates, type BuiltTransaction, ReadsBehindChain } from './bundle-transactions.ts';

const built = (simulationError: TransactionError | null): BuiltTransaction => ({
  name: 'routeInitTxs[0]',
  base64: '' as Base64EncodedWireTransaction,
  signatures: 1,
  computeUnitLimit: 70_000,
  simulationError,
});
const custom = (code: number) => ({ InstructionError: [2, { Custom: code }] }) as unknown as TransactionError;

test('a first transaction that simulates is handed out; one that fails is refused, MH_031', () => {
  assert.doesNotThrow(() =>
    assertFirstSimulates([built(null), built(custom(ROUTER_ERROR_CODES.InvalidMint))]),
  );
  assert.throws(
    () => assertFirstSimulates([built(custom(ROUTER_ERROR_CODES.InvalidMint))]),
    (error) => error instanceof AppError && error.code === 'MH_031' && /InvalidMint/.test(error.message),
  );
});

test('one that fails only because an account it creates exists now is reads behind the chain: MH_091 past the deadline', () => {
  assert.throws(
    () => assertFirstSimulates([built(custom(ROUTER_ERROR_CODES.AccountAlreadyInitialized))]),
    (error) =>
      error instanceof ReadsBehindChain &&
      error.code === 'MH_091' &&
      error.status === 503 &&
      error.headers['retry-after'] === '1',
  );
});
