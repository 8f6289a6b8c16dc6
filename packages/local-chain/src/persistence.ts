// Saves the local chain under a directory so that it survives restarts. Two files:
//   state.bin          LiteSVM's full snapshot plus the ledger's metadata, checksummed, always
//                      replaced whole (write to a temp file, fsync, rename), so it is never torn;
//   transactions.jsonl recorded transactions, appended in batches; lines beyond the snapshot's
//                      sequence number (written just before a crash) are ignored on load.
// Saving is write-behind: the hot path only marks the ledger dirty, a timer flushes.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { TxRecord } from './history.ts';
import type { Ledger, LedgerMeta, RestoredLedger } from './ledger.ts';

const MAGIC = Buffer.from('TRCHAIN1');
const STATE_FILE = 'state.bin';
const LOG_FILE = 'transactions.jsonl';
const LOCK_FILE = 'LOCK';

/** Raised when the data directory holds something that cannot be loaded. */
export class ChainDataError extends Error {
  override name = 'ChainDataError';
}

const b64 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
const unb64 = (text: string) => new Uint8Array(Buffer.from(text, 'base64'));

// A record's byte fields are written as base64 and its u64 fields as decimal strings; these are
// their names, wherever they occur in a record.
const BYTE_FIELDS = new Set([
  'wire',
  'loadedWritable',
  'loadedReadonly',
  'mint',
  'owner',
  'programId',
  'accounts',
  'data',
]);
const U64_FIELDS = new Set(['fee', 'unitsConsumed', 'preBalances', 'postBalances', 'amount']);

/** One record as a line of the transaction log. */
export function recordToLine(record: TxRecord): string {
  return JSON.stringify(record, function (this: Record<string, unknown>, key, value) {
    // The holder's own value: a Buffer has already been turned into an object by its toJSON.
    const raw = this[key];
    if (raw instanceof Uint8Array) return b64(raw);
    return typeof value === 'bigint' ? value.toString() : value;
  });
}

/** Parses a line written by recordToLine. */
export function recordFromLine(line: string): TxRecord {
  return JSON.parse(line, (key, value) => {
    const each = (convert: (text: string) => unknown) =>
      Array.isArray(value) ? value.map(convert) : convert(value);
    if (BYTE_FIELDS.has(key)) return each(unb64);
    if (U64_FIELDS.has(key)) return each(BigInt);
    return value;
  });
}

function encodeState(meta: LedgerMeta, svmBytes: Uint8Array): Buffer {
  const metaBytes = Buffer.from(JSON.stringify(meta));
  const header = Buffer.alloc(16);
  MAGIC.copy(header, 0);
  header.writeUInt32LE(metaBytes.length, 12);
  const body = Buffer.concat([metaBytes, svmBytes]);
  header.writeUInt32LE(crc32(body), 8);
  return Buffer.concat([header, body]);
}

function decodeState(file: Buffer): { meta: LedgerMeta; svmBytes: Uint8Array } {
  if (file.length < 16 || !file.subarray(0, 8).equals(MAGIC))
    throw new ChainDataError(`${STATE_FILE} is not a chain snapshot`);
  const body = file.subarray(16);
  if (crc32(body) !== file.readUInt32LE(8)) throw new ChainDataError(`${STATE_FILE} fails its checksum`);
  const metaLength = file.readUInt32LE(12);
  const meta = JSON.parse(body.subarray(0, metaLength).toString()) as LedgerMeta;
  if (meta.version !== 1) throw new ChainDataError(`${STATE_FILE} has unknown version ${meta.version}`);
  return { meta, svmBytes: new Uint8Array(body.subarray(metaLength)) };
}

/** Options of the chain's persistence. */
export interface PersistenceOptions {
  dir: string;
  /** How often dirty state is written (default 1000 ms). */
  flushIntervalMs?: number;
  /** How many recorded transactions are kept (default 50,000). */
  maxRecords?: number;
  onError?: (error: unknown) => void;
}

/** Persistence of one ledger in one directory. */
export type ChainPersistence = ReturnType<typeof createChainPersistence>;

/** Opens (and locks) a data directory for a chain. */
export function createChainPersistence(options: PersistenceOptions) {
  const { dir } = options;
  const maxRecords = options.maxRecords ?? 50_000;
  const statePath = join(dir, STATE_FILE);
  const logPath = join(dir, LOG_FILE);
  const lockPath = join(dir, LOCK_FILE);
  let logLines = 0;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  let ledger: Ledger | undefined;
  let closed = false;

  mkdirSync(dir, { recursive: true });
  acquireLock();

  // The lock names its holder by pid and process start time, so a lock left by a crashed process
  // whose pid was reused (pid 1 in every container) is recognised as stale.
  function acquireLock() {
    const me = `${process.pid} ${performance.timeOrigin}`;
    try {
      writeFileSync(lockPath, me, { flag: 'wx' });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const [pidText, origin] = readFileSync(lockPath, 'utf8').split(' ');
    const holder = Number(pidText);
    const held =
      holder === process.pid ? origin === String(performance.timeOrigin) : holder > 0 && isAlive(holder);
    if (held) throw new ChainDataError(`chain data directory ${dir} is in use by process ${holder}`);
    writeFileSync(lockPath, me);
  }

  async function writeAtomically(path: string, data: Uint8Array | string) {
    const tmp = `${path}.tmp`;
    const handle = await open(tmp, 'w');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  }

  async function flushNow() {
    if (!ledger?.isDirty()) return;
    const { svmBytes, meta, newRecords } = ledger.exportState();
    if (logLines + newRecords.length > maxRecords * 2) {
      // Compact: keep only what the ledger still remembers.
      const lines = [...ledger.allRecords()].filter((r) => r.seq <= meta.seq).map(recordToLine);
      await writeAtomically(logPath, lines.length ? `${lines.join('\n')}\n` : '');
      logLines = lines.length;
    } else if (newRecords.length > 0) {
      const handle = await open(logPath, 'a');
      try {
        await handle.writeFile(`${newRecords.map(recordToLine).join('\n')}\n`);
        await handle.datasync();
      } finally {
        await handle.close();
      }
      logLines += newRecords.length;
    }
    await writeAtomically(statePath, encodeState(meta, svmBytes));
  }

  return {
    /** Reads saved state, or returns undefined for an empty directory. */
    async load(): Promise<RestoredLedger | undefined> {
      await rm(`${statePath}.tmp`, { force: true });
      await rm(`${logPath}.tmp`, { force: true });
      let file: Buffer;
      try {
        file = await readFile(statePath);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      const { meta, svmBytes } = decodeState(file);
      let text = '';
      try {
        text = await readFile(logPath, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
      const records: TxRecord[] = [];
      let clean = true;
      for (const line of text.split('\n')) {
        if (!line) continue;
        let rec: TxRecord;
        try {
          rec = recordFromLine(line);
        } catch {
          clean = false; // a torn last line from a crash
          break;
        }
        if (rec.seq > meta.seq) {
          clean = false;
          break;
        }
        records.push(rec);
      }
      const kept = records.length > maxRecords ? records.slice(records.length - maxRecords) : records;
      if (!clean || kept.length !== records.length) {
        await writeAtomically(logPath, kept.length ? `${kept.map(recordToLine).join('\n')}\n` : '');
      }
      logLines = kept.length;
      return { meta, svmBytes, records: kept };
    },
    /** Starts write-behind saving of `target`. */
    attach(target: Ledger) {
      ledger = target;
      timer = setInterval(() => {
        this.flush().catch((error) => options.onError?.(error));
      }, options.flushIntervalMs ?? 1000);
      timer.unref();
    },
    /** Writes pending changes now (serialized with any flush already running). */
    flush(): Promise<void> {
      flushing = flushing.catch(() => undefined).then(flushNow);
      return flushing;
    },
    /** Stops the timer, writes everything, and releases the directory. */
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      try {
        await this.flush();
      } finally {
        rmSync(lockPath, { force: true });
      }
    },
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
