// The legacy SPL Token program (spl_token 3.5.0), which clusters ran at the Token program id before
// p-token replaced it. LiteSVM ships only p-token, whose Transfer costs ~76 CU where the legacy
// program's costs ~4,600, so programs that call Token are measured on both. No registry package
// ships the legacy program as a file, but `solana-bankrun` 0.4.0 (a development dependency of this
// package) embeds it in its native addon, so it is read from there rather than vendored: the addon
// holds several sBPF ELF files (spl_token, Token-2022, Associated Token Account, Memo v1 and v3)
// side by side, and the one that is the legacy Token program is cut out by its ELF header.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Which implementation of the SPL Token program runs at `TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA`. */
export type TokenProgramImplementation = 'p-token' | 'legacy';

/** Reads a Token program implementation's name (from a command line or the environment). */
export function parseTokenProgram(value: string): TokenProgramImplementation {
  if (value !== 'p-token' && value !== 'legacy') {
    throw new Error(`the Token program is p-token or legacy, not ${value}`);
  }
  return value;
}

/** SHA-256 of spl_token 3.5.0 as solana-bankrun 0.4.0 embeds it (the figures measured on it depend on these bytes). */
export const LEGACY_TOKEN_PROGRAM_SHA256 = '18264f491c7e0ad056dd36f42f8de6d1fedf9f044d1f521e714b4dc6b61594b6';

/** A log string only spl_token 3.x contains (Token-2022 implements InitializeImmutableOwner). */
const LEGACY_MARKER = Buffer.from('Please upgrade to SPL Token 2022 for immutable owner support');

const ELF_MAGIC = Buffer.from([0x7f, 0x45, 0x4c, 0x46]);
const ELF_CLASS_64 = 2;
const ELF_DATA_LITTLE_ENDIAN = 1;
/** e_machine of Solana programs: EM_BPF (SBPF v0-v2) and EM_SBPF (v3). */
const SBPF_MACHINES = new Set([247, 263]);

/** The native addon of the solana-bankrun platform package installed here (npm installs only the matching one). */
function bankrunAddonPath(): string {
  const require = createRequire(import.meta.url);
  const bankrun = JSON.parse(readFileSync(require.resolve('solana-bankrun/package.json'), 'utf8')) as {
    optionalDependencies?: Record<string, string>;
  };
  for (const platformPackage of Object.keys(bankrun.optionalDependencies ?? {})) {
    let manifest: string;
    try {
      manifest = require.resolve(`${platformPackage}/package.json`);
    } catch {
      continue;
    }
    const { main } = JSON.parse(readFileSync(manifest, 'utf8')) as { main: string };
    return join(dirname(manifest), main);
  }
  throw new Error(
    'no solana-bankrun platform package is installed (npm install installs the one of this machine)',
  );
}

/**
 * The sBPF ELF files inside `blob`: each starts at an ELF magic with a 64-bit little-endian header
 * of a Solana e_machine, and ends with its section header table, which linkers write last.
 */
export function embeddedSbpfElfs(blob: Uint8Array): Uint8Array[] {
  const bytes = Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength);
  const elfs: Uint8Array[] = [];
  for (let at = bytes.indexOf(ELF_MAGIC); at !== -1; at = bytes.indexOf(ELF_MAGIC, at + 1)) {
    if (at + 64 > bytes.length) break;
    if (bytes[at + 4] !== ELF_CLASS_64 || bytes[at + 5] !== ELF_DATA_LITTLE_ENDIAN) continue;
    if (!SBPF_MACHINES.has(bytes.readUInt16LE(at + 18))) continue;
    const sectionHeadersAt = Number(bytes.readBigUInt64LE(at + 40));
    const end = at + sectionHeadersAt + bytes.readUInt16LE(at + 58) * bytes.readUInt16LE(at + 60);
    if (end > bytes.length) continue;
    elfs.push(new Uint8Array(bytes.subarray(at, end)));
  }
  return elfs;
}

let cached: Uint8Array | undefined;

/**
 * The legacy SPL Token program's ELF (spl_token 3.5.0), read from solana-bankrun's addon once per
 * process; deploy it at the Token program id (`TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA`).
 */
export function legacyTokenProgram(): Uint8Array {
  if (cached) return cached;
  const candidates = embeddedSbpfElfs(readFileSync(bankrunAddonPath())).filter(
    (elf) => Buffer.from(elf.buffer, elf.byteOffset, elf.byteLength).indexOf(LEGACY_MARKER) !== -1,
  );
  if (candidates.length !== 1) {
    throw new Error(`expected one legacy SPL Token program in solana-bankrun, found ${candidates.length}`);
  }
  const elf = candidates[0]!;
  const digest = createHash('sha256').update(elf).digest('hex');
  if (digest !== LEGACY_TOKEN_PROGRAM_SHA256) {
    throw new Error(
      `the legacy SPL Token program in solana-bankrun has sha256 ${digest}, not spl_token 3.5.0's`,
    );
  }
  cached = elf;
  return elf;
}
