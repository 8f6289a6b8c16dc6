// Reads of accounts: raw ones, mints, token accounts, SOL balances, and the rent they must hold.
import type { Address, EncodedAccount, Lamports } from '@solana/kit';
import { accountNotFound, decodeMintAccount, decodeTokenAccount } from '../accounts.ts';
import type {
  AccountReader,
  BalanceReader,
  MintReader,
  ReadOptions,
  RentReader,
  TokenAccountReader,
} from '../types.ts';
import { inPages, type RpcClient } from './client.ts';

const MAX_ACCOUNTS_PER_CALL = 100;

/** An account as the RPC answers it in base64. */
interface RpcAccount {
  data: readonly [string, string];
  executable: boolean;
  lamports: Lamports;
  owner: Address;
  space: bigint;
}

function toEncodedAccount(address: Address, value: RpcAccount): EncodedAccount {
  return {
    address,
    data: new Uint8Array(Buffer.from(value.data[0], 'base64')),
    executable: value.executable,
    lamports: value.lamports,
    programAddress: value.owner,
    space: value.space,
  };
}

/** The account readers of the chain interface over an RPC client. */
export function createAccountReads(
  client: RpcClient,
): AccountReader & MintReader & TokenAccountReader & BalanceReader & RentReader {
  const { rpc, call, commitmentOf } = client;

  async function getAccount(address: Address, o?: ReadOptions): Promise<EncodedAccount | null> {
    const { value } = await call(
      'getAccountInfo',
      (abortSignal) =>
        rpc
          .getAccountInfo(address, { encoding: 'base64', commitment: commitmentOf(o) })
          .send({ abortSignal }),
      o,
    );
    return value ? toEncodedAccount(address, value) : null;
  }

  async function getMint(mint: Address, o?: ReadOptions) {
    const account = await getAccount(mint, o);
    if (!account) throw accountNotFound(mint);
    return decodeMintAccount(account);
  }

  return {
    getAccount,
    async getAccounts(addresses, o) {
      return inPages(addresses, MAX_ACCOUNTS_PER_CALL, (page) =>
        call(
          'getMultipleAccounts',
          (abortSignal) =>
            rpc
              .getMultipleAccounts(page, { encoding: 'base64', commitment: commitmentOf(o) })
              .send({ abortSignal }),
          o,
        ).then(({ value }) =>
          value.map((account, i) => (account ? toEncodedAccount(page[i] as Address, account) : null)),
        ),
      );
    },
    getMint,
    async getMintDecimals(mint, o) {
      return (await getMint(mint, o)).decimals;
    },
    async getTokenAccount(address, o) {
      const account = await getAccount(address, o);
      return account && decodeTokenAccount(account);
    },
    async getTokenAccountBalance(address, o) {
      const { value } = await call(
        'getTokenAccountBalance',
        (abortSignal) =>
          rpc.getTokenAccountBalance(address, { commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
      return { amount: BigInt(value.amount), decimals: value.decimals };
    },
    async getBalance(address, o) {
      const { value } = await call(
        'getBalance',
        (abortSignal) => rpc.getBalance(address, { commitment: commitmentOf(o) }).send({ abortSignal }),
        o,
      );
      return value;
    },
    async getMinimumBalanceForRentExemption(dataLength, o) {
      return call(
        'getMinimumBalanceForRentExemption',
        (abortSignal) =>
          rpc
            .getMinimumBalanceForRentExemption(BigInt(dataLength), { commitment: commitmentOf(o) })
            .send({ abortSignal }),
        o,
      );
    },
  };
}
