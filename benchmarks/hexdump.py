#!/usr/bin/env python3
"""Benchmark: Verilog hex from a ~4 MiB ELF, etcorev.elfout vs objcopy.

Synthesizes an RV32 ELF linked at 0 whose .rodata is a blob of random bytes
(.incbin, assembled and linked with the cross binutils), then times

* ``elfout.write_verilog_hex`` called in-process (how the SCons builder
  runs it), and for reference the same as a fresh Python process
  (interpreter start and imports included);
* ``riscv64-unknown-elf-objcopy -O verilog`` as a subprocess;

median of N runs each (interleaved, after one untimed warm-up run), prints
a table with the machine's facts and checks that the outputs are
byte-identical.

Exit status: 0 if identical and in-process/objcopy <= --max-ratio, 1 if the
outputs differ, 2 if too slow.

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

from etcorev import elfout  # noqa: E402
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
        ours_out, ref_out, cli_out = tmp / "ours.hex", tmp / "objcopy.hex", tmp / "cli.hex"

        def ours():
            elfout.write_verilog_hex(elf, ours_out)

        def objcopy():
            subprocess.run([OBJCOPY, "-O", "verilog", str(elf), str(ref_out)], check=True)

        cli_cmd = [
            sys.executable, "-c",
            "import sys; sys.path.insert(0, sys.argv[1]); "
            "from etcorev import elfout; elfout.write_verilog_hex(sys.argv[2], sys.argv[3])",
            str(REPO / "site_scons"), str(elf), str(cli_out),
        ]

        def ours_cli():
            subprocess.run(cli_cmd, check=True)

        for fn in (ours, objcopy, ours_cli):  # warm-up: page cache, first-call costs
            fn()
        t_ours, t_objcopy, t_cli = [], [], []
        for _ in range(args.runs):
            t_ours.append(timed(ours))
            t_objcopy.append(timed(objcopy))
            t_cli.append(timed(ours_cli))

        same = ours_out.read_bytes() == ref_out.read_bytes() == cli_out.read_bytes()
        m_ours, m_obj, m_cli = (median(t) for t in (t_ours, t_objcopy, t_cli))
        ratio = m_ours / m_obj

        rows = host_rows() + [
            ("objcopy", tool_version(OBJCOPY)),
            ("ELF", "%.2f MiB of .rodata, %d bytes" % (args.mib, elf.stat().st_size)),
            ("hex output", "%d bytes" % ref_out.stat().st_size),
            ("runs", "%d each, median" % args.runs),
        ]
        print_rows(rows)
        print()
        print("%-38s %10s %10s %10s" % ("", "median ms", "min ms", "x objcopy"))
        for name, ts in (
            ("objcopy -O verilog (subprocess)", t_objcopy),
            ("elfout.write_verilog_hex (in-process)", t_ours),
            ("elfout via new python (subprocess)", t_cli),
        ):
            med = median(ts)
            print("%-38s %10.1f %10.1f %10.2f" % (name, med * 1e3, min(ts) * 1e3, med / m_obj))
        print()
        print("outputs identical: %s" % ("yes" if same else "NO"))
        print("in-process / objcopy = %.2f (target <= %.1f): %s"
              % (ratio, args.max_ratio, "ok" if ratio <= args.max_ratio else "TOO SLOW"))
        if not same:
            return 1
        if ratio > args.max_ratio:
            return 2
        return 0


if __name__ == "__main__":
    sys.exit(main())
