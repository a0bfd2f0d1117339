"""Where the bytes of a firmware go: its footprint by library, object file and symbol.

Reads the linked ELF (pyelftools) and the GNU ld map file the link writes beside it
(``-Map``), and charges every byte that Berkeley ``size`` counts to one library
group, one object file and, where there is one, one symbol::

    fp = footprint.inspect("build/v/add/executor_runner.elf")   # .map beside it
    print(footprint_report.format_report(fp, top=10))
    footprint_report.write_treemap(fp, "build/v/add/executor_runner.inspect.html")
    print(footprint_report.format_growth(fp, footprint.inspect(other_elf)))  # fp minus other

This module classifies and attributes (:func:`inspect`, :class:`Footprint`); the map
is read by :mod:`etcorev.image.ldmap`, the LTO objects by :mod:`etcorev.image.lto_objects`, and
the tables, the growth and the treemap are made by :mod:`etcorev.image.footprint_report`
(also the command line: ``python -m etcorev.image.footprint ELF``).

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
``libkernels_<name>.a`` (its operators) is ``kernels_<name>``; ``libkernel_helpers.a``
(the util and pattern objects the kernels of every library share) is ``kernel helpers``;
``libcmsis_nn.a`` (what the Cortex-M kernels call) is ``CMSIS-NN``; ``libregistration_<name>.a`` is ``registration_<name>``;
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
import io
import os
import re
import struct
from collections import defaultdict
from typing import Dict, List, NamedTuple, Sequence, Tuple

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from etcorev.image import MODEL_SECTION, elfout
from etcorev.image.ldmap import MapFileError, parse_map, split_member
from etcorev.image.lto_objects import LtoIndex, base_name

__all__ = [
    "Footprint",
    "FootprintError",
    "KINDS",
    "Piece",
    "Symbol",
    "classify",
    "inspect",
]

KINDS = ("text", "rodata", "data", "bss")
# Berkeley `size` columns from ours: its text is our text + rodata.
SIZE_COLUMNS = {"text": ("text", "rodata"), "data": ("data",), "bss": ("bss",)}

CORE = "ExecuTorch core"
RUNNER = "runner"
MODEL = "model"
BACKEND = "backend"
PRIM_OPS = "prim_ops"
KERNEL_HELPERS = "kernel helpers"
CMSIS_NN = "CMSIS-NN"
LIBSTDCXX = "libstdc++"
LIBC = "libc"
LIBM = "libm"
LIBGCC = "libgcc"
APP = "app"
OTHER = "other"
LTO_UNATTRIBUTED = "LTO, not attributed"
PADDING = "padding/alignment"
LINKER = "linker-generated"

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
# Library groups
# --------------------------------------------------------------------------


def classify(path: str) -> str:
    """The library group of an input file as the map names it."""
    archive, member = split_member(path)
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
        if stem == "kernel_helpers":
            return KERNEL_HELPERS
        if stem == "cmsis_nn":
            return CMSIS_NN
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
    # The kernel registry (operator_registry.o) is compiled per selection in registry/.
    if "runtime" in parts[:-1] or "registry" in parts[:-1] or (
            "et" in parts[:-1] and "core" in parts[:-1]):
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
    archive, member = split_member(path)
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


def inspect(elf_path, map_path=None, model_section=MODEL_SECTION) -> Footprint:
    """The footprint of ``elf_path`` (its map: ``map_path``, else beside it as .map);
    the input sections named ``model_section`` (the model_embed tool's $MODEL_SECTION)
    are the model.

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
    try:
        linkmap = parse_map(map_path)
    except MapFileError as e:
        raise FootprintError(str(e)) from None
    lto = any(_is_ltrans(e.path) for entries in linkmap.sections.values() for e in entries)
    splitter = _LtransSplitter(
        symbols, data, LtoIndex.from_link_order(linkmap.link_order) if lto else LtoIndex([]),
        linkmap, os.path.dirname(os.path.dirname(os.path.abspath(elf_path))), model_section)
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

    def __init__(self, symbols, data, index, linkmap, base, model_section):
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
                              if e.name == model_section
                              or e.name.startswith(model_section + ".")}

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
        base = base_name(name)
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
