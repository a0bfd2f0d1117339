#!/usr/bin/env python3
"""Benchmark: a 16 MiB model down to an object file, incbin vs xxd vs #embed.

The build embeds a .pte with a generated source file (site_scons/site_tools/
model_embed.py). This script times that step alone, on a synthetic blob (random
bytes behind a .pte-like header; the embedding step does not parse the model, and
the build's model validation is not part of it):

* incbin: write the generated assembler file (model_embed._incbin_source) and
  assemble it with the cross compiler, as `embed=incbin` does;
* xxd: write the model as `0x..,` text (model_embed._xxd_text, the build's own
  Python) and the C file that includes it (model_embed._c_source), and compile
  it, as `embed=xxd` does;
* #embed: the C file with `#embed`, when the compiler has C23 #embed (GCC 15 or
  newer); otherwise the table says so.

Flags are the build's Release flags for rv32imc. Median of N runs each (after one
untimed warm-up of the incbin route), interleaved; checks that every route puts
the same bytes into the object's model section.

Exit status: 0 if xxd / incbin >= --min-ratio, 2 if not, 1 on errors.

    .venv/bin/python benchmarks/embed.py [--mib 16] [--runs 3] [--min-ratio 20]
"""

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "site_scons"))

from machine import machine_rows, median, print_rows, tool_version  # noqa: E402

CROSS = os.environ.get("BENCH_TOOLCHAIN", "riscv64-unknown-elf-")
CC, OBJCOPY = CROSS + "gcc", CROSS + "objcopy"
TARGET_FLAGS = ["-misa-spec=2.2", "-march=rv32imc", "-mabi=ilp32", "-Os",
                "-ffunction-sections", "-fdata-sections"]
if CROSS.startswith("riscv64-unknown-elf"):
    TARGET_FLAGS.insert(3, "--specs=picolibc.specs")     # as toolchain.py: <stdint.h>
SECTION = ".rodata.model"
EMBED_ENV = {"MODEL_SECTION": SECTION, "MODEL_ALIGN": 16}   # what _*_source read


def load_model_embed():
    """site_scons/site_tools/model_embed.py, the build's own generator functions."""
    path = REPO / "site_scons" / "site_tools" / "model_embed.py"
    spec = importlib.util.spec_from_file_location("model_embed", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_object(source, obj, extra=()):
    subprocess.run([CC] + TARGET_FLAGS + list(extra) + ["-c", str(source), "-o", str(obj)],
                   cwd=source.parent, check=True)


def model_section(obj, out):
    subprocess.run([OBJCOPY, "-O", "binary", "--only-section=" + SECTION, str(obj), str(out)],
                   check=True)
    return out.read_bytes()


def compiler_has_embed(workdir):
    probe_data = workdir / "probe.bin"
    probe_data.write_bytes(b"\x01\x02")
    probe = workdir / "probe.c"
    probe.write_text('const unsigned char x[] = {\n#embed "probe.bin"\n};\n')
    proc = subprocess.run([CC] + TARGET_FLAGS + ["-std=c2x", "-c", str(probe), "-o", str(workdir / "probe.o")],
                          cwd=workdir, capture_output=True, text=True)
    return proc.returncode == 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mib", type=float, default=16.0, help="model size in MiB (16)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of each route (3)")
    ap.add_argument("--min-ratio", type=float, default=20.0,
                    help="fail unless xxd takes at least this many times incbin's time (20)")
    args = ap.parse_args()

    for tool in (CC, OBJCOPY):
        if shutil.which(tool) is None:
            print("missing cross tool: %s (./setup.sh installs it)" % tool, file=sys.stderr)
            return 1
    model_embed = load_model_embed()
    size = int(args.mib * 1024 * 1024)

    with tempfile.TemporaryDirectory(prefix="embed-bench-") as tmp:
        tmp = Path(tmp)
        blob = bytearray(os.urandom(size))
        blob[4:8] = b"ET12"                       # a .pte's identifier, for the look of it
        blob = bytes(blob)
        pte = tmp / "model.pte"
        pte.write_bytes(blob)
        has_embed = compiler_has_embed(tmp)

        def incbin():
            src = tmp / "incbin.S"
            src.write_text(model_embed._incbin_source(EMBED_ENV, pte))
            compile_object(src, tmp / "incbin.o", ["-x", "assembler-with-cpp"])

        text_times = []

        def xxd():
            inc = tmp / "model.pte.inc"
            t0 = time.perf_counter()
            with open(pte, "rb") as f:
                text = model_embed._xxd_text(f.read())
            inc.write_text(text)
            text_times.append(time.perf_counter() - t0)
            src = tmp / "xxd.c"
            src.write_text(model_embed._c_source(EMBED_ENV, '#include "%s"' % inc.name))
            compile_object(src, tmp / "xxd.o", ["-std=c11"])

        def embed():
            src = tmp / "embed.c"
            src.write_text(model_embed._c_source(EMBED_ENV, '#embed "%s"' % pte.name))
            compile_object(src, tmp / "embed.o", ["-std=c2x"])

        routes = [("incbin (.S, .incbin)", incbin), ("xxd (0x.. text, C array)", xxd)]
        if has_embed:
            routes.append(("#embed (C23)", embed))

        def timed(fn):
            t0 = time.perf_counter()
            fn()
            return time.perf_counter() - t0

        incbin()                                  # warm-up: page cache, compiler start
        times = {name: [] for name, _ in routes}
        for _ in range(args.runs):
            for name, fn in routes:
                times[name].append(timed(fn))

        same = all(model_section(tmp / ("%s.o" % fn.__name__), tmp / "section.bin") == blob
                   for _, fn in routes)
        inc_text = (tmp / "model.pte.inc").stat().st_size

        rows = machine_rows(CC, extra=[
            ("load average", "%.2f %.2f %.2f at start" % os.getloadavg()),
        ]) + [
            ("model", "%.0f MiB synthetic blob (%d bytes); xxd text %.0f MiB"
             % (args.mib, size, inc_text / 2 ** 20)),
            ("flags", " ".join(TARGET_FLAGS)),
            ("runs", "%d of each, median" % args.runs),
        ]
        print_rows(rows)
        print()
        m_incbin = median(times[routes[0][0]])
        print("%-32s %10s %10s %10s" % ("route", "median ms", "min ms", "x incbin"))
        for name, _ in routes:
            ts = times[name]
            med = median(ts)
            print("%-32s %10.0f %10.0f %10.1f" % (name, med * 1e3, min(ts) * 1e3, med / m_incbin))
            if name.startswith("xxd"):
                med = median(text_times)
                print("%-32s %10.0f %10.0f" % ("  of it: writing the text", med * 1e3,
                                                min(text_times) * 1e3))
        if not has_embed:
            print("%-32s %s" % ("#embed (C23)", "not supported by %s" % tool_version(CC)))
        print()
        ratio = median(times[routes[1][0]]) / m_incbin
        print("model section equals the blob in every object: %s" % ("yes" if same else "NO"))
        print("xxd / incbin = %.0f (target: incbin at least %.0fx faster): %s"
              % (ratio, args.min_ratio, "ok" if ratio >= args.min_ratio else "MISSED"))
        if not same:
            return 1
        return 0 if ratio >= args.min_ratio else 2


if __name__ == "__main__":
    sys.exit(main())
