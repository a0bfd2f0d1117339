"""Which LTO object defined a name: the GIMPLE objects a link read, from disk.

With ``-flto`` the map names no object of ours for the code, only LTRANS objects;
:class:`LtoIndex` answers which LTO object (an ``.o`` or a member of an ``ar``
archive, in link order) defined a symbol of the linked ELF, so that
:mod:`etcorev.image.footprint` can charge it there.  It reads each object's public
definitions (``.gnu.lto_.symtab.*``), its function bodies and variable initialisers
(``.gnu.lto_<name>.<order>.<id>`` sections) and, for statics without an initialiser,
its declarations (``.gnu.lto_.decls``).  :func:`base_name` strips the clone suffixes
LTO adds to a name.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import struct
import zlib
from collections import defaultdict
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from etcorev.image.ldmap import split_member

__all__ = ["LtoIndex", "base_name"]


_LTO_SUFFIX = re.compile(r"\.(?:lto_priv|constprop|isra|part|cold|localalias)(?:\.\d+)?$")


def base_name(name: str) -> str:
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


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _decompress(data: bytes) -> bytes:
    """An LTO section's bytes: GCC compresses them with zlib or, when it was built with
    libzstd (CORE-V GCC from set-up is), zstd, which Python's standard library lacks:
    the zstd command does it. What cannot be decompressed is searched as it is."""
    if data[:4] == ZSTD_MAGIC:
        try:
            return subprocess.run(["zstd", "-d", "-c", "-q"], input=data, capture_output=True,
                                  check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            return data
    try:
        return zlib.decompress(data)
    except zlib.error:
        return data


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
            archive, member = split_member(entry)
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
            self._decls[i] = b"".join(_decompress(d) for d in self.objects[i].decls)
        return self._decls[i]

    def lookup(self, name: str) -> Optional[str]:
        base = base_name(name)
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
