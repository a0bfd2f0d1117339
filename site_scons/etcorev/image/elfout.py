"""Outputs derived from a linked firmware ELF: hex/binary images and size reports.

Pure Python on top of pyelftools (ELF parsing), so a build does not depend
on the exact objcopy/size of a particular toolchain.  The image writers
reproduce GNU objcopy's output (binutils 2.40) byte for byte:

* :func:`write_verilog_hex` as ``objcopy -O verilog ELF OUT`` (default data
  width 1);
* :func:`write_intel_hex` as ``objcopy -O ihex``;
* :func:`write_binary` as ``objcopy -O binary``.

Which bytes objcopy takes, as BFD decides it for an ELF input:

* every section with ``SHF_ALLOC``, a type other than ``SHT_NOBITS`` and
  ``SHT_NULL``, and a non-zero size ("loadable"); ``.bss`` and other NOBITS
  sections are never written;
* at its load address (LMA), which BFD derives from the program headers:
  a loadable section inside a ``PT_LOAD`` segment gets
  ``p_paddr + sh_offset - p_offset``; a section in no segment keeps its
  VMA; if every ``p_paddr`` is zero and there is more than one non-empty
  ``PT_LOAD``, every section keeps its VMA (see :func:`_section_lma`);
* for Verilog hex: one ``@ADDR`` line per section (even when sections are
  contiguous), sections sorted by LMA, 16 bytes a line, upper-case hex,
  lines ended by CRLF;
* for Intel HEX: the same order, each section in records of its own (see
  :func:`write_intel_hex`).

Memory accounting over the same sections is etcorev.image.memory_usage.
"""

from __future__ import annotations

import binascii
import io
import os
import tempfile
from typing import List, NamedTuple

from elftools.elf.elffile import ELFFile

__all__ = [
    "Section",
    "load_sections",
    "verilog_hex_bytes",
    "write_binary",
    "write_intel_hex",
    "write_verilog_hex",
]

# ELF constants.  pyelftools reports known section and segment types by
# name, so the types are compared as names.
SHT_NULL = "SHT_NULL"
SHT_NOBITS = "SHT_NOBITS"
PT_LOAD = "PT_LOAD"
PT_TLS = "PT_TLS"
PT_PHDR = "PT_PHDR"
PT_GNU_RELRO = "PT_GNU_RELRO"
SHF_WRITE = 0x1
SHF_ALLOC = 0x2
SHF_EXECINSTR = 0x4
SHF_TLS = 0x400

_U64 = (1 << 64) - 1


class Section(NamedTuple):
    """One section header of the ELF, with the load address BFD gives it."""

    index: int
    name: str
    type: object  # sh_type as pyelftools gives it: "SHT_PROGBITS", ... or an int
    flags: int  # sh_flags
    vma: int  # sh_addr
    lma: int  # load (physical) address, as objcopy uses it
    size: int  # sh_size
    offset: int  # sh_offset

    @property
    def alloc(self) -> bool:
        return bool(self.flags & SHF_ALLOC)

    @property
    def nobits(self) -> bool:
        return self.type == SHT_NOBITS

    @property
    def loadable(self) -> bool:
        """True if objcopy writes this section's bytes into an image."""
        return (
            self.alloc
            and self.type not in (SHT_NOBITS, SHT_NULL)
            and self.size > 0
        )

    @property
    def kind(self) -> str:
        """'text', 'data' or 'bss', classified the way Berkeley ``size`` does."""
        if self.flags & SHF_EXECINSTR or not self.flags & SHF_WRITE:
            return "text"
        if not self.nobits:
            return "data"
        return "bss"


# --------------------------------------------------------------------------
# ELF reading
# --------------------------------------------------------------------------


def _read(elf_path) -> bytes:
    with open(os.fspath(elf_path), "rb") as f:
        return f.read()


def _in_segment(sh, ph) -> bool:
    """binutils' ELF_SECTION_IN_SEGMENT (check_vma=1, strict=0).

    Only used with PT_LOAD / PT_TLS segments, so the PT_DYNAMIC/PT_NOTE
    zero-size clauses of the macro do not apply.
    """
    flags, stype = sh["sh_flags"], sh["sh_type"]
    ptype = ph["p_type"]
    tls = bool(flags & SHF_TLS)
    if tls:
        if ptype not in (PT_TLS, PT_LOAD, PT_GNU_RELRO):
            return False
    elif ptype == PT_TLS or ptype == PT_PHDR:
        return False
    if not flags & SHF_ALLOC and ptype == PT_LOAD:
        return False
    # .tbss takes no room in a non-TLS segment
    size = 0 if (tls and stype == SHT_NOBITS and ptype != PT_TLS) else sh["sh_size"]
    if stype != SHT_NOBITS:
        if sh["sh_offset"] < ph["p_offset"]:
            return False
        if sh["sh_offset"] - ph["p_offset"] + size > ph["p_filesz"]:
            return False
    if flags & SHF_ALLOC:
        if sh["sh_addr"] < ph["p_vaddr"]:
            return False
        if sh["sh_addr"] - ph["p_vaddr"] + size > ph["p_memsz"]:
            return False
    return True


def _section_lma(sh, phdrs, lma_is_vma: bool) -> int:
    """The LMA that BFD's _bfd_elf_make_section_from_shdr assigns."""
    lma = sh["sh_addr"]
    if not sh["sh_flags"] & SHF_ALLOC or lma_is_vma:
        return lma
    loads = sh["sh_type"] != SHT_NOBITS  # BFD's SEC_LOAD for an ALLOC section
    for ph in phdrs:
        ptype = ph["p_type"]
        if not (
            (ptype == PT_LOAD and not sh["sh_flags"] & SHF_TLS) or ptype == PT_TLS
        ):
            continue
        if not _in_segment(sh, ph):
            continue
        if loads:
            lma = (ph["p_paddr"] + sh["sh_offset"] - ph["p_offset"]) & _U64
        else:
            lma = (ph["p_paddr"] + sh["sh_addr"] - ph["p_vaddr"]) & _U64
        # A zero-size section at a segment boundary may match two segments;
        # BFD stops at the first whose VMA range really holds it.
        if (
            sh["sh_addr"] >= ph["p_vaddr"]
            and sh["sh_addr"] + sh["sh_size"] <= ph["p_vaddr"] + ph["p_memsz"]
        ):
            break
    return lma


def _parse(data: bytes):
    elf = ELFFile(io.BytesIO(data))
    phdrs = [seg.header for seg in elf.iter_segments()]
    # "Some ELF linkers produce binaries with all the program header p_paddr
    # fields zero": then BFD leaves LMA == VMA if there are several PT_LOADs.
    lma_is_vma = all(ph["p_paddr"] == 0 for ph in phdrs) and (
        sum(1 for ph in phdrs if ph["p_type"] == PT_LOAD and ph["p_memsz"] != 0) > 1
    )
    sections = []
    for index, sec in enumerate(elf.iter_sections()):
        sh = sec.header
        if index == 0 or sh["sh_type"] == SHT_NULL:
            continue
        sections.append(
            Section(
                index=index,
                name=sec.name,
                type=sh["sh_type"],
                flags=sh["sh_flags"],
                vma=sh["sh_addr"],
                lma=_section_lma(sh, phdrs, lma_is_vma),
                size=sh["sh_size"],
                offset=sh["sh_offset"],
            )
        )
    return elf.header["e_entry"], sections


def load_sections(elf_path) -> List[Section]:
    """All sections (except the null one) of ``elf_path``, in header order."""
    return _parse(_read(elf_path))[1]


def _loadable(data: bytes):
    """(entry, [(section, memoryview of its bytes)]) in section-header order."""
    entry, sections = _parse(data)
    mv = memoryview(data)
    out = []
    for s in sections:
        if not s.loadable:
            continue
        if s.offset + s.size > len(data):
            raise ValueError(
                "section %s extends past the end of the file (offset 0x%x, size 0x%x)"
                % (s.name, s.offset, s.size)
            )
        out.append((s, mv[s.offset : s.offset + s.size]))
    return entry, out


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once at import: os.umask() cannot be queried without setting it, which
# would race with other threads (SCons -j runs actions in threads).
_UMASK = _current_umask()


class _AtomicOutput:
    """Write to a temporary file next to ``path``, then rename it into place.

    Like objcopy, this never leaves a half-written target behind, and it is
    faster than truncating a large existing file.
    """

    def __init__(self, path, mode="wb", **kw):
        self.path = os.fspath(path)
        self.mode = mode
        self.kw = kw

    def __enter__(self):
        d = os.path.dirname(self.path) or "."
        fd, self.tmp = tempfile.mkstemp(
            prefix="." + os.path.basename(self.path) + ".", suffix=".tmp", dir=d
        )
        try:
            self.f = os.fdopen(fd, self.mode, **self.kw)
        except BaseException:
            os.close(fd)
            os.unlink(self.tmp)
            raise
        return self.f

    def __exit__(self, exc_type, exc, tb):
        try:
            self.f.close()
            if exc_type is None:
                os.chmod(self.tmp, 0o666 & ~_UMASK)
                os.replace(self.tmp, self.path)
        except BaseException:
            self._discard()
            raise
        if exc_type is not None:
            self._discard()
        return False

    def _discard(self):
        try:
            os.unlink(self.tmp)
        except OSError:
            pass


_UPPER = bytes.maketrans(b"abcdef", b"ABCDEF")


def _upper_hex(data, *sep) -> bytes:
    """binascii.hexlify(data, *sep) in upper case, as objcopy writes hex."""
    return binascii.hexlify(data, *sep).translate(_UPPER)


def _hex_lines(data) -> bytearray:
    """``data`` as objcopy's verilog lines: "XX XX ... XX\\r\\n", 16 bytes a line.

    No per-byte or per-line Python work: hexlify with a space after every
    byte, turn each 16th separator into a newline with one strided slice
    assignment, then expand the newlines to CRLF.
    """
    n = len(data)
    out = bytearray(_upper_hex(data, b" "))
    out.append(10)  # the last byte's separator: end of the last line
    full_lines = n // 16
    if full_lines:
        out[47::48] = b"\n" * full_lines
    return out.replace(b"\n", b"\r\n")


def _verilog_address(where: int) -> bytes:
    if where >= 1 << 32:
        return b"@%016X\r\n" % where
    return b"@%08X\r\n" % where


def verilog_hex_block(address: int, data) -> bytes:
    """One block of ``objcopy -O verilog`` text: the @address line, then the bytes."""
    return _verilog_address(address) + bytes(_hex_lines(data))


def _by_address(elf_path):
    """(entry, [(LMA, bytes of the section)]) of the loadable sections, in the
    order objcopy writes them as Verilog or Intel HEX.

    BFD's verilog_set_section_contents and ihex_set_section_contents both
    take the sections in header order into a list kept sorted by address: a
    section is appended when its address is >= the last one's, otherwise
    inserted before the first entry whose address is >= its own.
    """
    entry, loadable = _loadable(_read(elf_path))
    entries: List[tuple] = []
    for s, chunk in loadable:
        where = s.lma
        if not entries or where >= entries[-1][0]:
            entries.append((where, chunk))
        else:
            i = 0
            while entries[i][0] < where:
                i += 1
            entries.insert(i, (where, chunk))
    return entry, entries


def _verilog_parts(elf_path) -> list:
    parts = []
    for where, chunk in _by_address(elf_path)[1]:
        parts.append(_verilog_address(where))
        parts.append(_hex_lines(chunk))
    return parts


def verilog_hex_bytes(elf_path) -> bytes:
    """The bytes ``objcopy -O verilog`` would write for ``elf_path``."""
    return b"".join(_verilog_parts(elf_path))


def write_verilog_hex(elf_path, out_path) -> None:
    """Write a Verilog ``$readmemh`` image, identical to ``objcopy -O verilog``.

    One ``@XXXXXXXX`` line (the section's LMA) per loadable section, in
    address order, then its bytes as upper-case hex, 16 a line, CRLF line
    ends.  NOBITS sections (``.bss``) are left out.
    """
    parts = _verilog_parts(elf_path)
    with _AtomicOutput(out_path) as f:
        f.writelines(parts)


def write_binary(elf_path, out_path) -> None:
    """Write a raw image like ``objcopy -O binary``.

    The file starts at the lowest LMA of any loadable section; gaps are zero
    and NOBITS sections (``.bss``) are not written, so the file ends with the
    last loadable byte.  Sections are written in header order, so on overlap
    the later one wins, as with objcopy.  An ELF with nothing loadable gives
    an empty file.
    """
    _, loadable = _loadable(_read(elf_path))
    with _AtomicOutput(out_path) as f:
        if not loadable:
            return
        low = min(s.lma for s, _ in loadable)
        end = max(s.lma + s.size for s, _ in loadable) - low
        for s, chunk in loadable:
            f.seek(s.lma - low)
            f.write(chunk)
        f.truncate(end)  # a seek past EOF alone does not extend the file


# Intel HEX, as BFD's ihex_write_object_contents writes it: each section on
# its own (records never span two sections), 16 data bytes a record, no record
# across a 64 KiB boundary; the base of the 16-bit record addresses is a
# segment address (type 02) while the addresses stay below 1 MiB, then a
# linear one (type 04).
_IHEX_DATA, _IHEX_SEGMENT, _IHEX_LINEAR = 0, 2, 4
_IHEX_END, _IHEX_START_SEGMENT, _IHEX_START_LINEAR = 1, 3, 5
_IHEX_CHUNK = 16
_IHEX_FULL = 4 + _IHEX_CHUNK + 1  # bytes of a full data record before hex
# The high and the low byte of every 16-bit address.
_HIGH = b"".join(bytes((i,)) * 256 for i in range(256))
_LOW = bytes(range(256)) * 256
_NEGATE = bytes(-i & 0xFF for i in range(256))


def _ihex_record(rtype: int, address: int, data=b"") -> bytes:
    """One record line: count, address, type, data and checksum in hex, CRLF."""
    record = bytes((len(data), _HIGH[address], _LOW[address], rtype)) + bytes(data)
    return b":%s%02X\r\n" % (_upper_hex(record), -sum(record) & 0xFF)


def _checksums(records: bytearray, n: int) -> bytes:
    """The checksum of each of ``n`` full records: minus the sum of its other
    bytes, mod 256.

    The columns are added as big integers with a 16-bit slot a record (a
    slot never carries into the next: 20 * 255 < 65536); the low byte of a
    slot is the sum mod 256.
    """
    slots = bytearray(2 * n)
    total = 0
    for column in range(_IHEX_FULL - 1):
        slots[0::2] = records[column::_IHEX_FULL]
        total += int.from_bytes(slots, "little")
    return total.to_bytes(2 * n, "little")[0::2].translate(_NEGATE)


def _ihex_data(address: int, data: bytes) -> list:
    """The lines of the data records for ``data`` at the 16-bit ``address``,
    within one 64 KiB page: 16 bytes a record, the last one shorter.

    No per-record Python work: the binary records (count, address, type,
    data, checksum) are filled a column at a time with strided slice
    assignments, then hexlified at once with a newline between records.
    """
    n, rest = divmod(len(data), _IHEX_CHUNK)
    end = address + n * _IHEX_CHUNK
    parts = []
    if n:
        records = bytearray(_IHEX_FULL * n)  # type 00: the zeros stay
        records[0::_IHEX_FULL] = bytes((_IHEX_CHUNK,)) * n
        records[1::_IHEX_FULL] = _HIGH[address:end:_IHEX_CHUNK]
        records[2::_IHEX_FULL] = _LOW[address:end:_IHEX_CHUNK]
        for i in range(_IHEX_CHUNK):
            records[4 + i :: _IHEX_FULL] = data[i : n * _IHEX_CHUNK : _IHEX_CHUNK]
        records[_IHEX_FULL - 1 :: _IHEX_FULL] = _checksums(records, n)
        lines = _upper_hex(records, b"\n", _IHEX_FULL).replace(b"\n", b"\r\n:")
        parts += [b":", lines, b"\r\n"]
    if rest:
        parts.append(_ihex_record(_IHEX_DATA, end, data[n * _IHEX_CHUNK :]))
    return parts


def _ihex_parts(elf_path) -> list:
    entry, sections = _by_address(elf_path)
    parts = []
    segment = linear = 0  # the base of the record addresses: segment + linear

    def base(rtype, value):
        parts.append(_ihex_record(rtype, 0, value.to_bytes(2, "big")))

    for where, chunk in sections:
        if where + len(chunk) > 1 << 32:
            raise ValueError(
                "a section at 0x%x of %d bytes ends past 4 GiB, beyond Intel HEX"
                % (where, len(chunk))
            )
        done = 0
        while done < len(chunk):
            if not linear + segment <= where <= linear + segment + 0xFFFF:
                if linear == 0 and where <= 0xFFFFF:
                    segment = where & 0xF0000
                    base(_IHEX_SEGMENT, segment >> 4)
                else:
                    if segment:  # readers may add both bases: zero the segment
                        segment = 0
                        base(_IHEX_SEGMENT, 0)
                    linear = where & 0xFFFF0000
                    base(_IHEX_LINEAR, linear >> 16)
            address = where - linear - segment
            count = min(len(chunk) - done, 0x10000 - address)
            # bytes: a strided slice of a memoryview could not be assigned
            parts += _ihex_data(address, bytes(chunk[done : done + count]))
            where += count
            done += count
    if entry > 0xFFFFF:
        parts.append(_ihex_record(_IHEX_START_LINEAR, 0, entry.to_bytes(4, "big")))
    elif entry:
        cs_ip = (entry & 0xF0000) << 12 | entry & 0xFFFF
        parts.append(_ihex_record(_IHEX_START_SEGMENT, 0, cs_ip.to_bytes(4, "big")))
    parts.append(_ihex_record(_IHEX_END, 0))
    return parts


def write_intel_hex(elf_path, out_path) -> None:
    """Write an Intel HEX image, identical to ``objcopy -O ihex``.

    The loadable sections at their LMAs, in address order, each in records of
    16 bytes (upper-case hex, CRLF line ends) that never cross a 64 KiB
    boundary; extended segment address records (type 02) below 1 MiB,
    extended linear address records (type 04) above; a start address record
    for a non-zero entry point (type 03 below 1 MiB, else type 05).
    """
    parts = _ihex_parts(elf_path)
    with _AtomicOutput(out_path) as f:
        f.writelines(parts)
