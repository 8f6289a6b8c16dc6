import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

// Written by hand rather than with proper-lockfile: that library tells a stale lock by its age (a
// timer keeps touching it), so a lock left by a killed service would block the next start for
// its whole stale period, a long synchronous step (PGlite creating its cluster, the chain loading
// its state) can make a live lock look stale, and it records no process to name. A service holds
// its directory for as long as its process lives, so the lock names that process (pid, and its
// start time to tell a reused pid apart) and is stale exactly when that process is gone.
// Advisory OS locks (flock) would need a native add-on.

/** The file that says which process holds a data directory. */
export function dataDirLockPath(dataDir: string): string {
  return join(dataDir, 'service.lock');
}

/** Raised when another running process holds the data directory. */
export class DataDirInUseError extends Error {
  readonly dataDir: string;
  readonly pid: number;
  /** `message`: what to tell the person starting the service, when the caller knows more. */
  constructor(
    dataDir: string,
    pid: number,
    message = `the data directory ${dataDir} is in use by process ${pid}`,
  ) {
    super(message);
    this.name = 'DataDirInUseError';
    this.dataDir = dataDir;
    this.pid = pid;
  }
}

/** A held data directory. */
export interface DataDirLock {
  /** Lets the directory go (only if this process still holds it). */
  release(): Promise<void>;
}

interface Holder {
  pid: number;
  /** The holder's `performance.timeOrigin`: a pid reused after a crash (pid 1 in a container) differs here. */
  started: number;
}

const me = (): Holder => ({ pid: process.pid, started: performance.timeOrigin });

/** Whether the process `pid` runs (EPERM: it does, under another user). */
export function isProcessRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parseHolder(text: string): Holder | null {
  try {
    const parsed = JSON.parse(text) as Partial<Holder>;
    return Number.isInteger(parsed.pid) && typeof parsed.started === 'number'
      ? { pid: parsed.pid as number, started: parsed.started }
      : null;
  } catch {
    return null;
  }
}

/** Whether a recorded holder still holds the directory: its process runs (and is not this one reborn). */
function holds(holder: Holder | null): holder is Holder {
  if (!holder || holder.pid <= 0) return false;
  if (holder.pid === process.pid) return holder.started === performance.timeOrigin;
  return isProcessRunning(holder.pid);
}

async function readHolderText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/** The process holding `dataDir`, or null when none does (no lock, or one its process left behind). */
export async function dataDirHolder(dataDir: string): Promise<number | null> {
  const text = await readHolderText(dataDirLockPath(dataDir));
  const holder = text === null ? null : parseHolder(text);
  return holds(holder) ? holder.pid : null;
}

/**
 * Takes `dataDir` for this process, or throws {@link DataDirInUseError} naming the process that
 * holds it. A lock whose process is gone is taken over: it is moved aside under a name of this
 * process's own (a rename, so two starts cannot both move it) and checked to be the stale one
 * before a fresh lock is created; had another start replaced it meanwhile, it is put back.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true });
  const path = dataDirLockPath(dataDir);
  const mine = JSON.stringify(me());
  // The lock is written aside, then linked into place: it appears with its contents or not at
  // all, so a start reading it never finds it empty (and taken for a stale one).
  const written = `${path}.${process.pid}.new`;
  await writeFile(written, `${mine}\n`);
  try {
    return await takeLock(dataDir, path, written, mine);
  } finally {
    await rm(written, { force: true });
  }
}

async function takeLock(dataDir: string, path: string, written: string, mine: string): Promise<DataDirLock> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await link(written, path);
      return { release: () => releaseLock(path, mine) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const text = await readHolderText(path);
    if (text === null) continue;
    const holder = parseHolder(text);
    if (holds(holder)) throw new DataDirInUseError(dataDir, holder.pid);
    const aside = `${path}.${process.pid}.stale`;
    try {
      await rename(path, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw error;
    }
    const moved = await readFile(aside, 'utf8');
    // Another start's fresh lock was moved instead of the stale one: back where it was.
    if (moved !== text) await link(aside, path).catch(() => {});
    await rm(aside, { force: true });
  }
  throw new Error(`could not take the data directory ${dataDir}: its lock ${path} keeps changing`);
}

async function releaseLock(path: string, mine: string): Promise<void> {
  if ((await readHolderText(path))?.trim() === mine) await rm(path, { force: true });
}
