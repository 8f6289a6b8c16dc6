import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM, SolanaError } from '@solana/kit';
import {
  describeRouterFailure,
  ROUTER_ERROR_CODES,
  ROUTER_ERRORS,
  routerErrorFromSolanaError,
  routerErrorName,
} from './errors.ts';

const header = readFileSync(new URL('../../../programs/router/errors.h', import.meta.url), 'utf8');

test('the error table is the program header, code for code, name for name', () => {
  const fromHeader = [...header.matchAll(/#define E_([A-Z0-9_]+) (\d+)\s+\/\* (.*?) \*\//g)].map(
    ([, name, code, message]) => ({
      code: Number(code),
      name: name!
        .toLowerCase()
        .split('_')
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join(''),
      message,
    }),
  );
  assert.equal(fromHeader.length, 55);
  assert.deepEqual(
    Object.entries(ROUTER_ERRORS).map(([code, { name, message }]) => ({ code: Number(code), name, message })),
    fromHeader,
  );
  assert.equal(new Set(fromHeader.map((e) => e.code)).size, fromHeader.length, 'codes are distinct');
});

test('the design document lists every error code', () => {
  const doc = readFileSync(new URL('../../../docs/program.md', import.meta.url), 'utf8');
  for (const [code, { name }] of Object.entries(ROUTER_ERRORS)) {
    assert.match(
      doc,
      new RegExp(`\\|\\s*${code}\\s*\\|\\s*\`${name}\`\\s*\\|`),
      `${code} ${name} documented`,
    );
  }
});

test('codes and names map both ways, and kit custom errors are recognised', () => {
  assert.equal(ROUTER_ERROR_CODES.StepNotDue, 6037);
  assert.equal(routerErrorName(6037), 'StepNotDue');
  assert.equal(routerErrorName(1), undefined);
  const custom = new SolanaError(SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM, { code: 6041, index: 0 });
  assert.equal(routerErrorFromSolanaError(custom), 'NotSource');
  assert.equal(routerErrorFromSolanaError(new Error('other')), undefined);
});

test('a failure is described by the router’s name and meaning, or as SPL Token’s error', () => {
  assert.equal(
    describeRouterFailure(6040),
    "WrongDestination: the step's destination is not the fixed next hop (or recipient wallet), or not an open token account of the recipient",
  );
  assert.equal(describeRouterFailure(17), 'SPL Token: AccountFrozen');
  assert.equal(describeRouterFailure(1), 'SPL Token: InsufficientFunds');
  assert.equal(describeRouterFailure(4242), 'custom program error 4242');
});
