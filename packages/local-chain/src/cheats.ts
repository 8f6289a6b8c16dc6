// Ways to change the local chain outside its transactions, for tests and demos: the faucet behind
// requestAirdrop, account writes (surfnet_setAccount, surfnet_setTokenAccount), time travel, and
// the deployment of programs at start.
import { createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { type Address, none, type Option, some } from '@solana/kit';
import { getTransferSolInstructionDataEncoder } from '@solana-program/system';
import { AccountState, findAssociatedTokenPda, getTokenCodec, type Token } from '@solana-program/token';
import { Account, type LiteSvm } from 'litesvm/dist/internal.js';
import { decodeBase58Exact, encodeBase58 } from './base58.ts';
import { keyOf } from './keys.ts';
import { SLOTS_PER_EPOCH, type Slots } from './slots.ts';
import { isMintData, isTokenAccountData, isTokenProgramBytes, TOKEN_ACCOUNT_SIZE } from './spl.ts';
import { ledgerAccount, type SubmitOutcome } from './transactions.ts';
import { encodeWireMessage, encodeWireTransaction, type WireMessage } from './wire.ts';

const SYSTEM_PROGRAM = '11111111111111111111111111111111';
const MEMO_PROGRAM = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr';
const FAUCET_LAMPORTS = 1_000_000_000n * 1_000_000_000n;
const FAUCET_REFILL_BELOW = FAUCET_LAMPORTS / 10n;
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const U64_MAX = 18_446_744_073_709_551_615n;

/** Raised by cheat codes and time travel on bad input. */
export class LedgerInputError extends Error {
  override name = 'LedgerInputError';
}

/** A program to deploy through the upgradeable loader when the chain starts. */
export interface ProgramDeployment {
  /** Base58 program id. */
  programId: string;
  /** The program's ELF (.so) bytes. */
  elf: Uint8Array;
  /** Base58 upgrade authority written into the ProgramData account; none (immutable) if omitted. */
  upgradeAuthority?: string | null;
}

/** Fields a cheat code may overwrite on an account. */
export interface AccountPatch {
  lamports?: bigint;
  owner?: Uint8Array;
  data?: Uint8Array;
  executable?: boolean;
  rentEpoch?: bigint;
}

/** Fields `surfnet_setTokenAccount` may overwrite on a token account. */
export interface TokenAccountPatch {
  amount?: bigint;
  delegate?: Uint8Array | null;
  state?: 'uninitialized' | 'initialized' | 'frozen';
  delegatedAmount?: bigint;
  closeAuthority?: Uint8Array | null;
}

/** Where `timeTravel` goes; exactly one field. */
export interface TimeTravelTarget {
  absoluteTimestamp?: number;
  absoluteSlot?: number;
  absoluteEpoch?: number;
}

const TOKEN_STATES = {
  uninitialized: AccountState.Uninitialized,
  initialized: AccountState.Initialized,
  frozen: AccountState.Frozen,
} as const;
const tokenCodec = getTokenCodec();

/** A patch's optional key as the token codec takes it; undefined leaves the field as it is. */
function optionalAddress(key: Uint8Array | null | undefined, current: Option<Address>): Option<Address> {
  if (key === undefined) return current;
  return key === null ? none() : some(encodeBase58(key) as Address);
}

function addressBytes(address: string): Uint8Array {
  const bytes = decodeBase58Exact(address, 32);
  if (!bytes) throw new LedgerInputError(`Invalid param: ${address} is not a valid address`);
  return bytes;
}

/** Creates the cheat codes of a chain; `faucetSeed` is the faucet's Ed25519 private key. */
export function createCheats(options: {
  svm: LiteSvm;
  slots: Slots;
  faucetSeed: Buffer;
  /** Airdrops made so far. */
  airdropCount: number;
  submit(bytes: Uint8Array, opts: { preflight: boolean }): SubmitOutcome;
}) {
  const { svm, slots } = options;
  let airdropCount = options.airdropCount;
  const faucetKey = createPrivateKey({
    key: Buffer.concat([PKCS8_ED25519_PREFIX, options.faucetSeed]),
    format: 'der',
    type: 'pkcs8',
  });
  const faucet = new Uint8Array(
    createPublicKey(faucetKey).export({ format: 'der', type: 'spki' }).subarray(-32),
  );
  const faucetAddress = encodeBase58(faucet);
  const transferData = getTransferSolInstructionDataEncoder();

  function fundFaucet() {
    if ((svm.getBalance(faucet) ?? 0n) >= FAUCET_REFILL_BELOW) return;
    svm.setAccount(
      faucet,
      new Account(FAUCET_LAMPORTS, new Uint8Array(0), addressBytes(SYSTEM_PROGRAM), false, U64_MAX),
    );
  }

  // The faucet signs with node:crypto (synchronous) so an airdrop is one atomic step; a memo with a
  // running number keeps two identical requests in one slot from sharing a signature.
  function airdropTransaction(to: Uint8Array, lamports: bigint): Uint8Array {
    airdropCount++;
    const message: WireMessage = {
      version: 'legacy',
      header: { numSignerAccounts: 1, numReadonlySignerAccounts: 0, numReadonlyNonSignerAccounts: 2 },
      staticAccounts: [faucetAddress, encodeBase58(to), SYSTEM_PROGRAM, MEMO_PROGRAM] as Address[],
      lifetimeToken: slots.latest().blockhash,
      instructions: [
        { programAddressIndex: 2, accountIndices: [0, 1], data: transferData.encode({ amount: lamports }) },
        { programAddressIndex: 3, data: Buffer.from(`airdrop ${airdropCount}`) },
      ],
    };
    const messageBytes = encodeWireMessage(message);
    return encodeWireTransaction([sign(null, messageBytes, faucetKey)], messageBytes);
  }

  fundFaucet();

  return {
    faucetAddress,
    airdropCount: () => airdropCount,

    /** Sends lamports from the faucet. */
    airdrop(to: Uint8Array, lamports: bigint): SubmitOutcome {
      if (lamports <= 0n || lamports > FAUCET_REFILL_BELOW)
        throw new LedgerInputError('airdrop amount out of range');
      if (to.length !== 32 || keyOf(to) === keyOf(faucet))
        throw new LedgerInputError('invalid airdrop recipient');
      fundFaucet();
      return options.submit(airdropTransaction(to, lamports), { preflight: true });
    },

    /** Creates or overwrites an account. */
    setAccount(key: Uint8Array, patch: AccountPatch) {
      const current = ledgerAccount(svm.getAccount(key));
      svm.setAccount(
        key,
        new Account(
          patch.lamports ?? current?.lamports ?? 0n,
          patch.data ?? current?.data ?? new Uint8Array(0),
          patch.owner ?? current?.owner ?? addressBytes(SYSTEM_PROGRAM),
          patch.executable ?? current?.executable ?? false,
          patch.rentEpoch ?? current?.rentEpoch ?? U64_MAX,
        ),
      );
    },

    /** Creates or updates `owner`'s associated token account for an existing `mint`; returns its address. */
    async setTokenAccount(
      owner: Uint8Array,
      mint: Uint8Array,
      patch: TokenAccountPatch,
      tokenProgram: Uint8Array,
    ): Promise<Uint8Array> {
      const [ataAddress] = await findAssociatedTokenPda({
        owner: encodeBase58(owner) as Address,
        mint: encodeBase58(mint) as Address,
        tokenProgram: encodeBase58(tokenProgram) as Address,
      });
      const ata = addressBytes(ataAddress);
      const mintAccount = ledgerAccount(svm.getAccount(mint));
      if (!mintAccount || !isTokenProgramBytes(mintAccount.owner) || !isMintData(mintAccount.data)) {
        throw new LedgerInputError('Invalid param: the mint does not exist or is not a mint');
      }
      if (keyOf(mintAccount.owner) !== keyOf(tokenProgram)) {
        throw new LedgerInputError('Invalid param: the mint is owned by a different token program');
      }
      const existing = ledgerAccount(svm.getAccount(ata));
      const base: Token =
        existing && isTokenAccountData(existing.data)
          ? tokenCodec.decode(existing.data)
          : {
              mint: encodeBase58(mint) as Address,
              owner: encodeBase58(owner) as Address,
              amount: 0n,
              delegate: none(),
              state: AccountState.Initialized,
              isNative: none(),
              delegatedAmount: 0n,
              closeAuthority: none(),
            };
      const data = new Uint8Array(
        tokenCodec.encode({
          ...base,
          amount: patch.amount ?? base.amount,
          delegate: optionalAddress(patch.delegate, base.delegate),
          state: patch.state === undefined ? base.state : TOKEN_STATES[patch.state],
          delegatedAmount: patch.delegatedAmount ?? base.delegatedAmount,
          closeAuthority: optionalAddress(patch.closeAuthority, base.closeAuthority),
        }),
      );
      // Token-2022 extensions after the base layout are kept as they are.
      const full =
        existing && existing.data.length > TOKEN_ACCOUNT_SIZE
          ? Buffer.concat([data, existing.data.subarray(TOKEN_ACCOUNT_SIZE)])
          : data;
      svm.setAccount(
        ata,
        new Account(
          existing?.lamports ?? svm.minimumBalanceForRentExemption(BigInt(full.length)),
          full,
          tokenProgram,
          false,
          existing?.rentEpoch ?? U64_MAX,
        ),
      );
      return ata;
    },

    /** Moves slot and clock forward (never back) to the target. */
    timeTravel(target: TimeTravelTarget) {
      const now = slots.chainNowMs();
      if (target.absoluteTimestamp !== undefined) {
        if (target.absoluteTimestamp < now) {
          throw new LedgerInputError(
            `Cannot travel to the past: ${target.absoluteTimestamp} is before the current time ${now}`,
          );
        }
        slots.moveTo(target.absoluteTimestamp);
        return;
      }
      const targetSlot =
        target.absoluteSlot ??
        (target.absoluteEpoch !== undefined ? target.absoluteEpoch * SLOTS_PER_EPOCH : undefined);
      if (targetSlot === undefined || !Number.isSafeInteger(targetSlot) || targetSlot < 0) {
        throw new LedgerInputError(
          'Invalid param: give one of absoluteTimestamp, absoluteSlot, absoluteEpoch',
        );
      }
      if (targetSlot < slots.current()) {
        throw new LedgerInputError(
          `Cannot travel to the past: slot ${targetSlot} is before the current slot ${slots.current()}`,
        );
      }
      slots.moveTo(slots.startOfSlot(targetSlot));
    },

    /** Deploys a program through the upgradeable loader. */
    deployProgram(program: ProgramDeployment) {
      const id = addressBytes(program.programId);
      svm.addProgram(id, program.elf);
      if (!program.upgradeAuthority) return;
      // LiteSVM writes ProgramData with no authority; put the requested one at its offset
      // (u32 tag, u64 slot, Option<Pubkey>).
      const programDataAddress = svm.getAccount(id)?.data().subarray(4, 36);
      const programData = programDataAddress && svm.getAccount(programDataAddress);
      if (!programDataAddress || !programData) throw new Error(`program ${program.programId} did not deploy`);
      const data = programData.data();
      data[12] = 1;
      data.set(addressBytes(program.upgradeAuthority), 13);
      svm.setAccount(
        programDataAddress,
        new Account(programData.lamports(), data, programData.owner(), false, programData.rentEpoch()),
      );
    },
  };
}
