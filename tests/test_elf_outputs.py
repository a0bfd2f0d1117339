"""ELF-derived outputs (site_scons/etcorev/image/elfout.py, site_tools/elf_outputs.py)
checked against GNU binutils on small ELFs built here with the cross compiler."""

import random
import re
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

intelhex = pytest.importorskip("intelhex")
pytest.importorskip("elftools")

from elftools.elf.elffile import ELFFile  # noqa: E402
from etcorev.image import elfout, memory_usage  # noqa: E402  (tests/conftest.py puts site_scons on sys.path)

REPO = Path(__file__).resolve().parent.parent
SITE_SCONS = REPO / "site_scons"

CROSS = "riscv64-unknown-elf-"
CC = CROSS + "gcc"
OBJCOPY = CROSS + "objcopy"
SIZE = CROSS + "size"
CFLAGS = [
    "-misa-spec=2.2",
    "-march=rv32imc",
    "-mabi=ilp32",
    "-nostdlib",
    "-nostartfiles",
    "-O1",
]

_missing = [t for t in (CC, OBJCOPY, SIZE) if shutil.which(t) is None]
pytestmark = pytest.mark.skipif(
    bool(_missing), reason="RISC-V cross toolchain not found: %s" % ", ".join(_missing)
)


# ---------------------------------------------------------------------------
# Test ELFs
# ---------------------------------------------------------------------------

SIMPLE_C = r"""
int counter = 5;                       /* .sdata */
int table[8] = {1, 2, 3, 4, 5, 6, 7, 8}; /* .data */
int zeroes[10];                        /* .bss */
const char msg[] = "hello world, this is rodata!";
void _start(void)
{
    counter += table[1] + msg[2] + zeroes[3];
    for (;;)
        ;
}
"""

# Two read-only sections far apart, listed in the section headers before
# .data, which lies between them: exercises the address sort and the gap.
GAP_S = r"""
    .text
    .globl _start
_start:
    j _start
    .section .far,"a"
    .incbin "far.bin"
    .section .near,"a"
    .incbin "near.bin"
    .data
    .word 0x11223344
    .bss
    .space 64
"""

# .data runs from RAM but is stored in ROM (LMA != VMA); sections of awkward
# sizes (1, 15, 16, 17 and 4099 bytes) sit back to back in ROM.
LMA_S = r"""
    .text
    .globl _start
_start:
    la a0, value
    lw a1, 0(a0)
    j _start
    .section .rodata.a,"a"
    .byte 0xa5
    .section .rodata.b,"a"
    .incbin "r15.bin"
    .section .rodata.c,"a"
    .incbin "r16.bin"
    .section .rodata.d,"a"
    .incbin "r17.bin"
    .section .rodata.e,"a"
    .incbin "r4099.bin"
    .data
    .globl value
value:
    .word 0xdeadbeef
    .incbin "r37.bin"
    .section .sdata,"aw"
    .word 0x01020304
    .bss
    .space 1000
"""

LMA_LD = r"""
MEMORY
{
  ROM (rx)  : ORIGIN = 0x80,    LENGTH = 0x3000
  RAM (rwx) : ORIGIN = 0x20000, LENGTH = 0x2000
}
ENTRY(_start)
SECTIONS
{
  .text   : { *(.text*) } > ROM
  .ra     : { KEEP(*(.rodata.a)) } > ROM
  .rb     : { KEEP(*(.rodata.b)) } > ROM
  .rc     : { KEEP(*(.rodata.c)) } > ROM
  .rd     : { KEEP(*(.rodata.d)) } > ROM
  .re     : { KEEP(*(.rodata.e)) } > ROM
  .data   : { *(.data*) } > RAM AT> ROM
  .sdata  : { *(.sdata*) } > RAM AT> ROM
  .bss    : { *(.bss*) *(.sbss*) *(COMMON) } > RAM
}
"""

# Intel HEX corner cases, placed with --section-start (see PAGES_AT): sections of
# odd lengths that cross 64 KiB pages at odd offsets, one that crosses 1 MiB
# (where objcopy's segment address records give way to linear ones), one
# past it, and a 195 KiB one across several pages listed before .data, which
# lies below it.
PAGES_S = r"""
    .text
    .globl _start
_start:
    j _start
    .section .a,"a"
    .incbin "a.bin"
    .section .b,"a"
    .incbin "b.bin"
    .section .c,"a"
    .incbin "c.bin"
    .section .big,"a"
    .incbin "big.bin"
    .data
    .word 0x11223344
    .byte 5
    .bss
    .space 64
"""

PAGES_AT = {".text": 0, ".a": 0xFFF5, ".b": 0xFFFF3, ".c": 0x100400,
            ".big": 0x2FFF1, ".data": 0x20005}


TLS_C = r"""
__thread int tx = 7;                   /* .tdata */
__thread char tb[33];                  /* .tbss */
int v = 3;
void _start(void)
{
    tx += tb[2] + v;
    for (;;)
        ;
}
"""


def _rand(n, seed):
    return random.Random(seed).randbytes(n)


def _cc(workdir: Path, out: str, sources: dict, flags) -> Path:
    for name, text in sources.items():
        p = workdir / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
    srcs = [n for n in sources if n.endswith((".c", ".S"))]
    elf = workdir / out
    cmd = [CC] + CFLAGS + list(flags) + srcs + ["-o", elf.name]
    r = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True)
    assert r.returncode == 0, "compile failed: %s\n%s" % (" ".join(cmd), r.stderr)
    return elf


def _set_paddr(src: Path, dst: Path, fn) -> Path:
    """Copy an ELF32 LE file, rewriting every program header's p_paddr."""
    data = bytearray(src.read_bytes())
    assert data[4] == 1 and data[5] == 1  # ELFCLASS32, little endian
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    for i in range(phnum):
        at = phoff + i * phentsize
        ptype, _off, vaddr, paddr = struct.unpack_from("<IIII", data, at)
        struct.pack_into("<I", data, at + 12, fn(ptype, vaddr, paddr))
    dst.write_bytes(bytes(data))
    return dst


@pytest.fixture(scope="module")
def elfs(tmp_path_factory):
    """name -> path of each test ELF."""
    d = tmp_path_factory.mktemp("elfs")
    out = {}
    out["simple"] = _cc(d, "simple.elf", {"simple.c": SIMPLE_C}, ["-Wl,-Ttext=0x80"])
    out["gap"] = _cc(
        d,
        "gap.elf",
        {"gap.S": GAP_S, "far.bin": _rand(300, 1), "near.bin": _rand(37, 2)},
        [
            "-Wl,-Ttext=0x80",
            "-Wl,--section-start=.near=0x1000",
            "-Wl,--section-start=.far=0x3000",
        ],
    )
    lma_sources = {"lma.S": LMA_S, "lma.ld": LMA_LD}
    for n, seed in ((15, 3), (16, 4), (17, 5), (4099, 6), (37, 7)):
        lma_sources["r%d.bin" % n] = _rand(n, seed)
    out["lma"] = _cc(d, "lma.elf", lma_sources, ["-Wl,-T,lma.ld"])
    out["tls"] = _cc(d, "tls.elf", {"tls.c": TLS_C}, ["-Wl,-Ttext=0x80"])
    pages_sources = {"pages.S": PAGES_S}
    for name, n, seed in (("a", 4099, 8), ("b", 301, 9), ("c", 37, 10), ("big", 200000, 11)):
        pages_sources[name + ".bin"] = _rand(n, seed)
    # Entry 0 (no start address record), and the same 2 GiB up (entry > 1 MiB).
    for name, base in (("pages", 0), ("pages_high", 0x80000000)):
        out[name] = _cc(d, name + ".elf", pages_sources, [
            "-Wl,-Ttext=0x%x" % (base + PAGES_AT[".text"]),
            "-Wl,-Tdata=0x%x" % (base + PAGES_AT[".data"]),
        ] + ["-Wl,--section-start=%s=0x%x" % (sec, base + at)
             for sec, at in PAGES_AT.items() if sec not in (".text", ".data")])
    # BFD ignores the segments' physical addresses when all are zero and
    # there are several PT_LOADs: LMA == VMA for every section.
    out["paddr0"] = _set_paddr(out["lma"], d / "paddr0.elf", lambda t, v, p: 0)
    # ... and otherwise takes them even when they are unusual.
    out["paddr_shift"] = _set_paddr(
        out["lma"], d / "paddr_shift.elf", lambda t, v, p: (p + 0x100000) if t == 1 else p
    )
    return out


ALL = ["simple", "gap", "lma", "tls", "paddr0", "paddr_shift", "pages", "pages_high"]


def _objcopy(fmt: str, elf: Path, out: Path) -> bytes:
    subprocess.run([OBJCOPY, "-O", fmt, str(elf), str(out)], check=True,
                   capture_output=True)
    return out.read_bytes()


def _entry(elf):
    with open(elf, "rb") as f:
        return ELFFile(f).header["e_entry"]


def _sections_by_name(elf):
    return {s.name: s for s in elfout.load_sections(elf)}


# ---------------------------------------------------------------------------
# The test ELFs cover what they are meant to
# ---------------------------------------------------------------------------


def test_fixtures_cover_the_interesting_cases(elfs):
    gap = _sections_by_name(elfs["gap"])
    assert gap[".near"].lma == 0x1000 and gap[".far"].lma == 0x3000
    loadable = [s.lma for s in elfout.load_sections(elfs["gap"]) if s.loadable]
    assert loadable != sorted(loadable), "header order should not be address order"

    lma = _sections_by_name(elfs["lma"])
    assert lma[".data"].vma == 0x20000
    assert lma[".data"].lma != lma[".data"].vma
    assert lma[".data"].lma < 0x3080
    assert lma[".bss"].nobits and not lma[".bss"].loadable
    assert lma[".re"].size == 4099

    p0 = _sections_by_name(elfs["paddr0"])
    assert p0[".data"].lma == p0[".data"].vma == 0x20000
    shifted = _sections_by_name(elfs["paddr_shift"])
    assert shifted[".text"].lma == lma[".text"].lma + 0x100000
    assert shifted[".data"].lma == lma[".data"].lma + 0x100000

    tls = _sections_by_name(elfs["tls"])
    assert tls[".tdata"].loadable and tls[".tbss"].nobits

    for name, base in (("pages", 0), ("pages_high", 0x80000000)):
        secs = _sections_by_name(elfs[name])
        assert {n: secs[n].lma - base for n in PAGES_AT} == PAGES_AT
        a, b = secs[".a"], secs[".b"]
        assert a.lma % 16 and a.lma >> 16 != (a.lma + a.size - 1) >> 16  # 64 KiB
        assert b.lma % 16 and b.lma >> 20 != (b.lma + b.size - 1) >> 20  # 1 MiB
        assert secs[".big"].size > 3 << 16
        assert _entry(elfs[name]) == base


# ---------------------------------------------------------------------------
# Images
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ALL)
def test_verilog_hex_identical_to_objcopy(elfs, tmp_path, name):
    ref = _objcopy("verilog", elfs[name], tmp_path / "ref.hex")
    out = tmp_path / "ours.hex"
    elfout.write_verilog_hex(elfs[name], out)
    ours = out.read_bytes()
    assert ours == ref
    assert ours == elfout.verilog_hex_bytes(elfs[name])


def test_verilog_hex_layout(elfs, tmp_path):
    out = tmp_path / "gap.hex"
    elfout.write_verilog_hex(elfs["gap"], out)
    text = out.read_bytes()
    assert text.endswith(b"\r\n") and b"\n" not in text.replace(b"\r\n", b"")
    lines = text.decode().split("\r\n")[:-1]
    addresses = [line for line in lines if line.startswith("@")]
    # .text, .near, .data, .far in address order; no .bss
    assert addresses == ["@00000080", "@00001000", "@00001082", "@00003000"]
    for line in lines:
        if not line.startswith("@"):
            assert re.fullmatch(r"[0-9A-F]{2}( [0-9A-F]{2}){0,15}", line), line
    near = lines[lines.index("@00001000") + 1 : lines.index("@00001082")]
    assert [len(x.split()) for x in near] == [16, 16, 5]


def test_verilog_hex_overwrites_existing_output(elfs, tmp_path):
    out = tmp_path / "x.hex"
    out.write_bytes(b"stale" * 100000)
    elfout.write_verilog_hex(elfs["simple"], out)
    assert out.read_bytes() == _objcopy("verilog", elfs["simple"], tmp_path / "r.hex")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.hex", "x.hex"]  # no temp left


@pytest.mark.parametrize("name", ALL)
def test_binary_identical_to_objcopy(elfs, tmp_path, name):
    ref = _objcopy("binary", elfs[name], tmp_path / "ref.bin")
    out = tmp_path / "ours.bin"
    elfout.write_binary(elfs[name], out)
    assert out.read_bytes() == ref


def test_binary_zero_fills_gaps(elfs, tmp_path):
    out = tmp_path / "gap.bin"
    elfout.write_binary(elfs["gap"], out)
    data = out.read_bytes()
    secs = _sections_by_name(elfs["gap"])
    assert len(data) == 0x3000 + secs[".far"].size - 0x80
    assert data[secs[".near"].lma - 0x80 - 1] == 0  # in the gap before .near
    assert data[0x3000 - 0x80 :] == (Path(elfs["gap"]).parent / "far.bin").read_bytes()


@pytest.mark.parametrize("name", ALL)
def test_intel_hex_identical_to_objcopy(elfs, tmp_path, name):
    ref = _objcopy("ihex", elfs[name], tmp_path / "ref.ihex")
    out = tmp_path / "ours.ihex"
    elfout.write_intel_hex(elfs[name], out)
    assert out.read_bytes() == ref


@pytest.mark.parametrize("name", ALL)
def test_intel_hex_reads_back_as_the_binary(elfs, tmp_path, name):
    """intelhex, reading what we wrote, finds objcopy's binary image and the entry."""
    out = tmp_path / "ours.ihex"
    elfout.write_intel_hex(elfs[name], out)
    ours = intelhex.IntelHex(str(out))  # raises on overlapping records or a bad checksum
    ours.padding = 0x00  # objcopy's binary fills gaps with zeros
    assert ours.tobinstr() == _objcopy("binary", elfs[name], tmp_path / "ref.bin")
    entry = _entry(elfs[name])
    if entry == 0:
        assert ours.start_addr is None
    elif entry <= 0xFFFFF:
        assert ours.start_addr == {"CS": entry >> 4 & 0xF000, "IP": entry & 0xFFFF}
    else:
        assert ours.start_addr == {"EIP": entry}


def _ihex_lines(elf, out):
    elfout.write_intel_hex(elf, out)
    lines = out.read_bytes().split(b"\r\n")
    assert lines.pop() == b""
    for line in lines:
        assert re.fullmatch(rb":(?:[0-9A-F]{2}){5,21}", line), line
    return [line.decode() for line in lines]


def test_intel_hex_records(elfs, tmp_path):
    """Below 1 MiB, segment bases (02); past it, a zero segment base, then
    linear bases (04); a start address record by the size of the entry."""
    lines = _ihex_lines(elfs["pages"], tmp_path / "pages.ihex")
    bases = [line for line in lines if line[7:9] in ("02", "04")]
    i = bases.index(intelhex.Record.extended_segment_address(0))
    assert i > 0 and all(line[7:9] == "02" for line in bases[:i])
    assert bases[i + 1] == intelhex.Record.extended_linear_address(0x10)
    assert all(line[7:9] == "04" for line in bases[i + 1 :])
    assert lines[-1] == intelhex.Record.eof()  # and no start address: the entry is 0
    assert not [line for line in lines if line[7:9] in ("03", "05")]

    lines = _ihex_lines(elfs["pages_high"], tmp_path / "high.ihex")
    assert lines[-2:] == [intelhex.Record.start_linear_address(0x80000000),
                          intelhex.Record.eof()]
    lines = _ihex_lines(elfs["simple"], tmp_path / "simple.ihex")
    assert lines[-2:] == [intelhex.Record.start_segment_address(0, 0x80),
                          intelhex.Record.eof()]


# ---------------------------------------------------------------------------
# Memory usage
# ---------------------------------------------------------------------------


def _size_A(elf):
    """[(name, size, addr)] from `size -A`."""
    out = subprocess.run([SIZE, "-A", str(elf)], check=True, capture_output=True,
                         text=True).stdout
    rows = []
    for line in out.splitlines():
        m = re.fullmatch(r"(\S+)\s+(\d+)\s+(\d+)", line.strip())
        if m and m.group(1) != "Total":
            rows.append((m.group(1), int(m.group(2)), int(m.group(3))))
    return rows


def _size_berkeley(elf):
    out = subprocess.run([SIZE, str(elf)], check=True, capture_output=True,
                         text=True).stdout
    text, data, bss = out.splitlines()[1].split()[:3]
    return {"text": int(text), "data": int(data), "bss": int(bss)}


def _in(addr, region):
    return region["origin"] <= addr < region["origin"] + region["length"]


@pytest.mark.parametrize("name", ALL)
def test_totals_match_size(elfs, name):
    usage = memory_usage.memory_usage(elfs[name], [])
    assert usage["totals"] == _size_berkeley(elfs[name])


def test_memory_usage_matches_size_A(elfs):
    rom = {"name": "rom", "origin": 0x80, "length": 0xF80}
    ram = {"name": "ram", "origin": 0x1000, "length": 0x1000}
    usage = memory_usage.memory_usage(elfs["simple"], [rom, ram])
    rows = _size_A(elfs["simple"])
    by_name = {r["name"]: r for r in usage["regions"]}
    for region in (rom, ram):
        expected = sum(size for _, size, addr in rows if size and _in(addr, region))
        assert by_name[region["name"]]["used"] == expected > 0
    # .bss counts in RAM
    bss = [size for n, size, _ in rows if n == ".bss"][0]
    assert bss and (".bss", bss) in by_name["ram"]["sections"]
    assert usage["outside"] == []  # non-allocated sections are not "outside"
    r = by_name["ram"]
    assert r["free"] == r["length"] - r["used"] and r["overflow"] == 0
    assert abs(r["percent"] - 100.0 * r["used"] / r["length"]) < 1e-9


def test_memory_usage_counts_lma_copy_in_rom(elfs):
    rom = {"name": "rom", "origin": 0x80, "length": 0x3000}
    ram = {"name": "ram", "origin": 0x20000, "length": 0x2000}
    usage = memory_usage.memory_usage(elfs["lma"], [rom, ram])
    rows = _size_A(elfs["lma"])
    in_rom = sum(s for _, s, a in rows if s and _in(a, rom))
    in_ram = sum(s for _, s, a in rows if s and _in(a, ram))
    ram_contents = sum(s for n, s, a in rows if _in(a, ram) and n in (".data", ".sdata"))
    by_name = {r["name"]: r for r in usage["regions"]}
    assert by_name["ram"]["used"] == in_ram
    assert by_name["rom"]["used"] == in_rom + ram_contents


def test_memory_usage_reports_sections_outside_regions(elfs):
    usage = memory_usage.memory_usage(
        elfs["gap"], [{"name": "lo", "origin": 0, "length": 0x2000}]
    )
    assert [(o["name"], o["address"]) for o in usage["outside"]] == [(".far", 0x3000)]
    report = memory_usage.format_size_report(usage)
    assert "outside every region: .far" in report


def test_memory_usage_rejects_bad_regions(elfs):
    with pytest.raises(ValueError, match="origin"):
        memory_usage.memory_usage(elfs["simple"], [{"name": "ram", "length": 4}])


def test_size_report_format(elfs):
    regions = [
        {"name": "flash", "origin": 0x80, "length": 0xF80},
        {"name": "ram", "origin": 0x1000, "length": 0x1000},
    ]
    usage = memory_usage.memory_usage(elfs["simple"], regions)
    lines = memory_usage.format_size_report(usage).splitlines()
    assert len(lines) == 3
    for line, r in zip(lines, usage["regions"]):
        m = re.fullmatch(
            r"(\w+):\s+\[(=*) *\]\s+(\d+\.\d)% \(used (\d+) bytes from (\d+) bytes\)",
            line,
        )
        assert m, line
        assert m.group(1) == r["name"].upper()
        assert int(m.group(4)) == r["used"] and int(m.group(5)) == r["length"]
        assert float(m.group(3)) == round(100.0 * r["used"] / r["length"], 1)
        assert len(m.group(2)) == round(10 * r["used"] / r["length"])
    # bars line up
    assert lines[0].index("[") == lines[1].index("[") == len("FLASH: ")
    t = usage["totals"]
    assert lines[2] == "text/data/bss: %d / %d / %d bytes (%d total)" % (
        t["text"], t["data"], t["bss"], t["text"] + t["data"] + t["bss"])


def test_size_report_exact_platformio_style():
    usage = {
        "regions": [
            {"name": "ram", "origin": 0, "length": 32768, "used": 6588, "end": 0,
             "overflow": 0, "sections": []},
        ],
        "totals": {"text": 1, "data": 2, "bss": 3},
        "outside": [],
    }
    assert memory_usage.format_size_report(usage).splitlines()[0] == (
        "RAM:   [==        ]  20.1% (used 6588 bytes from 32768 bytes)"
    )


def test_check_fits_passes_when_everything_fits(elfs):
    usage = memory_usage.memory_usage(
        elfs["lma"],
        [{"name": "rom", "origin": 0x80, "length": 0x3000},
         {"name": "ram", "origin": 0x20000, "length": 0x2000}],
    )
    memory_usage.check_fits(usage)  # no exception


def test_check_fits_raises_on_tiny_region(elfs):
    regions = [
        {"name": "rom", "origin": 0x80, "length": 0x3000},
        {"name": "ram", "origin": 0x20000, "length": 256},
    ]
    usage = memory_usage.memory_usage(elfs["lma"], regions)
    ram = [r for r in usage["regions"] if r["name"] == "ram"][0]
    assert ram["used"] > 256
    with pytest.raises(memory_usage.SizeError) as info:
        memory_usage.check_fits(usage)
    msg = str(info.value)
    assert "\n" not in msg
    assert "lma.elf" in msg
    assert "region ram overflows by %d bytes" % (ram["used"] - 256) in msg
    assert "used %d bytes, 256 available" % ram["used"] in msg
    assert "largest sections: .bss 1000" in msg
    assert "rom" not in msg.replace("from", "")
    assert info.value.overflows == [ram]
    assert "OVERFLOW by %d bytes" % (ram["used"] - 256) in memory_usage.format_size_report(usage)


def test_check_fits_catches_a_section_running_past_the_end(elfs):
    # Enough room in total, but .text starts 0x80 into the region and ends
    # past it.
    secs = _sections_by_name(elfs["simple"])
    length = 0x80 + secs[".text"].size - 2
    usage = memory_usage.memory_usage(
        elfs["simple"], [{"name": "imem", "origin": 0, "length": length}]
    )
    with pytest.raises(memory_usage.SizeError, match=r"region imem overflows by 2 bytes"):
        memory_usage.check_fits(usage)


# ---------------------------------------------------------------------------
# The SCons tool
# ---------------------------------------------------------------------------

SCONSTRUCT = textwrap.dedent(
    """
    import ast
    regions = ast.literal_eval(ARGUMENTS["regions"])
    # The quiet tool's one-line messages only when the SConstruct loads it (after the
    # other tools, as here, or before them).
    tools = ["elf_outputs", "quiet"] if ARGUMENTS.get("quiet") else ["elf_outputs"]
    env = Environment(tools=tools, MEMORY_REGIONS=regions)
    env.VerilogHex("fw.elf")
    env.IntelHex("fw.elf")
    env.RawBinary("fw.elf")
    env.SizeReport("fw.elf")
    """
)


def _scons(workdir, *args):
    pytest.importorskip("SCons")
    cmd = [sys.executable, "-m", "SCons", "-Q", "--site-dir", str(SITE_SCONS),
           "-C", str(workdir)] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True)


def test_scons_tool_builds_outputs(elfs, tmp_path):
    shutil.copy(elfs["lma"], tmp_path / "fw.elf")
    (tmp_path / "SConstruct").write_text(SCONSTRUCT)
    fits = "regions=[{'name':'rom','origin':0x80,'length':0x3000}," \
           "{'name':'ram','origin':0x20000,'length':0x2000}]"
    plain = tmp_path / "plain"            # without the quiet tool: no one-line messages
    plain.mkdir()
    shutil.copy(elfs["lma"], plain / "fw.elf")
    (plain / "SConstruct").write_text(SCONSTRUCT)
    r = _scons(plain, fits)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Writing fw.hex" not in r.stdout and (plain / "fw.hex").is_file(), r.stdout

    r = _scons(tmp_path, fits, "quiet=1")
    assert r.returncode == 0, r.stdout + r.stderr
    for line in ("Writing fw.hex", "Writing fw.ihex", "Writing fw.bin",
                 "Checking size of fw.elf"):
        assert any(l.endswith(line) for l in r.stdout.splitlines()), (line, r.stdout)
    assert (tmp_path / "fw.hex").read_bytes() == _objcopy(
        "verilog", elfs["lma"], tmp_path / "ref.hex")
    assert (tmp_path / "fw.bin").read_bytes() == _objcopy(
        "binary", elfs["lma"], tmp_path / "ref.bin")
    report = (tmp_path / "fw.size.txt").read_text()
    assert report.startswith("ROM:   [") and "\nRAM:   [" in report
    assert report.splitlines()[0] in r.stdout

    r = _scons(tmp_path, fits, "quiet=1")
    assert r.returncode == 0 and "up to date" in r.stdout, r.stdout + r.stderr

    # A new region list is a new action signature: only the report rebuilds. (Whether
    # an image fits is the post-link check's job: tests/test_pipeline.py.)
    tiny = "regions=[{'name':'rom','origin':0x80,'length':0x3000}," \
           "{'name':'ram','origin':0x20000,'length':0x100}]"
    r = _scons(tmp_path, tiny, "quiet=1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Checking size of fw.elf" in r.stdout and "Writing fw.hex" not in r.stdout
    assert (tmp_path / "fw.size.txt").read_text() != report


def test_scons_tool_reports_a_bad_elf_cleanly(tmp_path):
    (tmp_path / "fw.elf").write_bytes(b"not an elf at all")
    (tmp_path / "SConstruct").write_text(
        'env = Environment(tools=["elf_outputs"])\nenv.VerilogHex("fw.elf")\n'
    )
    r = _scons(tmp_path)
    assert r.returncode != 0
    assert "scons: *** [fw.hex] fw.elf:" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "fw.hex").exists()
