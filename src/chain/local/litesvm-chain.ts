// The chain interface served in process by the local ledger: what tests and the embedded mode use
// without going through HTTP. Behaves like the RPC implementation does against the local endpoint
// (same errors, same semantics), which the shared contract tests check.
import type {
  Address,
  Base64EncodedWireTransaction,
  Blockhash,
  EncodedAccount,
  Lamports,
  Signature,
} from '@solana/kit';
import { accountNotFound, decodeMintAccount, decodeTokenAccount } from '../accounts.ts';
import { decodeBase58Exact, encodeBase58 } from '../base58.ts';
import { ChainError } from '../errors.ts';
import type {
  CallOptions,
  Chain,
  ChainTransaction,
  SendOptions,
  SignatureStatus,
  SimulationResult,
  TransactionTokenBalance,
  WireTransactionInput,
} from '../types.ts';
import type { TokenBalanceRecord, TxRecord } from './history.ts';
import type { Ledger } from './ledger.ts';
import type { LedgerAccount } from './transactions.ts';
import { PACKET_DATA_SIZE, parseWireTransaction, WireFormatError } from './wire.ts';

const asAddress = (bytes: Uint8Array) => encodeBase58(bytes) as Address;

function guard(options?: CallOptions) {
  if (options?.signal?.aborted) {
    throw new ChainError('CHAIN_ABORTED', 'the call was aborted', { cause: options.signal.reason });
  }
}

function keyOfInput(address: string): Uint8Array {
  const bytes = decodeBase58Exact(address, 32);
  if (!bytes)
    throw new ChainError('CHAIN_INVALID_ARGUMENT', `invalid address ${address}`, { context: { address } });
  return bytes;
}

function wireBytes(transaction: WireTransactionInput): Uint8Array {
  const bytes =
    typeof transaction === 'string'
      ? new Uint8Array(Buffer.from(transaction as Base64EncodedWireTransaction, 'base64'))
      : transaction;
  if (bytes.length > PACKET_DATA_SIZE) {
    throw new ChainError(
      'CHAIN_INVALID_ARGUMENT',
      `transaction too large: ${bytes.length} bytes (max: ${PACKET_DATA_SIZE} bytes)`,
    );
  }
  return bytes;
}

// Runs a ledger call on transaction bytes; malformed bytes are the caller's error.
function wellFormed<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof WireFormatError) {
      throw new ChainError('CHAIN_INVALID_ARGUMENT', `malformed transaction: ${error.message}`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** An account of the ledger in @solana/kit's EncodedAccount shape. */
function toEncodedAccount(address: string, account: LedgerAccount): EncodedAccount {
  return {
    address: address as Address,
    data: account.data,
    executable: account.executable,
    lamports: account.lamports as Lamports,
    programAddress: asAddress(account.owner),
    space: BigInt(account.data.length),
  };
}

/** A recorded transaction in the chain interface's shape. */
function toChainTransaction(record: TxRecord): ChainTransaction {
  const { message } = parseWireTransaction(record.wire);
  const keys = [...message.staticKeys, ...record.loadedWritable, ...record.loadedReadonly].map(asAddress);
  const invoked: Address[] = [];
  const note = (index: number) => {
    const program = keys[index];
    if (program && !invoked.includes(program)) invoked.push(program);
  };
  for (let i = 0; i < message.instructions.length; i++) {
    note((message.instructions[i] as { programIdIndex: number }).programIdIndex);
    for (const set of record.innerInstructions) {
      if (set.index === i) for (const inner of set.instructions) note(inner.programIdIndex);
    }
  }
  const tokenBalance = (t: TokenBalanceRecord): TransactionTokenBalance => ({
    accountIndex: t.accountIndex,
    account: keys[t.accountIndex] as Address,
    mint: asAddress(t.mint),
    owner: asAddress(t.owner),
    programAddress: asAddress(t.programId),
    amount: t.amount,
    decimals: t.decimals,
  });
  return {
    signature: record.signature as Signature,
    slot: BigInt(record.slot),
    blockTime: BigInt(record.blockTime),
    err: record.err?.json ?? null,
    logs: record.logs,
    invokedPrograms: invoked,
    fee: record.fee as Lamports,
    computeUnitsConsumed: record.unitsConsumed,
    accountKeys: keys,
    preBalances: record.preBalances as Lamports[],
    postBalances: record.postBalances as Lamports[],
    preTokenBalances: record.preTokenBalances.map(tokenBalance),
    postTokenBalances: record.postTokenBalances.map(tokenBalance),
  };
}

/** Creates the in-process chain over a ledger. */
export function createLiteSvmChain({ ledger }: { ledger: Ledger }): Chain {
  async function getAccount(address: Address, options?: CallOptions): Promise<EncodedAccount | null> {
    guard(options);
    const account = ledger.getAccount(keyOfInput(address));
    return account && toEncodedAccount(address, account);
  }

  async function getMint(mint: Address, options?: CallOptions) {
    const account = await getAccount(mint, options);
    if (!account) throw accountNotFound(mint);
    return decodeMintAccount(account);
  }

  return {
    async getMintDecimals(mint, options) {
      return (await getMint(mint, options)).decimals;
    },
    getMint,
    async getMinimumBalanceForRentExemption(dataLength, options) {
      guard(options);
      const size = Number(dataLength);
      if (!Number.isSafeInteger(size) || size < 0) {
        throw new ChainError('CHAIN_INVALID_ARGUMENT', `invalid account size ${dataLength}`);
      }
      return ledger.minimumBalanceForRentExemption(size) as Lamports;
    },
    getAccount,
    async getAccounts(addresses, options) {
      guard(options);
      return addresses.map((address) => {
        const account = ledger.getAccount(keyOfInput(address));
        return account && toEncodedAccount(address, account);
      });
    },
    async getBalance(address, options) {
      guard(options);
      return ledger.getBalance(keyOfInput(address)) as Lamports;
    },
    async getTokenAccount(address, options) {
      const account = await getAccount(address, options);
      return account && decodeTokenAccount(account);
    },
    async getTokenAccountBalance(address, options) {
      const account = await getAccount(address, options);
      if (!account) throw accountNotFound(address);
      const token = decodeTokenAccount(account);
      return { amount: token.amount, decimals: (await getMint(token.mint, options)).decimals };
    },
    async getLatestBlockhash(options) {
      guard(options);
      const latest = ledger.latestBlockhash();
      return {
        blockhash: latest.blockhash as Blockhash,
        lastValidBlockHeight: BigInt(latest.lastValidBlockHeight),
      };
    },
    async isBlockhashValid(blockhash, options) {
      guard(options);
      return ledger.isBlockhashValid(blockhash);
    },
    async getBlockHeight(options) {
      guard(options);
      return BigInt(ledger.slot());
    },
    async getSlot(options) {
      guard(options);
      return BigInt(ledger.slot());
    },
    async getClock(options) {
      guard(options);
      const info = ledger.epochInfo();
      return {
        slot: BigInt(info.absoluteSlot),
        epoch: BigInt(info.epoch),
        unixTimestamp: BigInt(ledger.unixTimestamp()),
      };
    },
    async getSignatureStatuses(signatures, options) {
      guard(options);
      return signatures.map((signature): SignatureStatus | null => {
        const record = ledger.signatureStatus(signature, options?.searchTransactionHistory ?? false);
        return (
          record && {
            slot: BigInt(record.slot),
            err: record.err?.json ?? null,
            confirmationStatus: 'finalized',
          }
        );
      });
    },
    async getTransaction(signature, options) {
      guard(options);
      const record = ledger.getTransaction(signature);
      return record ? toChainTransaction(record) : null;
    },
    async sendTransaction(transaction, options?: SendOptions) {
      guard(options);
      const bytes = wireBytes(transaction);
      const outcome = wellFormed(() => ledger.submit(bytes, { preflight: !options?.skipPreflight }));
      switch (outcome.kind) {
        case 'landed':
        case 'dropped':
          return outcome.signature as Signature;
        case 'signature-failure':
          throw new ChainError('CHAIN_SIGNATURE_INVALID', 'Transaction signature verification failure');
        case 'invalid':
          throw new ChainError('CHAIN_INVALID_ARGUMENT', `invalid transaction: ${outcome.error.message}`, {
            context: { transactionError: outcome.error.json },
          });
        case 'rejected': {
          const { error } = outcome;
          if (error.json === 'AlreadyProcessed') return outcome.signature as Signature;
          const context = {
            transactionError: error.json,
            logs: outcome.logs,
            unitsConsumed: outcome.unitsConsumed,
          };
          if (error.json === 'BlockhashNotFound') {
            throw new ChainError(
              'CHAIN_BLOCKHASH_NOT_FOUND',
              'Transaction simulation failed: Blockhash not found',
              { context },
            );
          }
          throw new ChainError('CHAIN_PREFLIGHT_FAILED', `Transaction simulation failed: ${error.message}`, {
            context,
          });
        }
      }
    },
    async simulateTransaction(transaction, options): Promise<SimulationResult> {
      guard(options);
      const bytes = wireBytes(transaction);
      const sigVerify = options?.sigVerify ?? false;
      const replaceRecentBlockhash = options?.replaceRecentBlockhash ?? false;
      if (sigVerify && replaceRecentBlockhash) {
        throw new ChainError(
          'CHAIN_INVALID_ARGUMENT',
          'sigVerify may not be used with replaceRecentBlockhash',
        );
      }
      const outcome = wellFormed(() =>
        ledger.simulate(bytes, { sigVerify, replaceRecentBlockhash, innerInstructions: false }),
      );
      if (sigVerify && outcome.err?.json === 'SignatureFailure') {
        throw new ChainError('CHAIN_SIGNATURE_INVALID', 'Transaction signature verification failure');
      }
      return {
        err: outcome.err?.json ?? null,
        logs: outcome.logs,
        unitsConsumed: outcome.unitsConsumed,
        returnData: outcome.returnData && {
          programAddress: asAddress(outcome.returnData.programId),
          data: outcome.returnData.data,
        },
        replacementBlockhash: outcome.replacementBlockhash && {
          blockhash: outcome.replacementBlockhash.blockhash as Blockhash,
          lastValidBlockHeight: BigInt(outcome.replacementBlockhash.lastValidBlockHeight),
        },
      };
    },
  };
}
