"""Where the bytes of a firmware go: its footprint by library, object file and symbol.

Reads the linked ELF (pyelftools) and the GNU ld map file the link writes beside it
(``-Map``), and charges every byte that Berkeley ``size`` counts to one library
group, one object file and, where there is one, one symbol::

    fp = footprint.inspect("build/v/add/executor_runner.elf")   # .map beside it
    print(footprint.format_report(fp, top=10))
    footprint.write_treemap(fp, "build/v/add/executor_runner.inspect.html")
    print(footprint.format_growth(fp, footprint.inspect(other_elf)))   # fp minus other

What is counted, and how it reconciles with ``size``
----------------------------------------------------
Exactly the allocated sections ``size`` (Berkeley format) adds up: ``text`` is every
allocated section that is code or read-only (here split into code, ``text``, and
read-only data, ``rodata``: ``.rodata``, ``.srodata``, the model); ``data`` is every
allocated writable section with contents (``.data``, ``.sdata``, ``.init_array``,
``.tdata``); ``bss`` is every allocated section without contents (``.bss``, ``.sbss``,
``.tbss``, ``.noinit``, ``.stack``). The map lists each output section's input sections
with address, size and file; the bytes between them (``*fill*`` lines and ``ALIGN``
gaps) go to the ``padding/alignment`` row, and room the linker script reserves with
``. += N`` (the stack, the TLS block at the end of ``.bss``) to ``linker-generated``.
Nothing is left out, so each column's sum equals ``size``'s figure; :func:`inspect`
checks that and raises if it does not hold.

Library groups
--------------
From the input file's path as the map gives it: ``libexecutorch_core.a`` and the
per-model ``runtime/...`` objects (the kernel registry) are ``ExecuTorch core``; each
``libkernels_<name>.a`` (its operators and the util objects archived with them) is
``kernels_<name>``; ``libregistration_<name>.a`` is ``registration_<name>``;
``libprim_ops.a`` is ``prim_ops``; ``libcorev_backend.a`` the backend; ``runner/``
and ``startup/`` objects (runner, PAL, crt0, board) the ``runner``; the object that
holds ``.rodata.model`` / defines ``model_pte`` the ``model``; then ``libstdc++``
(and libsupc++), ``libc`` (picolibc or newlib, also ``libc_nano``, ``libg``,
``libnosys``), ``libm``, ``libgcc`` (and crt*.o); ``app`` for ``app=DIR`` builds;
anything else is ``other``.

Link-time optimisation
----------------------
With ``-flto`` (the default Release build) the map names no object of ours: the code
of every LTO object is in a few ``/tmp/cc*.ltransN.ltrans.o`` input sections (one
``.text``, ``.rodata``, ``.bss``... per partition, because the link does not pass
``-ffunction-sections`` to the LTRANS step). They are split by the ELF's symbol
table (functions and objects with a size, local ones included) and each symbol is
charged to the LTO object that defined it. The LTO objects are read from disk (the
archives and objects the map's ``LOAD`` lines and archive-member lines name): a
GIMPLE object lists its public symbols in ``.gnu.lto_.symtab.*`` and has one section
``.gnu.lto_<assembler name>.<order>.<id>`` per function body and variable
initialiser, local (static, anonymous-namespace) ones included; a static without an
initialiser (``.bss``, ``.noinit``: the runner's memory pools, the kernel registry)
is found by name in the objects' declarations (``.gnu.lto_.decls``): a mangled name
of internal linkage in the first object declaring it, a plain C name only when a
single object declares it. Clone suffixes LTO adds (``.lto_priv.N``, ``.constprop.N``,
``.isra.N``, ``.part.N``, ``.cold``) are stripped before the lookup. A name defined
in several objects (inline functions and templates from headers, local statics of
inline functions) is charged to the first of them in link order, as the linker's
prevailing copy is; the same rule decides for COMDAT copies without LTO. Jump tables
(read-only words without a symbol that all point inside one function) go with the
function they jump into.

What cannot be attributed with LTO on (the ``LTO, not attributed`` row, about 2 %
of add.pte's image):

* string literals (``.rodata.str1.4``) and constant pools (``.srodata.cst4/8``):
  GCC gives them no symbol and LTO merges identical ones across objects, so they
  have no single owner;
* the static constructors LTO merges from every object into one function
  (``_sub_I_65535_0.0``: the kernel and backend registrations) and its
  ``.init_array`` entry;
* names no LTO object defines (compiler-made ones such as ``CSWTCH.N`` that LTO
  renumbers), and C statics without an initialiser whose plain name several
  objects declare (it could be any of theirs);
* all of it when the LTO objects are gone or rebuilt since the link.

And what is attributed, but not to where the source is: code inlined into a caller
is the caller's (``main`` in the runner holds much of the program and method loading
inlined from ExecuTorch core: the runner is ~5 KiB larger and the core ~9 KiB smaller
than with ``lto=0``), and identical functions folded together count once, for the
copy kept. Without LTO (``lto=0``, ``build_type=Debug``) every input section names
its object, so everything except padding and linker-reserved room is attributed
exactly, by section.

Top symbols come from the ELF symbol table (functions and objects with a size), each
charged to the object whose input section holds it.
"""

from __future__ import annotations

import bisect
import html
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib
from collections import defaultdict
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from etcorev import elfout

__all__ = [
    "Footprint",
    "FootprintError",
    "KINDS",
    "LtoIndex",
    "Piece",
    "Symbol",
    "classify",
    "demangler",
    "format_growth",
    "format_report",
    "growth",
    "inspect",
    "parse_map",
    "render_treemap",
    "squarify",
    "write_treemap",
]

KINDS = ("text", "rodata", "data", "bss")
# Berkeley `size` columns from ours: its text is our text + rodata.
SIZE_COLUMNS = {"text": ("text", "rodata"), "data": ("data",), "bss": ("bss",)}

CORE = "ExecuTorch core"
RUNNER = "runner"
MODEL = "model"
BACKEND = "backend"
PRIM_OPS = "prim_ops"
LIBSTDCXX = "libstdc++"
LIBC = "libc"
LIBM = "libm"
LIBGCC = "libgcc"
APP = "app"
OTHER = "other"
LTO_UNATTRIBUTED = "LTO, not attributed"
PADDING = "padding/alignment"
LINKER = "linker-generated"

MODEL_SECTION = ".rodata.model"
MODEL_SYMBOL = "model_pte"


class FootprintError(Exception):
    """The ELF or the map cannot be read; the message says which and why (one line)."""


class Piece(NamedTuple):
    """A run of bytes of one output section charged to one group and object."""

    section: str          # output section (.text, .rodata, ...)
    kind: str             # text, rodata, data or bss
    address: int
    size: int
    group: str            # library group
    obj: str              # object file (short name), or what the bytes are
    symbol: str = ""      # assembler name, for LTO pieces split by symbol


class Symbol(NamedTuple):
    name: str             # assembler (mangled) name; globals before locals
    address: int
    size: int
    section: str          # output section
    kind: str
    group: str
    obj: str
    aliases: Tuple[str, ...] = ()   # other names of the same bytes


# --------------------------------------------------------------------------
# The map file
# --------------------------------------------------------------------------


class MapEntry(NamedTuple):
    name: str             # input section name, "*fill*", or what a reservation is
    address: int
    size: int
    path: str             # input file as the map gives it ("" for fill)
    reserved: str = ""    # for fill after `. = (. + X)`: X


class MapFile(NamedTuple):
    link_order: List[str]                 # input files, archive members as "lib.a(m.o)"
    sections: Dict[str, List[MapEntry]]   # output section -> its input sections and fill


_HEX_PAIR = re.compile(r"^\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)(?:\s+(.*?))?\s*$")
_ASSIGN_RESERVE = re.compile(r"^\s+0x[0-9a-fA-F]+\s+\. = \(\. \+ (.+)\)\s*$")
_ASSIGN = re.compile(r"^\s+0x[0-9a-fA-F]+\s+\S.*=")
_MEMBER = re.compile(r"^(\S.*?\.a)\((.+?)\)(?:\s{2,}.*)?$")
_OUTPUT_HEAD = re.compile(r"^(\S+)(?:\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+))?\s*$")
_INPUT_HEAD = re.compile(r"^ (\S+)(?:\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)(?:\s+(.*?))?)?\s*$")


def parse_map(path) -> MapFile:
    """The parts of a GNU ld map this needs: link order and each output section's
    input sections, fill and reserved room."""
    try:
        with open(os.fspath(path), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise FootprintError("cannot read the map file %s: %s" % (path, e.strerror)) from None
    if not any(line.startswith("Linker script and memory map") for line in lines):
        raise FootprintError("%s is not a GNU ld map file (no 'Linker script and memory "
                             "map' part)" % path)

    members: Dict[str, List[str]] = defaultdict(list)   # archive -> members, pull order
    loads: List[str] = []
    sections: Dict[str, List[MapEntry]] = {}
    current: Optional[List[MapEntry]] = None
    part = "start"
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith("Archive member included"):
            part = "members"
            continue
        if line.startswith(("Discarded input sections", "Memory Configuration",
                            "Allocating common symbols")):
            part = "skip"
            continue
        if line.startswith("Linker script and memory map"):
            part = "memory map"
            continue
        if part == "members":
            match = _MEMBER.match(line)
            if match and match.group(2) not in members[match.group(1)]:
                members[match.group(1)].append(match.group(2))
            continue
        if part != "memory map" or not line.strip():
            continue
        if line.startswith("LOAD "):
            loads.append(line[5:].strip())
            continue
        if line.startswith(("OUTPUT(", "START GROUP", "END GROUP", "/DISCARD/")):
            current = None
            continue
        if not line[0].isspace():                          # an output section
            match = _OUTPUT_HEAD.match(line)
            if not match:
                current = None
                continue
            current = sections.setdefault(match.group(1), [])
            continue
        if current is None:
            continue
        reserve = _ASSIGN_RESERVE.match(line)
        if reserve:
            # `. += X` prints as this assignment, then a *fill* line with the room.
            if i < len(lines) and lines[i].startswith(" *fill*"):
                fill = _HEX_PAIR.match(lines[i][len(" *fill*"):])
                if fill:
                    current.append(MapEntry("*fill*", int(fill.group(1), 16),
                                            int(fill.group(2), 16), "", reserve.group(1)))
                    i += 1
            continue
        if line.startswith(" *fill*"):
            fill = _HEX_PAIR.match(line[len(" *fill*"):])
            if fill:
                current.append(MapEntry("*fill*", int(fill.group(1), 16),
                                        int(fill.group(2), 16), ""))
            continue
        if line.startswith(" *") or _ASSIGN.match(line):   # patterns, assignments
            continue
        match = _INPUT_HEAD.match(line)
        if not match:
            continue                                       # symbol lines, notes
        name, address, size, path_ = match.groups()
        if address is None:                                # long name: numbers below
            if i >= len(lines):
                break
            nxt = _HEX_PAIR.match(lines[i])
            if not nxt:
                continue
            i += 1
            address, size, path_ = nxt.groups()
        if path_ is None or not path_.strip():
            path_ = ""
        current.append(MapEntry(name, int(address, 16), int(size, 16), path_.strip()))

    link_order: List[str] = []
    for load in loads:
        if load.endswith(".a"):
            for member in members.get(load, ()):
                entry = "%s(%s)" % (load, member)
                if entry not in link_order:
                    link_order.append(entry)
        elif load not in link_order:
            link_order.append(load)
    return MapFile(link_order, sections)


# --------------------------------------------------------------------------
# LTO objects: which of them defined a name
# --------------------------------------------------------------------------

_LTO_SUFFIX = re.compile(r"\.(?:lto_priv|constprop|isra|part|cold|localalias)(?:\.\d+)?$")


def _base_name(name: str) -> str:
    """A symbol name without the clone suffixes optimisation adds."""
    while True:
        stripped = _LTO_SUFFIX.sub("", name)
        if stripped == name:
            return name
        name = stripped


def _archive_members(data: bytes) -> Iterable[Tuple[str, bytes]]:
    """(name, bytes) of each member of a System V / GNU ``ar`` archive."""
    if not data.startswith(b"!<arch>\n"):
        return
    pos, longnames = 8, b""
    while pos + 60 <= len(data):
        header = data[pos:pos + 60]
        name = header[:16].decode("latin-1").rstrip()
        try:
            size = int(header[48:58].decode("latin-1").strip())
        except ValueError:
            return
        body = data[pos + 60:pos + 60 + size]
        pos += 60 + size + (size & 1)
        if name == "//":
            longnames = body
            continue
        if name in ("/", "/SYM64/"):
            continue
        if name.startswith("/") and name[1:].isdigit():
            start = int(name[1:])
            end = longnames.find(b"/\n", start)
            name = longnames[start:end if end >= 0 else None].decode("latin-1")
        elif name.startswith("#1/"):                 # BSD long name: prefixed to the body
            n = int(name[3:])
            name, body = body[:n].rstrip(b"\0").decode("latin-1"), body[n:]
        else:
            name = name.rstrip("/")
        yield name, body


class _LtoObject(NamedTuple):
    entry: str            # the input file as the map names it
    names: set            # names it defines (see _read_lto_object)
    decls: List[bytes]    # its compressed .gnu.lto_.decls sections


def _read_lto_object(entry: str, data: bytes) -> Optional[_LtoObject]:
    """An LTO (GIMPLE) object's definitions, or None if it is not one: its public
    definitions (``.gnu.lto_.symtab``) and every function body and variable
    initialiser it carries (``.gnu.lto_<name>.<order>.<id>`` sections)."""
    try:
        elf = ELFFile(io.BytesIO(data))
        names, decls, lto = set(), [], False
        for section in elf.iter_sections():
            sname = section.name
            if not sname.startswith(".gnu.lto_"):
                continue
            lto = True
            if sname.startswith(".gnu.lto_.symtab."):
                names.update(_lto_symtab_definitions(section.data()))
            elif sname.startswith(".gnu.lto_.decls."):
                decls.append(section.data())
            elif not sname.startswith(".gnu.lto_."):
                names.add(sname[len(".gnu.lto_"):].rsplit(".", 2)[0])
        return _LtoObject(entry, names, decls) if lto else None
    except (ELFError, ValueError, struct.error):
        return None


def _lto_symtab_definitions(raw: bytes) -> Iterable[str]:
    """Defined names in a ``.gnu.lto_.symtab`` section: per symbol its name and comdat
    group (NUL-terminated), kind and visibility (a byte each), size (8 bytes) and
    slot (4 bytes). Kinds 0, 1, 4: definition, weak definition, common."""
    pos = 0
    while pos < len(raw):
        end = raw.find(b"\0", pos)
        if end < 0:
            return
        name = raw[pos:end]
        end2 = raw.find(b"\0", end + 1)
        if end2 < 0 or end2 + 15 > len(raw):
            return
        kind = raw[end2 + 1]
        pos = end2 + 15
        if kind in (0, 1, 4):
            yield name.decode("latin-1")


def _uleb128(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


# Mangled names of internal linkage: anonymous namespace, `static` (L), function-local
# statics (_ZZ). Only the defining translation unit (or, for a local static of an
# inline function, every one that emits the function) declares them.
_INTERNAL_MANGLING = re.compile(r"^_Z(?:Z|L|.*_GLOBAL__N_|.*L\d)")


class LtoIndex:
    """Which LTO object defined a name, in link order (first definition wins).

    Looks a name up as the ELF spells it, then without LTO's clone suffixes; a name
    that no symbol table or body section lists (a static without an initialiser,
    which goes to .bss) is looked up in the objects' declarations
    (``.gnu.lto_.decls``, zlib-compressed, strings with a ULEB128 length prefix).
    """

    def __init__(self, objects: Sequence[_LtoObject]):
        self.objects = list(objects)
        self.owner: Dict[str, str] = {}
        for obj in self.objects:
            for name in obj.names:
                self.owner.setdefault(name, obj.entry)
        self._decls: Dict[int, bytes] = {}

    @classmethod
    def from_link_order(cls, link_order: Sequence[str]) -> "LtoIndex":
        """The LTO objects among the input files; missing files and non-LTO objects
        contribute nothing."""
        objects = []
        archives: Dict[str, Dict[str, List[bytes]]] = {}
        for entry in link_order:
            archive, member = _split_member(entry)
            blobs: List[bytes] = []
            try:
                if archive:
                    if archive not in archives:
                        by_name: Dict[str, List[bytes]] = defaultdict(list)
                        with open(archive, "rb") as f:
                            for name, body in _archive_members(f.read()):
                                by_name[name].append(body)
                        archives[archive] = by_name
                    blobs = archives[archive].get(member, [])
                elif entry.endswith(".o") and os.path.isfile(entry):
                    with open(entry, "rb") as f:
                        blobs = [f.read()]
            except OSError:
                continue
            for blob in blobs:
                if b".gnu.lto_" in blob:
                    obj = _read_lto_object(entry, blob)
                    if obj:
                        objects.append(obj)
        return cls(objects)

    def __len__(self):
        return len(self.objects)

    def _declarations(self, i: int) -> bytes:
        if i not in self._decls:
            try:
                self._decls[i] = b"".join(zlib.decompress(d) for d in self.objects[i].decls)
            except zlib.error:                     # zstd, or not compressed
                self._decls[i] = b"".join(self.objects[i].decls)
        return self._decls[i]

    def lookup(self, name: str) -> Optional[str]:
        base = _base_name(name)
        for candidate in (name, base):
            if candidate in self.owner:
                return self.owner[candidate]
        needle = _uleb128(len(base)) + base.encode("latin-1")
        declaring = [obj.entry for i, obj in enumerate(self.objects)
                     if needle in self._declarations(i)]
        # A mangled name of internal linkage is declared only where it is defined (or,
        # a local static of an inline function, where that is emitted: the first
        # wins). A plain C name may also be some other declaration's: only one
        # object declaring it is an answer.
        if declaring and (_INTERNAL_MANGLING.match(base) or len(declaring) == 1):
            self.owner[base] = declaring[0]
            return declaring[0]
        return None


# --------------------------------------------------------------------------
# Library groups
# --------------------------------------------------------------------------


def _split_member(path: str) -> Tuple[str, str]:
    match = re.match(r"^(.*\.a)\((.+)\)$", path)
    return (match.group(1), match.group(2)) if match else ("", path)


def classify(path: str) -> str:
    """The library group of an input file as the map names it."""
    archive, member = _split_member(path)
    parts = path.replace("\\", "/").split("/")
    if archive:
        lib = os.path.basename(archive)
        stem = lib[3:-2] if lib.startswith("lib") else lib[:-2]
        if stem == "executorch_core":
            return CORE
        if stem.startswith(("kernels_", "registration_")):
            return stem
        if stem == "prim_ops":
            return PRIM_OPS
        if stem.endswith("_backend"):
            return BACKEND
        if stem in ("stdc++", "supc++", "stdc++_nano", "supc++_nano"):
            return LIBSTDCXX
        if stem in ("c", "c_nano", "g", "g_nano", "nosys", "semihost", "gloss", "dummyhost"):
            return LIBC
        if stem in ("m", "m_nano"):
            return LIBM
        if stem in ("gcc", "gcc_eh"):
            return LIBGCC
        if stem == "app":
            return APP
        return OTHER
    name = parts[-1]
    if re.match(r"^crt(begin|end|i|n)\w*\.o$", name):
        return LIBGCC
    if "runner" in parts[:-1] or "startup" in parts[:-1]:
        return RUNNER
    if any(part.startswith("app-") for part in parts[:-1]):
        return APP
    if "runtime" in parts[:-1] or ("et" in parts[:-1] and "core" in parts[:-1]):
        return CORE
    return OTHER


def _is_ltrans(path: str) -> bool:
    return path.endswith(".ltrans.o") or bool(re.search(r"\.ltrans\d*\.o$", path))


# --------------------------------------------------------------------------
# The footprint
# --------------------------------------------------------------------------


class Footprint(NamedTuple):
    elf: str
    map: str
    size: Dict[str, int]          # Berkeley size: text, data, bss
    pieces: List[Piece]
    symbols: List[Symbol]
    lto: bool                     # the map names LTRANS objects

    def by_group(self) -> Dict[str, Dict[str, int]]:
        return _sum_by(self.pieces, lambda p: p.group)

    def by_object(self) -> Dict[Tuple[str, str], Dict[str, int]]:
        return _sum_by(self.pieces, lambda p: (p.group, p.obj))

    def totals(self) -> Dict[str, int]:
        sums = dict.fromkeys(KINDS, 0)
        for p in self.pieces:
            sums[p.kind] += p.size
        return sums


def _sum_by(pieces, key):
    out: Dict = {}
    for p in pieces:
        row = out.setdefault(key(p), dict.fromkeys(KINDS, 0))
        row[p.kind] += p.size
    return out


def _kind(section: elfout.Section) -> str:
    berkeley = section.kind                      # text, data or bss, as `size` says
    if berkeley == "text" and not section.flags & elfout.SHF_EXECINSTR:
        return "rodata"
    return berkeley


def _short(path: str, base: str) -> str:
    """An input file's name for tables: archive(member), or the path below base."""
    archive, member = _split_member(path)
    if archive:
        return "%s(%s)" % (os.path.basename(archive), member)
    if base and path.startswith(base + os.sep):
        return os.path.relpath(path, base)
    return os.path.basename(path) or path


class _ElfSymbol(NamedTuple):
    name: str
    address: int
    size: int
    section: str          # output section
    is_global: bool
    is_function: bool


def _read_elf(path: str):
    """(sections, sized function/object symbols, file bytes) of an ELF."""
    try:
        sections = elfout.load_sections(path)
        with open(path, "rb") as f:
            data = f.read()
        elf = ELFFile(io.BytesIO(data))
        by_index = {s.index: s.name for s in sections}
        symbols = []
        table = elf.get_section_by_name(".symtab")
        for sym in table.iter_symbols() if table is not None else ():
            kind = sym["st_info"]["type"]
            shndx = sym["st_shndx"]
            if (kind not in ("STT_FUNC", "STT_OBJECT", "STT_TLS") or sym["st_size"] <= 0
                    or not isinstance(shndx, int) or shndx not in by_index):
                continue
            symbols.append(_ElfSymbol(sym.name, sym["st_value"], sym["st_size"],
                                      by_index[shndx], sym["st_info"]["bind"] != "STB_LOCAL",
                                      kind == "STT_FUNC"))
    except (ELFError, ValueError, struct.error, AttributeError) as e:
        raise FootprintError("%s is not an ELF file we can read (%s)" % (path, e)) from None
    return sections, symbols, data


def inspect(elf_path, map_path=None) -> Footprint:
    """The footprint of ``elf_path`` (its map: ``map_path``, else beside it as .map).

    Raises :class:`FootprintError` with a one-line message when a file is missing or
    not what it should be.
    """
    elf_path = os.fspath(elf_path)
    if map_path is None:
        map_path = os.path.splitext(elf_path)[0] + ".map"
    map_path = os.fspath(map_path)
    if not os.path.isfile(elf_path):
        raise FootprintError("%s: no such file" % elf_path)
    sections, symbols, data = _read_elf(elf_path)
    if not os.path.isfile(map_path):
        raise FootprintError("%s has no map file beside it (expected %s): the inspector "
                             "needs the map the link writes" % (elf_path, map_path))
    linkmap = parse_map(map_path)
    lto = any(_is_ltrans(e.path) for entries in linkmap.sections.values() for e in entries)
    splitter = _LtransSplitter(
        symbols, data, LtoIndex.from_link_order(linkmap.link_order) if lto else LtoIndex([]),
        linkmap, os.path.dirname(os.path.dirname(os.path.abspath(elf_path))))
    pieces: List[Piece] = []
    for s in sections:
        if s.alloc and s.size:
            pieces += splitter.section_pieces(s)
    pieces = splitter.resolve_jump_tables(pieces)
    footprint = Footprint(elf_path, map_path, _berkeley(sections), pieces,
                          _attribute_symbols(symbols, pieces), lto)
    _check_totals(footprint)
    return footprint


_JUMP_TABLE = "jump table"
_MIN_JUMP_TABLE = 3        # words in a row pointing into one function


class _LtransSplitter:
    """Turns each output section into pieces: input sections from the map, padding
    and reserved room between them, and LTRANS sections split by symbol."""

    def __init__(self, symbols, data, index, linkmap, base):
        self.data, self.index, self.linkmap, self.base = data, index, linkmap, base
        self.by_section: Dict[str, List[tuple]] = defaultdict(list)
        functions = []
        for sym in symbols:
            # Larger first at one address, globals before locals: aliases collapse.
            self.by_section[sym.section].append((sym.address, -sym.size, not sym.is_global,
                                                 sym.name))
            if sym.is_function:
                functions.append((sym.address, sym.address + sym.size, sym.name))
        for entries in self.by_section.values():
            entries.sort()
        functions.sort()
        self.functions = functions
        self.function_starts = [f[0] for f in functions]
        self.model_objects = {e.path for entries in linkmap.sections.values()
                              for e in entries
                              if e.name == MODEL_SECTION or e.name.startswith(MODEL_SECTION + ".")}

    def group_of(self, path: str) -> str:
        return MODEL if path in self.model_objects else classify(path)

    def section_pieces(self, s: elfout.Section) -> List[Piece]:
        kind = _kind(s)
        start, end = s.vma, s.vma + s.size
        if s.name not in self.linkmap.sections:
            return [Piece(s.name, kind, start, s.size, OTHER, "%s (not in the map)" % s.name)]
        pieces: List[Piece] = []
        cursor = start

        def fill(upto, group=PADDING, what=PADDING):
            nonlocal cursor
            if upto > cursor:
                pieces.append(Piece(s.name, kind, cursor, upto - cursor, group, what))
                cursor = upto

        entries = sorted(self.linkmap.sections[s.name], key=lambda e: (e.address, -e.size))
        for entry in entries:
            lo, hi = max(entry.address, cursor), min(entry.address + entry.size, end)
            if hi <= lo:
                continue
            fill(lo)
            if entry.name == "*fill*" and entry.reserved:
                fill(hi, LINKER, _reserved_name(s.name, entry.reserved))
            elif entry.name == "*fill*":
                fill(hi)
            elif not entry.path:
                fill(hi, LINKER, "%s (made by the linker)" % entry.name)
            elif _is_ltrans(entry.path):
                pieces += self._split(s, kind, lo, hi)
                cursor = hi
            else:
                pieces.append(Piece(s.name, kind, lo, hi - lo, self.group_of(entry.path),
                                    _short(entry.path, self.base)))
                cursor = hi
        fill(end)
        return pieces

    def _split(self, s, kind, lo, hi) -> List[Piece]:
        """An LTRANS input section [lo, hi): each sized symbol in it goes to the LTO
        object that defined it; what no symbol covers is looked at for jump tables,
        else stays unattributed."""
        pieces: List[Piece] = []
        symbols = self.by_section.get(s.name, [])
        cursor = lo
        i = bisect.bisect_left(symbols, (lo,))
        while i < len(symbols) and symbols[i][0] < hi:
            address, neg_size, _, name = symbols[i]
            i += 1
            start, stop = max(address, cursor), min(address - neg_size, hi)
            if stop <= start:
                continue                              # an alias of bytes already charged
            if start > cursor:
                pieces += self._unnamed(s, kind, cursor, start)
            pieces.append(self._symbol_piece(s, kind, start, stop, name))
            cursor = stop
        if hi > cursor:
            pieces += self._unnamed(s, kind, cursor, hi)
        return pieces

    def _symbol_piece(self, s, kind, start, stop, name) -> Piece:
        if name == MODEL_SYMBOL:
            return Piece(s.name, kind, start, stop - start, MODEL, "model_pte", name)
        owner = self.index.lookup(name)
        if owner is not None:
            return Piece(s.name, kind, start, stop - start, self.group_of(owner),
                         _short(owner, self.base), name)
        base = _base_name(name)
        what = ("static constructors, merged by LTO"
                if base.startswith(("_GLOBAL__sub_I", "_sub_I_", "_GLOBAL__sub_D", "_sub_D_"))
                else "LTO, symbol of no LTO object")
        return Piece(s.name, kind, start, stop - start, LTO_UNATTRIBUTED, what, name)

    def _unnamed(self, s, kind, lo, hi) -> List[Piece]:
        """Bytes of an LTRANS section without a symbol. Read-only data may hold jump
        tables: runs of words that each point inside one function (not at its start)
        belong to that function; the rest is literals, constants and alignment."""
        what = {"text": "LTO, code without a symbol",
                "rodata": "LTO, literals and constants"}.get(kind, "LTO, no symbol")
        if kind != "rodata" or s.nobits:
            return [Piece(s.name, kind, lo, hi - lo, LTO_UNATTRIBUTED, what)]
        pieces: List[Piece] = []
        cursor = lo
        address = (lo + 3) & ~3
        while address + 4 <= hi:
            target = self._function_inside(self._word(s, address))
            run = address
            while target is not None and run + 4 <= hi and \
                    self._function_inside(self._word(s, run)) == target:
                run += 4
            if target is not None and (run - address) // 4 >= _MIN_JUMP_TABLE:
                if address > cursor:
                    pieces.append(Piece(s.name, kind, cursor, address - cursor,
                                        LTO_UNATTRIBUTED, what))
                # The owner is the function's: resolved once every section is split.
                pieces.append(Piece(s.name, kind, address, run - address, _JUMP_TABLE,
                                    "", "%s:%x" % (target[2], target[0])))
                cursor = address = run
            else:
                address += 4
        if hi > cursor:
            pieces.append(Piece(s.name, kind, cursor, hi - cursor, LTO_UNATTRIBUTED, what))
        return pieces

    def _word(self, s, address) -> int:
        offset = s.offset + address - s.vma
        return struct.unpack_from("<I", self.data, offset)[0]

    def _function_inside(self, value):
        i = bisect.bisect_right(self.function_starts, value) - 1
        if i >= 0:
            start, end, name = self.functions[i]
            if start < value < end:
                return self.functions[i]
        return None

    @staticmethod
    def resolve_jump_tables(pieces: List[Piece]) -> List[Piece]:
        """A jump table goes where the function it jumps into went."""
        if not any(p.group == _JUMP_TABLE for p in pieces):
            return pieces
        ordered = sorted((p for p in pieces if p.group != _JUMP_TABLE and p.kind == "text"),
                         key=lambda p: p.address)
        starts = [p.address for p in ordered]
        out = []
        for p in pieces:
            if p.group == _JUMP_TABLE:
                name, address = p.symbol.rsplit(":", 1)
                i = bisect.bisect_right(starts, int(address, 16)) - 1
                holder = ordered[i] if i >= 0 else None
                if holder and holder.group != LTO_UNATTRIBUTED:
                    p = p._replace(group=holder.group, obj=holder.obj,
                                   symbol="jump table of " + name)
                else:
                    p = p._replace(group=LTO_UNATTRIBUTED, obj="LTO, literals and constants",
                                   symbol="")
            out.append(p)
        return out


def _reserved_name(section: str, expression: str) -> str:
    what = "stack" if expression == "__stack_size" else (
        "TLS block" if "tls" in expression.lower() else "reserved")
    return "%s (%s: . += %s)" % (what, section, expression)


def _attribute_symbols(symbols: Sequence[_ElfSymbol], pieces: Sequence[Piece]) -> List[Symbol]:
    """Every sized run of bytes with a name (names of the same address and size are
    one symbol with aliases), charged to the piece that holds its first byte."""
    by_section: Dict[str, List[Piece]] = defaultdict(list)
    for p in pieces:
        by_section[p.section].append(p)
    starts = {}
    for name, plist in by_section.items():
        plist.sort(key=lambda p: p.address)
        starts[name] = [p.address for p in plist]
    names: Dict[tuple, List[str]] = defaultdict(list)
    for sym in sorted(symbols, key=lambda s: (not s.is_global, s.name)):
        if sym.section in by_section and sym.name not in names[(sym.section, sym.address,
                                                                sym.size)]:
            names[(sym.section, sym.address, sym.size)].append(sym.name)
    out = []
    for (section, address, size), aliases in names.items():
        i = bisect.bisect_right(starts[section], address) - 1
        if i >= 0:
            p = by_section[section][i]
            out.append(Symbol(aliases[0], address, size, section, p.kind, p.group, p.obj,
                              tuple(aliases[1:])))
    return out


def _berkeley(sections) -> Dict[str, int]:
    totals = {"text": 0, "data": 0, "bss": 0}
    for s in sections:
        if s.alloc and s.size:
            totals[s.kind] += s.size
    return totals


def _check_totals(fp: Footprint) -> None:
    sums = fp.totals()
    for column, kinds in SIZE_COLUMNS.items():
        if sum(sums[k] for k in kinds) != fp.size[column]:
            raise FootprintError("the footprint of %s does not add up (a bug in the "
                                 "inspector): %s %d bytes, size says %d"
                                 % (fp.elf, column, sum(sums[k] for k in kinds),
                                    fp.size[column]))


# --------------------------------------------------------------------------
# Names for people
# --------------------------------------------------------------------------


def demangler(prefix: str = ""):
    """A function demangling a list of names with the toolchain's c++filt (one
    process for the whole list); names stay as they are without one."""
    tool = None
    for candidate in (prefix + "c++filt" if prefix else None, "c++filt"):
        if candidate and shutil.which(candidate):
            tool = shutil.which(candidate)
            break

    def demangle(names: Sequence[str]) -> Dict[str, str]:
        names = list(dict.fromkeys(names))
        if not tool or not names:
            return {n: n for n in names}
        proc = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True,
                              text=True)
        out = proc.stdout.split("\n")
        if proc.returncode or len(out) < len(names):
            return {n: n for n in names}
        return dict(zip(names, out))

    return demangle


# --------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------

# Rows in this order when sizes tie; the bookkeeping rows go last.
_LAST = (LTO_UNATTRIBUTED, OTHER, PADDING, LINKER)


def _total(row) -> int:
    return sum(row[k] for k in KINDS)


def _rows_sorted(table: Dict) -> List:
    def key(item):
        name, row = item
        group = name[0] if isinstance(name, tuple) else name
        return (group in _LAST, _LAST.index(group) if group in _LAST else 0, -_total(row),
                str(name))
    return sorted(table.items(), key=key)


def _table(header: Sequence[str], rows: Sequence[Sequence], align: str) -> List[str]:
    """Plain-text columns: align has one letter per column, l(eft) or r(ight)."""
    widths = [max(len(str(r[i])) for r in [header] + list(rows)) for i in range(len(header))]
    lines = []
    for r in [header] + list(rows):
        cells = [str(cell).rjust(widths[i]) if align[i] == "r" else str(cell).ljust(widths[i])
                 for i, cell in enumerate(r)]
        lines.append("  ".join(cells).rstrip())
    return lines


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def format_report(fp: Footprint, top: int = 10, demangle=None) -> str:
    """The tables: by library, the ``top`` largest objects and symbols."""
    demangle = demangle or (lambda names: {n: n for n in names})
    t = fp.totals()
    lines = ["%s: text %d (code %d + read-only data %d), data %d, bss %d bytes "
             "(as `size` counts them)%s"
             % (os.path.basename(fp.elf), fp.size["text"], t["text"], t["rodata"],
                fp.size["data"], fp.size["bss"], "; LTO" if fp.lto else ""), ""]

    header = ("library",) + KINDS + ("total",)
    rows = [(name,) + tuple(row[k] for k in KINDS) + (_total(row),)
            for name, row in _rows_sorted(fp.by_group())]
    rows.append(("total",) + tuple(t[k] for k in KINDS) + (_total(t),))
    lines += _table(header, rows, "lrrrrr")

    lines += ["", "Top %d objects:" % top]
    objects = [(key, row) for key, row in _rows_sorted(fp.by_object())
               if key[0] not in (PADDING, LINKER, LTO_UNATTRIBUTED)]
    objects.sort(key=lambda item: -_total(item[1]))
    rows = [(_truncate(obj, 56), group) + tuple(row[k] for k in KINDS) + (_total(row),)
            for (group, obj), row in objects[:top]]
    lines += _table(("object", "library") + KINDS + ("total",), rows, "llrrrrr")

    lines += ["", "Top %d symbols:" % top]
    symbols = sorted(fp.symbols, key=lambda s: (-s.size, s.name))[:top]
    names = demangle([n for s in symbols for n in (s.name,) + s.aliases])
    rows = []
    for s in symbols:
        shown = " = ".join(dict.fromkeys(names.get(n, n) for n in (s.name,) + s.aliases))
        rows.append((s.size, s.kind, s.group, _truncate(shown, 72)))
    lines += _table(("bytes", "kind", "library", "symbol"), rows, "rlll")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Growth between two builds
# --------------------------------------------------------------------------


def growth(new: Footprint, old: Footprint) -> Dict[str, Dict[str, int]]:
    """Per library group and kind, new minus old bytes (groups in either)."""
    a, b = new.by_group(), old.by_group()
    out = {}
    for group in set(a) | set(b):
        zero = dict.fromkeys(KINDS, 0)
        out[group] = {k: a.get(group, zero)[k] - b.get(group, zero)[k] for k in KINDS}
    return out


def format_growth(new: Footprint, old: Footprint) -> str:
    deltas = growth(new, old)
    shown = os.path.abspath(old.elf)
    if shown.startswith(os.getcwd() + os.sep):
        shown = os.path.relpath(shown)
    lines = ["Growth against %s (bytes, this build minus that one):" % shown]
    header = ("library",) + KINDS + ("total",)

    def signed(n):
        return "%+d" % n if n else "0"

    rows = []
    for name, row in _rows_sorted(deltas):
        if any(row.values()):
            rows.append((name,) + tuple(signed(row[k]) for k in KINDS)
                        + (signed(_total(row)),))
    tn, to = new.totals(), old.totals()
    total = {k: tn[k] - to[k] for k in KINDS}
    rows.append(("total",) + tuple(signed(total[k]) for k in KINDS) + (signed(_total(total)),))
    lines += _table(header, rows, "lrrrrr")
    lines.append("size: text %s, data %s, bss %s"
                 % tuple(signed(new.size[c] - old.size[c]) for c in ("text", "data", "bss")))
    return "\n".join(lines)


# --------------------------------------------------------------------------
# The picture: a squarified treemap, self-contained HTML with inline SVG
# --------------------------------------------------------------------------


def squarify(values: Sequence[float], x: float, y: float, w: float, h: float):
    """Rectangles (x, y, w, h) for positive ``values`` sorted largest first, filling
    the box with aspect ratios near 1 (Bruls, Huizing, van Wijk: squarified treemaps)."""
    total = float(sum(values))
    if total <= 0 or w <= 0 or h <= 0:
        return [(x, y, 0.0, 0.0) for _ in values]
    areas = [v * w * h / total for v in values]
    rects: List[Tuple[float, float, float, float]] = []

    def worst(row, side):
        s = sum(row)
        return max(max(side * side * a / (s * s), (s * s) / (side * side * a)) for a in row)

    def lay(row, x, y, w, h):
        s = sum(row)
        if w >= h:                                  # a column at the left
            width = s / h if h else 0
            yy = y
            for a in row:
                hh = a / width if width else 0
                rects.append((x, yy, width, hh))
                yy += hh
            return x + width, y, w - width, h
        height = s / w if w else 0                  # a row at the top
        xx = x
        for a in row:
            ww = a / height if height else 0
            rects.append((xx, y, ww, height))
            xx += ww
        return x, y + height, w, h - height

    row: List[float] = []
    for a in areas:
        side = min(w, h)
        if not row or worst(row + [a], side) <= worst(row, side):
            row.append(a)
            continue
        x, y, w, h = lay(row, x, y, w, h)
        row = [a]
    if row:
        lay(row, x, y, w, h)
    return rects


_PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
            "#ff9da7", "#9c755f", "#86bcb6", "#8cd17d", "#d4a6c8", "#a0cbe8", "#ffbe7d"]
_GREY = {PADDING: "#c8c8c8", LINKER: "#bab0ac", LTO_UNATTRIBUTED: "#dddddd", OTHER: "#cfcfcf"}


def _colours(groups: Iterable[str]) -> Dict[str, str]:
    out, i = {}, 0
    for g in groups:
        if g in _GREY:
            out[g] = _GREY[g]
        else:
            out[g] = _PALETTE[i % len(_PALETTE)]
            i += 1
    return out


def _fmt(n: int) -> str:
    return "{:,}".format(n)


def _label(obj: str) -> str:
    """An object's name inside its library's rectangle: the member of an archive."""
    archive, member = _split_member(obj)
    return member if archive else obj


def _svg_treemap(fp: Footprint, kinds: Sequence[str], colours, width, height) -> str:
    objects: Dict[str, Dict[str, int]] = defaultdict(dict)
    rows = fp.by_object()
    for (group, obj), row in rows.items():
        size = sum(row[k] for k in kinds)
        if size > 0:
            objects[group][obj] = size
    groups = sorted(objects, key=lambda g: -sum(objects[g].values()))
    sizes = [sum(objects[g].values()) for g in groups]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'viewBox="0 0 %d %d" font-family="sans-serif">' % (width, height, width, height)]
    for group, size, (x, y, w, h) in zip(groups, sizes, squarify(sizes, 0, 0, width, height)):
        out.append('<g><title>%s: %s bytes</title>' % (html.escape(group), _fmt(size)))
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" '
                   'stroke="#fff" stroke-width="2"/>' % (x, y, w, h, colours[group]))
        head = 16 if h > 40 and w > 60 else 0
        items = sorted(objects[group].items(), key=lambda item: -item[1])
        inner = squarify([v for _, v in items], x + 2, y + head + 1, max(w - 4, 0),
                         max(h - head - 3, 0))
        for (obj, value), (ox, oy, ow, oh) in zip(items, inner):
            row = rows[(group, obj)]
            detail = ", ".join("%s %s" % (k, _fmt(row[k])) for k in kinds if row[k])
            out.append('<g><title>%s\n%s: %s bytes (%s)</title><rect x="%.1f" y="%.1f" '
                       'width="%.1f" height="%.1f" fill="%s" fill-opacity="0.55" '
                       'stroke="#fff" stroke-width="0.5"/>'
                       % (html.escape(obj), html.escape(group), _fmt(value), detail,
                          ox, oy, ow, oh, colours[group]))
            if ow > 50 and oh > 24:
                label = _truncate(_label(obj), max(int(ow / 6.2), 4))
                out.append('<text x="%.1f" y="%.1f" font-size="10">%s</text>'
                           '<text x="%.1f" y="%.1f" font-size="9" fill="#333">%s</text>'
                           % (ox + 3, oy + 11, html.escape(label), ox + 3, oy + 21,
                              _fmt(value)))
            out.append('</g>')
        if head:
            label = _truncate("%s  %s" % (group, _fmt(size)), max(int(w / 7), 4))
            out.append('<text x="%.1f" y="%.1f" font-size="12" font-weight="bold">%s</text>'
                       % (x + 4, y + 13, html.escape(label)))
        out.append('</g>')
    out.append('</svg>')
    return "\n".join(out)


def render_treemap(fp: Footprint, width: int = 1100, height: int = 560) -> str:
    """Self-contained HTML (inline SVG and CSS, no scripts): a treemap of code and
    read-only data and one of data and bss, by library and object, and the table by
    library."""
    t = fp.totals()
    groups = [g for g, _ in _rows_sorted(fp.by_group())]
    colours = _colours(groups)
    name = os.path.basename(fp.elf)
    title = ("%s: text %s bytes (code %s + read-only data %s), data %s, bss %s"
             % (name, _fmt(fp.size["text"]), _fmt(t["text"]), _fmt(t["rodata"]),
                _fmt(fp.size["data"]), _fmt(fp.size["bss"])))
    rows = []
    for group, row in _rows_sorted(fp.by_group()):
        rows.append("<tr><td><span class=sw style='background:%s'></span>%s</td>%s"
                    "<td>%s</td></tr>"
                    % (colours[group], html.escape(group),
                       "".join("<td>%s</td>" % _fmt(row[k]) for k in KINDS),
                       _fmt(_total(row))))
    rows.append("<tr class=total><td>total</td>%s<td>%s</td></tr>"
                % ("".join("<td>%s</td>" % _fmt(t[k]) for k in KINDS), _fmt(_total(t))))
    parts = [
        "<!DOCTYPE html>",
        "<html lang=en><head><meta charset=utf-8><title>%s</title>" % html.escape(title),
        "<style>body{font-family:sans-serif;margin:16px;color:#222}"
        "h1{font-size:18px}h2{font-size:15px;margin:18px 0 6px}"
        "table{border-collapse:collapse;font-size:13px}"
        "td,th{padding:2px 10px;text-align:right}td:first-child,th:first-child{text-align:left}"
        "tr.total td{font-weight:bold;border-top:1px solid #888}"
        ".sw{display:inline-block;width:10px;height:10px;margin-right:6px}"
        "svg text{pointer-events:none}</style></head><body>",
        "<h1>%s</h1>" % html.escape(title),
        "<p>Bytes as <code>size</code> counts them, by library and object file%s. "
        "Hover over a rectangle for its name and size.</p>"
        % ("; LTO: code the LTRANS objects hold is charged to the LTO object that "
           "defined its symbol" if fp.lto else ""),
        "<h2>Code and read-only data (text + rodata: %s bytes)</h2>"
        % _fmt(t["text"] + t["rodata"]),
        _svg_treemap(fp, ("text", "rodata"), colours, width, height),
        "<h2>Data and bss (data + bss: %s bytes)</h2>" % _fmt(t["data"] + t["bss"]),
        _svg_treemap(fp, ("data", "bss"), colours, width, height * 2 // 3),
        "<h2>By library</h2>",
        "<table><tr><th>library</th>%s<th>total</th></tr>"
        % "".join("<th>%s</th>" % k for k in KINDS),
        "\n".join(rows),
        "</table></body></html>",
        "",
    ]
    return "\n".join(parts)


def write_treemap(fp: Footprint, path) -> None:
    with open(os.fspath(path), "w", encoding="utf-8", newline="\n") as f:
        f.write(render_treemap(fp))


# --------------------------------------------------------------------------
# Command line: PYTHONPATH=site_scons python -m etcorev.footprint ELF [--against OTHER]
# --------------------------------------------------------------------------


def main(argv=None) -> int:
    import argparse
    parser = argparse.ArgumentParser(description="Where the bytes of a firmware go.")
    parser.add_argument("elf")
    parser.add_argument("--map", help="the link's map file (default: beside the ELF)")
    parser.add_argument("--against", metavar="OTHER_ELF",
                        help="print the growth per library from this build (its .map beside it)")
    parser.add_argument("--html", help="write the treemap picture here")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--toolchain", default="riscv64-unknown-elf-",
                        help="prefix of the c++filt used to demangle")
    args = parser.parse_args(argv)
    try:
        fp = inspect(args.elf, args.map)
        print(format_report(fp, args.top, demangler(args.toolchain)))
        if args.against:
            print()
            print(format_growth(fp, inspect(args.against)))
        if args.html:
            write_treemap(fp, args.html)
    except FootprintError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
