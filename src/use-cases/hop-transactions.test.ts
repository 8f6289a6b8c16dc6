import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TransactionError } from '@solana/kit';
import { ROUTER_ERROR_CODES } from '../chain/router/errors.ts';
import { classifyHopError } from './hop-transactions.ts';

const failed = (error: unknown) => ({ InstructionError: [0, error] }) as unknown as TransactionError;
const custom = (code: number) => failed({ Custom: code });

test('a hop fails for good only on the router’s or SPL Token’s own verdict', () => {
  assert.deepEqual(classifyHopError(custom(ROUTER_ERROR_CODES.WrongDestination)), {
    kind: 'permanent',
    reason:
      "WrongDestination: the step's destination is not the fixed next hop (or recipient wallet), or not an open token account of the recipient",
  });
  assert.deepEqual(classifyHopError(custom(17)), { kind: 'permanent', reason: 'SPL Token: AccountFrozen' });
});

test('what the chain says of the schedule or screening is waited for, not failed', () => {
  assert.equal(classifyHopError(custom(ROUTER_ERROR_CODES.StepNotDue)).kind, 'not_due');
  assert.equal(classifyHopError(custom(ROUTER_ERROR_CODES.StepAlreadyExecuted)).kind, 'moved_on');
  assert.equal(classifyHopError(custom(ROUTER_ERROR_CODES.StepOutOfOrder)).kind, 'moved_on');
  assert.equal(classifyHopError(custom(ROUTER_ERROR_CODES.DeadlinePassed)).kind, 'moved_on');
  assert.equal(classifyHopError(custom(ROUTER_ERROR_CODES.ScreeningPending)).kind, 'awaits_screening');
});

test('anything else says nothing about the route and is retried', () => {
  for (const error of [
    failed('ComputationalBudgetExceeded'),
    failed('ProgramFailedToComplete'),
    failed('InvalidAccountData'),
    failed({ Custom: 9_999 }),
    'InsufficientFundsForFee' as TransactionError,
    'BlockhashNotFound' as TransactionError,
    { InsufficientFundsForRent: { account_index: 3 } } as unknown as TransactionError,
    undefined,
  ]) {
    assert.equal(classifyHopError(error).kind, 'transient', JSON.stringify(error));
  }
});
