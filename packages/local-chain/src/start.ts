// startLocalChain: the chain as a service embeds it (and `npm run localnet` runs it alone): a
// ledger, resumed from and saved to a data directory, slots produced on a timer, served over
// JSON-RPC. Callers talk to it through that endpoint with any Solana client, exactly as they would
// to a cluster; only the cheat codes reach the ledger in process.
import {
  type Address,
  getAddressDecoder,
  getAddressEncoder,
  isAddress,
  type Lamports,
  type Signature,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { type FaultProxy, startFaultProxy } from '@transfer-router/rpc-faults';
import { LedgerInputError, type ProgramDeployment, type TimeTravelTarget } from './cheats.ts';
import { type Clock, systemClock } from './clock.ts';
import { createLedger, type EpochInfo, type Ledger } from './ledger.ts';
import { legacyTokenProgram, type TokenProgramImplementation } from './legacy-token.ts';
import { type ChainPersistence, createChainPersistence } from './persistence.ts';
import type { ChainProfile } from './profile.ts';
import { startRpcServer } from './rpc-server.ts';
import type { ChainLog } from './rpc-subscriptions.ts';

/** Options of startLocalChain. */
export interface LocalChainOptions {
  /** Directory the chain is saved in (e.g. `${DATA_DIR}/chain`); in memory only when omitted. */
  dataDir?: string;
  host?: string;
  /** HTTP port (default 8899; 0 picks a free one). */
  rpcPort?: number;
  /** WebSocket port (default rpcPort + 1, or a free one when rpcPort is 0; null: upgrade on rpcPort only). */
  wsPort?: number | null;
  /** Time source; slots follow it (default: the system clock). */
  clock?: Clock;
  /** Milliseconds per slot (default 400). */
  slotMs?: number;
  /**
   * Produce slots on a timer so that slot notifications flow without requests (default true).
   * Slots also catch up with the clock lazily on every call, so tests driving a manual clock can
   * turn this off.
   */
  autoTick?: boolean;
  /** Programs deployed (through the upgradeable loader) at every start. */
  programs?: readonly ProgramDeployment[];
  /**
   * The SPL Token program at its id (default `p-token`, the implementation LiteSVM ships and
   * clusters run). `legacy` deploys spl_token 3.5.0 there at every start (see legacy-token.ts),
   * to run and measure programs that call Token as they ran before p-token. A data directory saved
   * on the legacy program keeps it when resumed without the option.
   */
  tokenProgram?: TokenProgramImplementation;
  /**
   * How the chain behaves (default: the `instant` profile). `mainnet` includes transactions a slot
   * or more after they are sent, or never, forks, serves commitment levels honestly, prices
   * congestion, runs the legacy Token program and puts a misbehaving endpoint in front (see
   * profile.ts); `tokenProgram`, when given, overrides the profile's choice.
   */
  profile?: ChainProfile;
  /** Write-behind interval of the data directory (default 1000 ms). */
  flushIntervalMs?: number;
  /** How many landed transactions are remembered (default 50,000). */
  maxRecordedTransactions?: number;
  log?: ChainLog;
}

/** The programs a start deploys: the legacy Token program when asked for, then the caller's. */
function programsToDeploy(options: LocalChainOptions): ProgramDeployment[] {
  const token: ProgramDeployment[] =
    (options.tokenProgram ?? options.profile?.tokenProgram) === 'legacy'
      ? [{ programId: TOKEN_PROGRAM_ADDRESS, elf: legacyTokenProgram() }]
      : [];
  return [...token, ...(options.programs ?? [])];
}

/**
 * Test and demo powers over the local chain, the in-process twins of the surfnet_* methods. Each
 * rejects with a LedgerInputError on bad input (an invalid address, an airdrop out of range, time
 * travel into the past).
 */
export interface LocalChainCheats {
  /** Sends SOL from the faucet; resolves with the transaction's signature. */
  airdrop(address: Address, lamports: Lamports | bigint): Promise<Signature>;
  /** Creates or overwrites an account. */
  setAccount(
    address: Address,
    update: { lamports?: bigint; owner?: Address; data?: Uint8Array; executable?: boolean },
  ): Promise<void>;
  /** Creates or updates the owner's associated token account of an existing mint; resolves with its address. */
  setTokenAccount(
    owner: Address,
    mint: Address,
    update: {
      amount?: bigint;
      state?: 'initialized' | 'frozen';
      delegate?: Address | null;
      delegatedAmount?: bigint;
    },
    tokenProgram?: Address,
  ): Promise<Address>;
  /** Moves slot and clock forward (never back). */
  timeTravel(target: TimeTravelTarget): Promise<EpochInfo>;
}

/** A running local chain. */
export interface LocalChain {
  cheats: LocalChainCheats;
  /** The JSON-RPC endpoint (on the mainnet profile, behind its misbehaving front). */
  rpcUrl: string;
  wsUrl: string;
  /** The underlying ledger (for the endpoint's own tests and tools). */
  ledger: Ledger;
  /**
   * Calls `listener` with the chain's new time (Unix ms) after each time travel, by the
   * `surfnet_timeTravel` method or `cheats.timeTravel`, so a process sharing the chain's can act on
   * a jump at once instead of noticing it at its next look; returns the unsubscribe function.
   */
  onTimeTravel(listener: (chainTimeMs: number) => void): () => void;
  /** Saves pending state now. */
  flush(): Promise<void>;
  /** Stops serving and ticking, saves everything, releases the data directory. */
  close(): Promise<void>;
}

const addressEncoder = getAddressEncoder();
const addressDecoder = getAddressDecoder();

function key(address: string): Uint8Array {
  if (!isAddress(address)) throw new LedgerInputError(`Invalid param: ${address} is not a valid address`);
  return new Uint8Array(addressEncoder.encode(address));
}

/** Starts (or resumes) the embedded chain. */
export async function startLocalChain(options: LocalChainOptions = {}): Promise<LocalChain> {
  const clock = options.clock ?? systemClock;
  let persistence: ChainPersistence | undefined;
  if (options.dataDir) {
    persistence = createChainPersistence({
      dir: options.dataDir,
      flushIntervalMs: options.flushIntervalMs,
      maxRecords: options.maxRecordedTransactions,
      onError: (error) => options.log?.error({ err: error }, 'saving the local chain failed'),
    });
  }
  let ledger: Ledger;
  try {
    const restored = await persistence?.load();
    ledger = createLedger({
      clock,
      slotMs: options.slotMs,
      programs: programsToDeploy(options),
      restored,
      maxRecordedTransactions: options.maxRecordedTransactions,
      profile: options.profile,
    });
    options.log?.info(
      {
        slot: ledger.slot(),
        resumed: !!restored,
        dataDir: options.dataDir ?? null,
        profile: options.profile?.name ?? 'instant',
        seed: options.profile?.seed,
      },
      restored ? 'local chain resumed' : 'local chain created',
    );
  } catch (error) {
    await persistence?.close();
    throw error;
  }
  persistence?.attach(ledger);
  await persistence?.flush();

  let ticker: NodeJS.Timeout | undefined;
  if (options.autoTick ?? true) {
    ticker = setInterval(() => ledger.sync(), ledger.slotMs);
    ticker.unref();
  }
  let server: Awaited<ReturnType<typeof startRpcServer>> | undefined;
  let front: FaultProxy | undefined;
  const weather = options.profile?.weather;
  try {
    server = await startRpcServer({
      ledger,
      host: options.host,
      // Behind the misbehaving front (HTTP only), the chain's own endpoint takes any free port for
      // HTTP and keeps the conventional WebSocket port, the RPC port's next.
      port: weather ? 0 : options.rpcPort,
      wsPort:
        weather && options.wsPort === undefined && options.rpcPort !== 0
          ? (options.rpcPort ?? 8899) + 1
          : options.wsPort,
      socketDrops: weather && { meanMs: weather.socketDropMeanMs, seed: options.profile?.seed ?? '' },
      log: options.log,
    });
    if (weather) {
      front = await startFaultProxy({
        upstream: server.url,
        host: options.host,
        port: options.rpcPort ?? 8899,
        faults: { ...weather, seed: options.profile?.seed },
      });
    }
  } catch (error) {
    if (ticker) clearInterval(ticker);
    await server?.close();
    await persistence?.close();
    throw error;
  }

  const endpoint = server;
  const cheats: LocalChainCheats = {
    async airdrop(address, lamports) {
      const outcome = ledger.airdrop(key(address), lamports);
      if (outcome.kind !== 'landed') throw new Error(`airdrop failed: ${outcome.kind}`);
      return outcome.signature as Signature;
    },
    async setAccount(address, update) {
      ledger.setAccount(key(address), {
        lamports: update.lamports,
        owner: update.owner === undefined ? undefined : key(update.owner),
        data: update.data,
        executable: update.executable,
      });
    },
    async setTokenAccount(owner, mint, update, tokenProgram = TOKEN_PROGRAM_ADDRESS) {
      const ata = await ledger.setTokenAccount(
        key(owner),
        key(mint),
        {
          amount: update.amount,
          state: update.state,
          delegate: update.delegate === undefined ? undefined : update.delegate && key(update.delegate),
          delegatedAmount: update.delegatedAmount,
        },
        key(tokenProgram),
      );
      return addressDecoder.decode(ata);
    },
    timeTravel: async (target) => ledger.timeTravel(target),
  };

  let closing: Promise<void> | undefined;
  return {
    cheats,
    rpcUrl: front?.url ?? endpoint.url,
    // The front passes WebSocket connections through to the chain's own endpoint.
    wsUrl: front ? front.url.replace(/^http/, 'ws') : endpoint.wsUrl,
    ledger,
    onTimeTravel: ledger.onTimeTravel,
    flush: () => persistence?.flush() ?? Promise.resolve(),
    close() {
      closing ??= (async () => {
        if (ticker) clearInterval(ticker);
        await front?.close();
        await endpoint.close();
        await persistence?.close();
      })();
      return closing;
    },
  };
}
