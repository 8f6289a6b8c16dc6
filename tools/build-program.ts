/**
 * Builds the router program from source: clang-16 compiles each C file of programs/router to a
 * BPF object, the project's linker turns them into the SBPF v0 and v3 shared objects.
 *
 *   node tools/build-program.ts           write programs/router/build/router-v{0,3}.so
 *   node tools/build-program.ts --check   rebuild in a temporary directory and fail when the bytes
 *                                         differ from the committed files
 *   --clang <path>                        compiler to use (default: clang-16)
 *
 * Reproducible by construction: sources are passed by relative path in sorted order, no debug
 * information or compiler identification is emitted, and the linker copies only code, constants
 * and relocation results into its output.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readElfObject } from './sbpf/elf-object.ts';
import { linkSbpf, type SbpfVersion } from './sbpf/linker.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sourceDir = join(root, 'programs', 'router');
const outputDir = join(sourceDir, 'build');

/** Syscalls the program is allowed to use; the linker refuses any other undefined symbol. */
export const ROUTER_SYSCALLS = [
  'sol_create_program_address',
  'sol_get_clock_sysvar',
  'sol_get_rent_sysvar',
  'sol_invoke_signed_c',
  'sol_log_',
  'sol_log_64_',
  'sol_log_pubkey',
  'sol_memset_',
  'sol_set_return_data',
] as const;

const CLANG_FLAGS = [
  '-target',
  'bpf',
  // ALU32 (v3) would emit 32-bit ops whose results sBPF sign-extends.
  '-mcpu=v2',
  '-O2',
  '-std=c11',
  '-ffreestanding',
  '-fno-builtin',
  '-fno-ident',
  '-Wall',
  '-Wextra',
  '-Werror',
] as const;

const VERSIONS: readonly SbpfVersion[] = [0, 3];

/** Compiles and links both variants into `outDir`; returns the written file paths. */
function buildRouterProgram(options: { clang: string; outDir: string }): string[] {
  const objDir = join(options.outDir, 'obj');
  mkdirSync(objDir, { recursive: true });
  const sources = readdirSync(sourceDir)
    .filter((f) => f.endsWith('.c'))
    .sort();
  const objects = sources.map((file) => {
    const objectPath = join(objDir, file.replace(/\.c$/, '.o'));
    execFileSync(
      options.clang,
      [...CLANG_FLAGS, '-c', relative(root, join(sourceDir, file)), '-o', objectPath],
      { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    return readElfObject(file, readFileSync(objectPath));
  });
  return VERSIONS.map((version) => {
    const program = linkSbpf(objects, { version, entry: 'entrypoint', syscalls: ROUTER_SYSCALLS });
    const path = join(options.outDir, `router-v${version}.so`);
    writeFileSync(path, program);
    return path;
  });
}

function main() {
  const { values } = parseArgs({
    options: { check: { type: 'boolean', default: false }, clang: { type: 'string', default: 'clang-16' } },
  });
  if (!values.check) {
    for (const path of buildRouterProgram({ clang: values.clang, outDir: outputDir })) {
      console.warn(`wrote ${relative(root, path)}`);
    }
    return;
  }
  const scratch = mkdtempSync(join(tmpdir(), 'router-build-'));
  try {
    let differs = false;
    for (const path of buildRouterProgram({ clang: values.clang, outDir: scratch })) {
      const name = relative(scratch, path);
      const committed = join(outputDir, name);
      let expected: Buffer | undefined;
      try {
        expected = readFileSync(committed);
      } catch {
        expected = undefined;
      }
      if (!expected?.equals(readFileSync(path))) {
        console.error(`${relative(root, committed)} differs from a fresh build; run npm run build:program`);
        differs = true;
      } else {
        console.warn(`${relative(root, committed)} matches the source`);
      }
    }
    if (differs) process.exitCode = 1;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
