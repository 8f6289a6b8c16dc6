/**
 * A static linker from clang BPF objects to the sBPF shared objects the Solana loader accepts.
 *
 * Written by hand because `ld.lld -shared` refuses R_BPF_64_64 against local symbols and cannot
 * emit syscall hashes, and no npm package links sBPF. The output is a pure function of the input
 * objects (no timestamps, paths or host data), so rebuilding from the same objects is byte-exact.
 *
 * SBPF v0: classic layout (ELF header, program headers, `.text`, `.rodata`, dynamic tables) where
 * every section has `sh_addr == sh_offset`, code and constants are addressed at
 * `1 << 32 + file offset`, and syscalls stay `call -1` with a dynamic R_BPF_64_32 relocation.
 * SBPF v3: two program headers only (read-only data at vaddr 0, code at `1 << 32`), no relocations,
 * syscalls as `call` with `src = 0` and `imm = murmur3(name)`.
 */
import {
  type ElfObject,
  type ObjectSection,
  type ObjectSymbol,
  SHN_ABS,
  SHN_UNDEF,
  STB_LOCAL,
  STT_SECTION,
} from './elf-object.ts';
import { syscallHash } from './murmur3.ts';

export type SbpfVersion = 0 | 3;

export interface LinkOptions {
  version: SbpfVersion;
  /** Name of the function the loader starts at. */
  entry: string;
  /** Syscalls the program may call; anything else is a link error (the loader would refuse it). */
  syscalls: readonly string[];
}

const R_BPF_64_64 = 1;
const R_BPF_64_ABS64 = 2;
const R_BPF_64_32 = 10;
const OP_LDDW = 0x18;
const OP_CALL_IMM = 0x85;
const OP_CALL_REG = 0x8d;
const SHF_WRITE = 1n;
const SHF_ALLOC = 2n;
const SHF_EXECINSTR = 4n;
const PROGRAM_REGION = 1n << 32n;
const EHDR_SIZE = 64;
const PHDR_SIZE = 56;
const SHDR_SIZE = 64;

const align = (n: number, to: number) => Math.ceil(n / to) * to;

interface Placed {
  object: ElfObject;
  section: ObjectSection;
  /** Offset of the section inside the merged text or rodata blob. */
  at: number;
  kind: 'text' | 'rodata';
}

interface DynamicRelocation {
  fileOffset: number;
  name: string;
}

/** Links BPF relocatable objects into an sBPF program of the requested version. */
export function linkSbpf(objects: readonly ElfObject[], options: LinkOptions): Uint8Array {
  const placed = new Map<string, Placed>();
  const key = (o: ElfObject, index: number) => `${o.name}#${index}`;
  let textSize = 0;
  // v3 maps read-only data at address 0; eight zero bytes keep every object off the null pointer.
  let rodataSize = options.version === 3 ? 8 : 0;
  for (const object of objects) {
    for (const section of object.sections) {
      if ((section.flags & SHF_ALLOC) === 0n || section.size === 0) continue;
      if ((section.flags & SHF_WRITE) !== 0n) {
        throw new Error(`${object.name}: writable section ${section.name} (no mutable globals in sBPF)`);
      }
      if ((section.flags & SHF_EXECINSTR) !== 0n) {
        textSize = align(textSize, 8);
        placed.set(key(object, section.index), { object, section, at: textSize, kind: 'text' });
        textSize += section.size;
      } else if (section.name.startsWith('.rodata')) {
        rodataSize = align(rodataSize, section.addralign);
        placed.set(key(object, section.index), { object, section, at: rodataSize, kind: 'rodata' });
        rodataSize += section.size;
      } else {
        throw new Error(`${object.name}: unsupported allocated section ${section.name}`);
      }
    }
  }
  textSize = align(textSize, 8);
  rodataSize = align(rodataSize, 8);
  if (textSize === 0) throw new Error('no code to link');

  // File and virtual layout of code and constants.
  const v0TextOffset = align(EHDR_SIZE + 3 * PHDR_SIZE, 8);
  const v3RodataOffset = EHDR_SIZE + 2 * PHDR_SIZE;
  const textFileOffset = options.version === 0 ? v0TextOffset : v3RodataOffset + rodataSize;
  const rodataFileOffset = options.version === 0 ? v0TextOffset + textSize : v3RodataOffset;
  const textVaddr = (at: number) =>
    options.version === 0 ? PROGRAM_REGION + BigInt(textFileOffset + at) : PROGRAM_REGION + BigInt(at);
  const rodataVaddr = (at: number) =>
    options.version === 0 ? PROGRAM_REGION + BigInt(rodataFileOffset + at) : BigInt(at);

  const text = new Uint8Array(textSize);
  const rodata = new Uint8Array(rodataSize);
  for (const p of placed.values()) (p.kind === 'text' ? text : rodata).set(p.section.bytes, p.at);

  const globals = new Map<string, { object: ElfObject; symbol: ObjectSymbol }>();
  for (const object of objects) {
    for (const symbol of object.symbols) {
      if (symbol.bind === STB_LOCAL || symbol.shndx === SHN_UNDEF || symbol.name === '') continue;
      if (globals.has(symbol.name)) throw new Error(`duplicate symbol ${symbol.name}`);
      globals.set(symbol.name, { object, symbol });
    }
  }

  interface Resolved {
    placed: Placed;
    offset: number;
    isSection: boolean;
  }
  const resolve = (object: ElfObject, symbol: ObjectSymbol): Resolved | undefined => {
    if (symbol.shndx === SHN_UNDEF) {
      const def = globals.get(symbol.name);
      return def ? resolve(def.object, def.symbol) : undefined;
    }
    if (symbol.shndx === SHN_ABS) throw new Error(`${object.name}: absolute symbol ${symbol.name}`);
    const p = placed.get(key(object, symbol.shndx));
    if (!p) throw new Error(`${object.name}: symbol ${symbol.name} lives in an unlinked section`);
    return { placed: p, offset: p.at + symbol.value, isSection: symbol.type === STT_SECTION };
  };

  const allowedSyscalls = new Set(options.syscalls);
  const dynamicRelocations: DynamicRelocation[] = [];
  const textView = new DataView(text.buffer);
  const rodataView = new DataView(rodata.buffer);

  for (const p of placed.values()) {
    const relocations = p.object.relocations.get(p.section.index) ?? [];
    const view = p.kind === 'text' ? textView : rodataView;
    for (const rel of relocations) {
      const symbol = p.object.symbols[rel.symbol];
      if (!symbol) throw new Error(`${p.object.name}: relocation against missing symbol ${rel.symbol}`);
      const at = p.at + rel.offset;
      const target = resolve(p.object, symbol);
      if (rel.type === R_BPF_64_64) {
        if (p.kind !== 'text' || text[at] !== OP_LDDW)
          throw new Error(`${p.object.name}: R_BPF_64_64 not on lddw`);
        if (!target) throw new Error(`${p.object.name}: undefined symbol ${symbol.name}`);
        const addend = textView.getUint32(at + 4, true);
        const base = target.placed.kind === 'text' ? textVaddr(target.offset) : rodataVaddr(target.offset);
        const address = base + BigInt(addend);
        textView.setUint32(at + 4, Number(address & 0xffffffffn), true);
        textView.setUint32(at + 12, Number(address >> 32n), true);
      } else if (rel.type === R_BPF_64_32) {
        if (p.kind !== 'text' || text[at] !== OP_CALL_IMM)
          throw new Error(`${p.object.name}: R_BPF_64_32 not on call`);
        if (!target) {
          if (!allowedSyscalls.has(symbol.name)) throw new Error(`undefined symbol ${symbol.name}`);
          if (options.version === 0) {
            textView.setInt32(at + 4, -1, true);
            dynamicRelocations.push({ fileOffset: textFileOffset + at, name: symbol.name });
          } else {
            text[at + 1] = text[at + 1]! & 0x0f; // src = 0 marks a static syscall
            textView.setUint32(at + 4, syscallHash(symbol.name), true);
          }
        } else {
          if (target.placed.kind !== 'text' || target.isSection) {
            throw new Error(`${p.object.name}: unsupported call target ${symbol.name}`);
          }
          text[at + 1] = (text[at + 1]! & 0x0f) | 0x10; // src = 1 marks an internal call
          textView.setInt32(at + 4, (target.offset - at - 8) / 8, true);
        }
      } else if (rel.type === R_BPF_64_ABS64) {
        if (!target) throw new Error(`${p.object.name}: undefined symbol ${symbol.name}`);
        const addend = view.getBigUint64(at, true);
        const base = target.placed.kind === 'text' ? textVaddr(target.offset) : rodataVaddr(target.offset);
        view.setBigUint64(at, base + addend, true);
      } else {
        throw new Error(`${p.object.name}: unsupported relocation type ${rel.type} in ${p.section.name}`);
      }
    }
  }

  checkCode(text, options.version);

  const entry = globals.get(options.entry);
  const entryTarget = entry ? resolve(entry.object, entry.symbol) : undefined;
  if (entryTarget?.placed.kind !== 'text') throw new Error(`entry ${options.entry} not found`);

  return options.version === 0
    ? writeV0({ text, rodata, textFileOffset, entryOffset: entryTarget.offset, dynamicRelocations })
    : writeV3({ text, rodata, entryOffset: entryTarget.offset });
}

/** Rejects code the loader would refuse, and moves the callx register where v3 reads it. */
function checkCode(text: Uint8Array, version: SbpfVersion) {
  const view = new DataView(text.buffer);
  const count = text.length / 8;
  for (let pc = 0; pc < count; pc++) {
    const at = pc * 8;
    const op = text[at]!;
    if (op === OP_LDDW) {
      pc++;
      continue;
    }
    if (op === OP_CALL_IMM) {
      const src = text[at + 1]! >> 4;
      const imm = view.getInt32(at + 4, true);
      if (src === 1 && imm !== -1) {
        const target = pc + 1 + imm;
        if (target < 0 || target >= count) throw new Error(`call at ${pc} leaves the code`);
      } else if (version === 3 && src !== 0) {
        throw new Error(`unresolved call at instruction ${pc}`);
      }
    }
    if (op === OP_CALL_REG && version === 3) {
      const reg = view.getInt32(at + 4, true);
      text[at + 1] = (text[at + 1]! & 0xf0) | (reg & 0x0f);
      view.setInt32(at + 4, 0, true);
    }
  }
}

class Writer {
  readonly bytes: Uint8Array;
  readonly view: DataView;
  constructor(size: number) {
    this.bytes = new Uint8Array(size);
    this.view = new DataView(this.bytes.buffer);
  }
  u8(at: number, v: number) {
    this.bytes[at] = v;
  }
  u16(at: number, v: number) {
    this.view.setUint16(at, v, true);
  }
  u32(at: number, v: number) {
    this.view.setUint32(at, v, true);
  }
  u64(at: number, v: number | bigint) {
    this.view.setBigUint64(at, BigInt(v), true);
  }
}

interface Header {
  entry: bigint;
  phnum: number;
  shoff: number;
  shnum: number;
  shstrndx: number;
  flags: number;
}

function writeElfHeader(w: Writer, h: Header) {
  w.bytes.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0], 0);
  w.u16(16, 3); // ET_DYN
  w.u16(18, 247); // EM_BPF
  w.u32(20, 1);
  w.u64(24, h.entry);
  w.u64(32, EHDR_SIZE);
  w.u64(40, h.shoff);
  w.u32(48, h.flags);
  w.u16(52, EHDR_SIZE);
  w.u16(54, PHDR_SIZE);
  w.u16(56, h.phnum);
  w.u16(58, SHDR_SIZE);
  w.u16(60, h.shnum);
  w.u16(62, h.shstrndx);
}

interface Segment {
  type: number;
  flags: number;
  offset: number;
  vaddr: bigint;
  size: number;
}

function writeProgramHeader(w: Writer, index: number, s: Segment) {
  const at = EHDR_SIZE + index * PHDR_SIZE;
  w.u32(at, s.type);
  w.u32(at + 4, s.flags);
  w.u64(at + 8, s.offset);
  w.u64(at + 16, s.vaddr);
  w.u64(at + 24, s.vaddr);
  w.u64(at + 32, s.size);
  w.u64(at + 40, s.size);
  w.u64(at + 48, 8);
}

function writeV3(p: { text: Uint8Array; rodata: Uint8Array; entryOffset: number }): Uint8Array {
  const rodataOffset = EHDR_SIZE + 2 * PHDR_SIZE;
  const textOffset = rodataOffset + p.rodata.length;
  const w = new Writer(textOffset + p.text.length);
  writeElfHeader(w, {
    entry: PROGRAM_REGION + BigInt(p.entryOffset),
    phnum: 2,
    shoff: 0,
    shnum: 0,
    shstrndx: 0,
    flags: 3,
  });
  writeProgramHeader(w, 0, { type: 1, flags: 4, offset: rodataOffset, vaddr: 0n, size: p.rodata.length });
  writeProgramHeader(w, 1, {
    type: 1,
    flags: 1,
    offset: textOffset,
    vaddr: PROGRAM_REGION,
    size: p.text.length,
  });
  w.bytes.set(p.rodata, rodataOffset);
  w.bytes.set(p.text, textOffset);
  return w.bytes;
}

function writeV0(p: {
  text: Uint8Array;
  rodata: Uint8Array;
  textFileOffset: number;
  entryOffset: number;
  dynamicRelocations: DynamicRelocation[];
}): Uint8Array {
  const names = [...new Set(p.dynamicRelocations.map((r) => r.name))].sort();
  const relocations = [...p.dynamicRelocations].sort((a, b) => a.fileOffset - b.fileOffset);
  const dynstrParts = [''];
  const nameOffset = new Map<string, number>();
  let dynstrSize = 1;
  for (const name of names) {
    nameOffset.set(name, dynstrSize);
    dynstrParts.push(name);
    dynstrSize += name.length + 1;
  }
  const dynstr = new TextEncoder().encode(`${dynstrParts.join('\0')}\0`);

  const sectionNames = ['', '.text', '.rodata', '.dynamic', '.dynsym', '.dynstr', '.rel.dyn', '.shstrtab'];
  const hasRodata = p.rodata.length > 0;
  const used = sectionNames.filter((n) => n !== '.rodata' || hasRodata);
  const shstrtab = new TextEncoder().encode(`${used.join('\0')}\0`);
  const shName = (n: string) => {
    let at = 0;
    for (const u of used) {
      if (u === n) return at;
      at += u.length + 1;
    }
    throw new Error(`no section name ${n}`);
  };

  const textOffset = p.textFileOffset;
  const rodataOffset = textOffset + p.text.length;
  const dynamicEntries = 8;
  const dynamicOffset = align(rodataOffset + p.rodata.length, 8);
  const dynamicSize = dynamicEntries * 16;
  const dynsymOffset = dynamicOffset + dynamicSize;
  const dynsymSize = (names.length + 1) * 24;
  const dynstrOffset = dynsymOffset + dynsymSize;
  const relOffset = align(dynstrOffset + dynstr.length, 8);
  const relSize = relocations.length * 16;
  const shstrOffset = relOffset + relSize;
  const shoff = align(shstrOffset + shstrtab.length, 8);
  const shnum = used.length;
  const w = new Writer(shoff + shnum * SHDR_SIZE);

  const index = (n: string) => used.indexOf(n);
  writeElfHeader(w, {
    entry: BigInt(textOffset + p.entryOffset),
    phnum: 3,
    shoff,
    shnum,
    shstrndx: index('.shstrtab'),
    flags: 0,
  });
  writeProgramHeader(w, 0, {
    type: 1,
    flags: 5,
    offset: textOffset,
    vaddr: BigInt(textOffset),
    size: rodataOffset + p.rodata.length - textOffset,
  });
  writeProgramHeader(w, 1, {
    type: 1,
    flags: 4,
    offset: dynamicOffset,
    vaddr: BigInt(dynamicOffset),
    size: relOffset + relSize - dynamicOffset,
  });
  writeProgramHeader(w, 2, {
    type: 2,
    flags: 4,
    offset: dynamicOffset,
    vaddr: BigInt(dynamicOffset),
    size: dynamicSize,
  });

  w.bytes.set(p.text, textOffset);
  w.bytes.set(p.rodata, rodataOffset);

  const dynamic: [number, number][] = [
    [17, relOffset], // DT_REL
    [18, relSize], // DT_RELSZ
    [19, 16], // DT_RELENT
    [6, dynsymOffset], // DT_SYMTAB
    [11, 24], // DT_SYMENT
    [5, dynstrOffset], // DT_STRTAB
    [10, dynstr.length], // DT_STRSZ
    [0, 0], // DT_NULL
  ];
  dynamic.forEach(([tag, value], i) => {
    w.u64(dynamicOffset + i * 16, tag);
    w.u64(dynamicOffset + i * 16 + 8, value);
  });

  names.forEach((name, i) => {
    const at = dynsymOffset + (i + 1) * 24;
    w.u32(at, nameOffset.get(name)!);
    w.u8(at + 4, 0x10); // STB_GLOBAL, STT_NOTYPE: an undefined symbol is a syscall to the loader
  });
  w.bytes.set(dynstr, dynstrOffset);
  relocations.forEach((r, i) => {
    const at = relOffset + i * 16;
    w.u64(at, r.fileOffset);
    w.u64(at + 8, (BigInt(names.indexOf(r.name) + 1) << 32n) | BigInt(R_BPF_64_32));
  });
  w.bytes.set(shstrtab, shstrOffset);

  const sections: Record<string, [number, bigint, number, number, number, number, number, number]> = {
    // name: [type, flags, offset, size, link, info, align, entsize]
    '.text': [1, SHF_ALLOC | SHF_EXECINSTR, textOffset, p.text.length, 0, 0, 8, 0],
    '.rodata': [1, SHF_ALLOC, rodataOffset, p.rodata.length, 0, 0, 8, 0],
    '.dynamic': [6, SHF_ALLOC | SHF_WRITE, dynamicOffset, dynamicSize, index('.dynstr'), 0, 8, 16],
    '.dynsym': [11, SHF_ALLOC, dynsymOffset, dynsymSize, index('.dynstr'), 1, 8, 24],
    '.dynstr': [3, SHF_ALLOC, dynstrOffset, dynstr.length, 0, 0, 1, 0],
    '.rel.dyn': [9, SHF_ALLOC, relOffset, relSize, index('.dynsym'), 0, 8, 16],
    '.shstrtab': [3, 0n, shstrOffset, shstrtab.length, 0, 0, 1, 0],
  };
  used.forEach((n, i) => {
    if (n === '') return;
    const [type, flags, offset, size, link, info, alignment, entsize] = sections[n]!;
    const at = shoff + i * SHDR_SIZE;
    w.u32(at, shName(n));
    w.u32(at + 4, type);
    w.u64(at + 8, flags);
    // The loader insists that every section's address equals its file offset.
    w.u64(at + 16, offset);
    w.u64(at + 24, offset);
    w.u64(at + 32, size);
    w.u32(at + 40, link);
    w.u32(at + 44, info);
    w.u64(at + 48, alignment);
    w.u64(at + 56, entsize);
  });
  return w.bytes;
}
