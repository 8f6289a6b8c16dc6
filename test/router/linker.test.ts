import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { routerProgramPath } from '../../src/chain/router/program.ts';
import { ROUTER_SYSCALLS } from '../../tools/build-program.ts';
import { readElfObject } from '../../tools/sbpf/elf-object.ts';
import { linkSbpf } from '../../tools/sbpf/linker.ts';
import { murmur3_32, syscallHash } from '../../tools/sbpf/murmur3.ts';

/*
 * A minimal writer of ELF64 BPF relocatable objects, so the linker is tested on inputs whose every
 * byte is known, without a compiler.
 */
interface SymbolSpec {
  name: string;
  section: '.text' | '.rodata' | 'undef';
  value: number;
  global: boolean;
  func?: boolean;
}
interface RelocationSpec {
  offset: number;
  type: number;
  symbol: string;
}

function objectFile(spec: {
  text: Uint8Array;
  rodata?: Uint8Array;
  data?: Uint8Array;
  symbols: SymbolSpec[];
  relocations: RelocationSpec[];
}) {
  const names = ['', '.text', '.rodata', '.data', '.rel.text', '.symtab', '.strtab', '.shstrtab'];
  const shstr = new TextEncoder().encode(`${names.join('\0')}\0`);
  const nameOffset = (n: string) => names.slice(0, names.indexOf(n)).reduce((t, x) => t + x.length + 1, 0);
  const symbolNames = spec.symbols.map((s) => s.name);
  const strtab = new TextEncoder().encode(`\0${symbolNames.join('\0')}\0`);
  const symbols = new Uint8Array(24 * (spec.symbols.length + 1));
  const sv = new DataView(symbols.buffer);
  let at = 1;
  spec.symbols.forEach((s, i) => {
    const o = 24 * (i + 1);
    sv.setUint32(o, at, true);
    at += s.name.length + 1;
    symbols[o + 4] = ((s.global ? 1 : 0) << 4) | (s.func ? 2 : 0);
    sv.setUint16(o + 6, s.section === 'undef' ? 0 : s.section === '.text' ? 1 : 2, true);
    sv.setBigUint64(o + 8, BigInt(s.value), true);
  });
  const rel = new Uint8Array(16 * spec.relocations.length);
  const rv = new DataView(rel.buffer);
  spec.relocations.forEach((r, i) => {
    rv.setBigUint64(16 * i, BigInt(r.offset), true);
    rv.setBigUint64(16 * i + 8, (BigInt(symbolNames.indexOf(r.symbol) + 1) << 32n) | BigInt(r.type), true);
  });
  const rodata = spec.rodata ?? new Uint8Array(0);
  const data = spec.data ?? new Uint8Array(0);
  const bodies = [spec.text, rodata, data, rel, symbols, strtab, shstr];
  let offset = 64;
  const placed = bodies.map((b) => {
    offset = Math.ceil(offset / 8) * 8;
    const start = offset;
    offset += b.length;
    return start;
  });
  const shoff = Math.ceil(offset / 8) * 8;
  const file = new Uint8Array(shoff + 64 * names.length);
  const v = new DataView(file.buffer);
  file.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], 0);
  v.setUint16(16, 1, true);
  v.setUint16(18, 247, true);
  v.setBigUint64(40, BigInt(shoff), true);
  v.setUint16(58, 64, true);
  v.setUint16(60, names.length, true);
  v.setUint16(62, names.length - 1, true);
  for (const [i, b] of bodies.entries()) file.set(b, placed[i]!);
  // [type, flags, link, info, entsize] per section after the null one
  const headers: [number, number, number, number, number][] = [
    [1, 6, 0, 0, 0],
    [1, 2, 0, 0, 0],
    [1, 3, 0, 0, 0],
    [9, 0, 5, 1, 16],
    [2, 0, 6, 1, 24],
    [3, 0, 0, 0, 0],
    [3, 0, 0, 0, 0],
  ];
  headers.forEach(([type, flags, link, info, entsize], i) => {
    const o = shoff + 64 * (i + 1);
    v.setUint32(o, nameOffset(names[i + 1]!), true);
    v.setUint32(o + 4, type, true);
    v.setBigUint64(o + 8, BigInt(flags), true);
    v.setBigUint64(o + 24, BigInt(placed[i]!), true);
    v.setBigUint64(o + 32, BigInt(bodies[i]!.length), true);
    v.setUint32(o + 40, link, true);
    v.setUint32(o + 44, info, true);
    v.setBigUint64(o + 48, 8n, true);
    v.setBigUint64(o + 56, BigInt(entsize), true);
  });
  return readElfObject('test.o', file);
}

const insn = (op: number, regs: number, off: number, imm: number) => {
  const b = new Uint8Array(8);
  const v = new DataView(b.buffer);
  b[0] = op;
  b[1] = regs;
  v.setInt16(2, off, true);
  v.setInt32(4, imm, true);
  return b;
};
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((t, p) => t + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

// entrypoint: r1 = &message (lddw), call sol_log_, call helper, exit; helper: exit
const program = () =>
  objectFile({
    text: concat(
      insn(0x18, 0x01, 0, 3),
      insn(0, 0, 0, 0),
      insn(0x85, 0x10, 0, -1),
      insn(0x85, 0x10, 0, -1),
      insn(0x95, 0, 0, 0),
      insn(0x95, 0, 0, 0),
    ),
    rodata: new TextEncoder().encode('...hello'),
    symbols: [
      { name: 'message', section: '.rodata', value: 0, global: false },
      { name: 'entrypoint', section: '.text', value: 0, global: true, func: true },
      { name: 'helper', section: '.text', value: 40, global: true, func: true },
      { name: 'sol_log_', section: 'undef', value: 0, global: true },
    ],
    relocations: [
      { offset: 0, type: 1, symbol: 'message' },
      { offset: 16, type: 10, symbol: 'sol_log_' },
      { offset: 24, type: 10, symbol: 'helper' },
    ],
  });

const u32 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
const u64 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getBigUint64(at, true);
const u16 = (b: Uint8Array, at: number) => new DataView(b.buffer, b.byteOffset).getUint16(at, true);

describe('sBPF linker', () => {
  test('murmur3 gives the loader syscall ids', () => {
    assert.equal(syscallHash('sol_log_'), 0x207559bd);
    assert.equal(syscallHash('abort'), 0xb6fc1a11);
    assert.equal(syscallHash('sol_log_64_'), 0x5c2a3178);
    assert.equal(murmur3_32(new Uint8Array(0)), 0);
    assert.equal(murmur3_32(new TextEncoder().encode('abc')), 0xb3dd93fa);
  });

  test('v3: read-only data at 0, code at 1 << 32, static syscalls and pc-relative calls', () => {
    const elf = linkSbpf([program()], { version: 3, entry: 'entrypoint', syscalls: ['sol_log_'] });
    assert.equal(u32(elf, 48), 3, 'e_flags');
    assert.equal(u16(elf, 56), 2, 'two program headers');
    assert.equal(u64(elf, 64 + 16), 0n, 'rodata vaddr');
    assert.equal(u64(elf, 64 + 8), 176n, 'rodata offset');
    assert.equal(u64(elf, 64 + 32), 16n, 'eight bytes of padding and the message');
    assert.equal(u64(elf, 120 + 16), 1n << 32n, 'code vaddr');
    assert.equal(u64(elf, 24), 1n << 32n, 'entry');
    const text = elf.subarray(192);
    assert.equal(u32(text, 4), 8 + 3, 'lddw points at the message (after the padding, plus addend)');
    assert.equal(u32(text, 12), 0);
    assert.deepEqual([text[17], u32(text, 20)], [0x00, 0x207559bd], 'syscall: src 0, imm = hash');
    assert.deepEqual([text[25], u32(text, 28)], [0x10, 1], 'internal call: src 1, to helper');
    assert.deepEqual(elf, linkSbpf([program()], { version: 3, entry: 'entrypoint', syscalls: ['sol_log_'] }));
  });

  test('v0: sections at their file offsets, absolute addresses, syscalls through .rel.dyn', () => {
    const elf = linkSbpf([program()], { version: 0, entry: 'entrypoint', syscalls: ['sol_log_'] });
    assert.equal(u32(elf, 48), 0);
    const shoff = Number(u64(elf, 40));
    const shnum = u16(elf, 60);
    const sections = Array.from({ length: shnum }, (_, i) => ({
      type: u32(elf, shoff + 64 * i + 4),
      addr: u64(elf, shoff + 64 * i + 16),
      offset: u64(elf, shoff + 64 * i + 24),
    }));
    for (const s of sections.slice(1)) assert.equal(s.addr, s.offset);
    const text = Number(sections[1]!.offset);
    const rodata = Number(sections[2]!.offset);
    assert.equal(u64(elf, 24), BigInt(text), 'entry at the start of .text');
    assert.equal(u32(elf, text + 4), rodata + 3);
    assert.equal(u32(elf, text + 12), 1, 'high half: program region');
    assert.equal(u32(elf, text + 20), 0xffffffff, 'syscall stays call -1');
    const rel = sections.find((s) => s.type === 9)!;
    assert.equal(u64(elf, Number(rel.offset)), BigInt(text + 16), 'relocation at the syscall');
    assert.equal(u64(elf, Number(rel.offset) + 8), (1n << 32n) | 10n, 'R_BPF_64_32 against dynsym 1');
    assert.ok(new TextDecoder().decode(elf).includes('\0sol_log_\0'));
  });

  test('v3 reads the callx register from dst, where clang leaves it in imm', () => {
    const object = objectFile({
      text: concat(insn(0x8d, 0, 0, 3), insn(0x95, 0, 0, 0)),
      symbols: [{ name: 'entrypoint', section: '.text', value: 0, global: true, func: true }],
      relocations: [],
    });
    const v3 = linkSbpf([object], { version: 3, entry: 'entrypoint', syscalls: [] });
    assert.deepEqual([...v3.subarray(176 + 8, 176 + 16)], [0x8d, 3, 0, 0, 0, 0, 0, 0]);
    const v0 = linkSbpf([object], { version: 0, entry: 'entrypoint', syscalls: [] });
    assert.deepEqual([...v0.subarray(232, 240)], [0x8d, 0, 0, 0, 3, 0, 0, 0]);
  });

  test('refuses what the loader would refuse', () => {
    const base = { text: insn(0x95, 0, 0, 0), relocations: [] };
    const entry: SymbolSpec = { name: 'entrypoint', section: '.text', value: 0, global: true, func: true };
    assert.throws(
      () =>
        linkSbpf([objectFile({ ...base, data: new Uint8Array(8), symbols: [entry] })], {
          version: 3,
          entry: 'entrypoint',
          syscalls: [],
        }),
      /writable section \.data/,
    );
    const unknown = objectFile({
      text: concat(insn(0x85, 0x10, 0, -1), insn(0x95, 0, 0, 0)),
      symbols: [entry, { name: 'sol_unknown', section: 'undef', value: 0, global: true }],
      relocations: [{ offset: 0, type: 10, symbol: 'sol_unknown' }],
    });
    assert.throws(
      () => linkSbpf([unknown], { version: 0, entry: 'entrypoint', syscalls: ['sol_log_'] }),
      /undefined symbol sol_unknown/,
    );
    assert.throws(
      () =>
        linkSbpf([objectFile({ ...base, symbols: [] })], { version: 3, entry: 'entrypoint', syscalls: [] }),
      /entry entrypoint not found/,
    );
  });

  test('the committed programs have the layouts the loaders require', () => {
    const v0 = new Uint8Array(readFileSync(routerProgramPath('v0')));
    const v3 = new Uint8Array(readFileSync(routerProgramPath('v3')));
    assert.deepEqual([u16(v0, 16), u16(v0, 18), u32(v0, 48)], [3, 247, 0]);
    assert.deepEqual([u16(v3, 16), u16(v3, 18), u32(v3, 48)], [3, 247, 3]);
    assert.equal(u64(v3, 64 + 16), 0n);
    assert.equal(u64(v3, 120 + 16), 1n << 32n);
    const text = new TextDecoder().decode(v0);
    for (const name of text.match(/sol_[a-z0-9_]+/g) ?? [])
      assert.ok((ROUTER_SYSCALLS as readonly string[]).includes(name), name);
  });
});
