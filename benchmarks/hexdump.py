#!/usr/bin/env python3
"""Benchmark: Verilog hex and Intel HEX from a ~4 MiB ELF, etcorev.image.elfout vs objcopy.

Synthesizes an RV32 ELF linked at 0 whose .rodata is a blob of random bytes
(.incbin, assembled and linked with the cross binutils), then, for each of
``-O verilog`` and ``-O ihex``, times

* the elfout writer (``write_verilog_hex``, ``write_intel_hex``) called
  in-process (how the SCons builder runs it), and for reference the same as
  a fresh Python process (interpreter start and imports included);
* ``riscv64-unknown-elf-objcopy -O FORMAT`` as a subprocess;

median of N runs each (interleaved, after one untimed warm-up run), prints
a table with the machine's facts and checks that the outputs are
byte-identical.

Exit status: 0 if identical and in-process/objcopy <= --max-ratio for both
formats, 1 if some outputs differ, 2 if too slow.

    python benchmarks/hexdump.py [--mib 4] [--runs 5] [--max-ratio 3]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "site_scons"))

from etcorev.image import elfout  # noqa: E402
from machine import host_rows, median, print_rows, tool_version  # noqa: E402

CROSS = "riscv64-unknown-elf-"
AS, LD, OBJCOPY = CROSS + "as", CROSS + "ld", CROSS + "objcopy"

BLOB_S = """\
    .text
    .globl _start
_start:
    j _start
    .section .rodata,"a"
    .globl blob
blob:
    .incbin "blob.bin"
"""


def make_elf(workdir: Path, size: int) -> Path:
    (workdir / "blob.bin").write_bytes(os.urandom(size))
    (workdir / "blob.S").write_text(BLOB_S)
    subprocess.run(
        [AS, "-march=rv32imc", "-mabi=ilp32", "blob.S", "-o", "blob.o"],
        cwd=workdir, check=True,
    )
    subprocess.run(
        [LD, "-m", "elf32lriscv", "-Ttext=0", "-e", "_start", "blob.o", "-o", "blob.elf"],
        cwd=workdir, check=True,
    )
    return workdir / "blob.elf"


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


# objcopy's -O name, elfout's writer, output suffix
FORMATS = (
    ("verilog", "write_verilog_hex", ".hex"),
    ("ihex", "write_intel_hex", ".ihex"),
)


def measure(elf: Path, tmp: Path, fmt: str, writer: str, suffix: str, runs: int):
    """[(label, [seconds])] for objcopy, the writer in-process and in a new
    python, in that order; whether the three outputs are identical; the
    output's size."""
    ours_out, ref_out, cli_out = (tmp / (name + suffix) for name in ("ours", "objcopy", "cli"))

    def ours():
        getattr(elfout, writer)(elf, ours_out)

    def objcopy():
        subprocess.run([OBJCOPY, "-O", fmt, str(elf), str(ref_out)], check=True)

    cli_cmd = [
        sys.executable, "-c",
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from etcorev import elfout; elfout.%s(sys.argv[2], sys.argv[3])" % writer,
        str(REPO / "site_scons"), str(elf), str(cli_out),
    ]

    def ours_cli():
        subprocess.run(cli_cmd, check=True)

    runners = [
        ("objcopy -O %s (subprocess)" % fmt, objcopy, []),
        ("elfout.%s (in-process)" % writer, ours, []),
        ("elfout via new python (subprocess)", ours_cli, []),
    ]
    for _, fn, _ in runners:  # warm-up: page cache, first-call costs
        fn()
    for _ in range(runs):
        for _, fn, times in runners:
            times.append(timed(fn))
    same = ours_out.read_bytes() == ref_out.read_bytes() == cli_out.read_bytes()
    return [(label, times) for label, _, times in runners], same, ref_out.stat().st_size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=float, default=4.0, help="blob size in MiB (4)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each (5)")
    ap.add_argument("--max-ratio", type=float, default=3.0,
                    help="fail if in-process time > this x objcopy's (3)")
    args = ap.parse_args()

    missing = [t for t in (AS, LD, OBJCOPY) if shutil.which(t) is None]
    if missing:
        print("missing cross binutils: " + ", ".join(missing), file=sys.stderr)
        return 1

    with tempfile.TemporaryDirectory(prefix="hexdump-bench-") as tmp:
        tmp = Path(tmp)
        elf = make_elf(tmp, int(args.mib * 1024 * 1024))
        elf_size = elf.stat().st_size
        results = [(fmt,) + measure(elf, tmp, fmt, writer, suffix, args.runs)
                   for fmt, writer, suffix in FORMATS]

    rows = host_rows() + [
        ("objcopy", tool_version(OBJCOPY)),
        ("ELF", "%.2f MiB of .rodata, %d bytes" % (args.mib, elf_size)),
    ] + [("%s output" % fmt, "%d bytes" % size) for fmt, _, _, size in results] + [
        ("runs", "%d each, median" % args.runs),
    ]
    print_rows(rows)
    print()
    print("%-38s %10s %10s %10s" % ("", "median ms", "min ms", "x objcopy"))
    verdicts = []
    for fmt, times, same, _ in results:
        m_objcopy, m_ours = (median(ts) for _, ts in times[:2])
        for label, ts in times:
            med = median(ts)
            print("%-38s %10.1f %10.1f %10.2f"
                  % (label, med * 1e3, min(ts) * 1e3, med / m_objcopy))
        print()
        ratio = m_ours / m_objcopy
        verdicts.append((fmt, same, ratio))
    for fmt, same, ratio in verdicts:
        print("%s: outputs identical: %s; in-process / objcopy = %.2f (target <= %.1f): %s"
              % (fmt, "yes" if same else "NO", ratio, args.max_ratio,
                 "ok" if ratio <= args.max_ratio else "TOO SLOW"))
    if not all(same for _, same, _ in verdicts):
        return 1
    if any(ratio > args.max_ratio for _, _, ratio in verdicts):
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
