/**
 * Reader for the ELF64 relocatable objects clang emits for the BPF target: just the sections,
 * symbols and REL relocations a static link needs. Written by hand because no maintained npm
 * package reads BPF relocations, and the format subset is small.
 */

export const SHT_SYMTAB = 2;
export const SHT_REL = 9;
export const SHN_UNDEF = 0;
export const SHN_ABS = 0xfff1;
export const STT_SECTION = 3;
export const STB_LOCAL = 0;

export interface ObjectSection {
  index: number;
  name: string;
  type: number;
  flags: bigint;
  offset: number;
  size: number;
  addralign: number;
  link: number;
  info: number;
  bytes: Uint8Array;
}

export interface ObjectSymbol {
  name: string;
  type: number;
  bind: number;
  shndx: number;
  value: number;
  size: number;
}

export interface ObjectRelocation {
  offset: number;
  type: number;
  symbol: number;
}

export interface ElfObject {
  name: string;
  sections: ObjectSection[];
  symbols: ObjectSymbol[];
  /** Relocations keyed by the index of the section they patch. */
  relocations: Map<number, ObjectRelocation[]>;
}

function cString(bytes: Uint8Array, start: number): string {
  let end = start;
  while (end < bytes.length && bytes[end] !== 0) end++;
  return new TextDecoder().decode(bytes.subarray(start, end));
}

function toSafeNumber(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${what} too large: ${value}`);
  return Number(value);
}

/** Parses a little-endian ELF64 relocatable object for EM_BPF. */
export function readElfObject(name: string, file: Uint8Array): ElfObject {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const magic = file.subarray(0, 4);
  if (magic[0] !== 0x7f || magic[1] !== 0x45 || magic[2] !== 0x4c || magic[3] !== 0x46) {
    throw new Error(`${name}: not an ELF file`);
  }
  if (file[4] !== 2 || file[5] !== 1) throw new Error(`${name}: not ELF64 little-endian`);
  if (view.getUint16(16, true) !== 1) throw new Error(`${name}: not a relocatable object`);
  if (view.getUint16(18, true) !== 247) throw new Error(`${name}: not an EM_BPF object`);
  const shoff = toSafeNumber(view.getBigUint64(40, true), 'e_shoff');
  const shentsize = view.getUint16(58, true);
  const shnum = view.getUint16(60, true);
  const shstrndx = view.getUint16(62, true);

  const raw = [];
  for (let i = 0; i < shnum; i++) {
    const o = shoff + i * shentsize;
    raw.push({
      nameOffset: view.getUint32(o, true),
      type: view.getUint32(o + 4, true),
      flags: view.getBigUint64(o + 8, true),
      offset: toSafeNumber(view.getBigUint64(o + 24, true), 'sh_offset'),
      size: toSafeNumber(view.getBigUint64(o + 32, true), 'sh_size'),
      link: view.getUint32(o + 40, true),
      info: view.getUint32(o + 44, true),
      addralign: toSafeNumber(view.getBigUint64(o + 48, true), 'sh_addralign'),
    });
  }
  const shstr = raw[shstrndx];
  if (!shstr) throw new Error(`${name}: missing section name table`);
  const shstrBytes = file.subarray(shstr.offset, shstr.offset + shstr.size);
  const sections: ObjectSection[] = raw.map((s, index) => ({
    index,
    name: cString(shstrBytes, s.nameOffset),
    type: s.type,
    flags: s.flags,
    offset: s.offset,
    size: s.size,
    addralign: Math.max(1, s.addralign),
    link: s.link,
    info: s.info,
    // NOBITS sections (type 8) occupy no file bytes.
    bytes: s.type === 8 ? new Uint8Array(s.size) : file.slice(s.offset, s.offset + s.size),
  }));

  const symtab = sections.find((s) => s.type === SHT_SYMTAB);
  const symbols: ObjectSymbol[] = [];
  if (symtab) {
    const strtab = sections[symtab.link];
    if (!strtab) throw new Error(`${name}: symbol table without string table`);
    for (let o = 0; o + 24 <= symtab.size; o += 24) {
      const at = symtab.offset + o;
      const info = file[at + 4]!;
      symbols.push({
        name: cString(strtab.bytes, view.getUint32(at, true)),
        type: info & 0xf,
        bind: info >> 4,
        shndx: view.getUint16(at + 6, true),
        value: toSafeNumber(view.getBigUint64(at + 8, true), 'st_value'),
        size: toSafeNumber(view.getBigUint64(at + 16, true), 'st_size'),
      });
    }
  }

  const relocations = new Map<number, ObjectRelocation[]>();
  for (const rel of sections.filter((s) => s.type === SHT_REL)) {
    const list: ObjectRelocation[] = [];
    for (let o = 0; o + 16 <= rel.size; o += 16) {
      const at = rel.offset + o;
      const info = view.getBigUint64(at + 8, true);
      list.push({
        offset: toSafeNumber(view.getBigUint64(at, true), 'r_offset'),
        type: Number(info & 0xffffffffn),
        symbol: Number(info >> 32n),
      });
    }
    relocations.set(rel.info, list);
  }
  return { name, sections, symbols, relocations };
}
