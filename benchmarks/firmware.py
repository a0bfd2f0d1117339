#!/usr/bin/env python3
"""Benchmark: firmware size and run-time counts for every test model.

For each model of ../shared/models/manifest.json (beside the repository) and each
build type (Release, Debug), built with board=qemu and the manifest's inputs, into a
temporary build_dir:

* text / data / bss of the ELF (`riscv64-unknown-elf-size`, Berkeley format: text
  includes read-only data, the embedded model among it);
* QEMU: the runner's phase counters (`Cycles startup|program load|method load|
  execute|output: N`: mcycle, which counts instructions under `-icount shift=0`),
  and the total instruction count of the run. Debian's QEMU 7.2 ships no TCG
  plugins (no libinsn.so), so the total is counted from QEMU's own execution log:
  one instruction per translation block (-singlestep), `-d exec,nochain`, one
  `Trace` line per executed block, less the blocks that icount rewound and ran
  again (`cpu_io_recompile` lines, at MMIO stores);
* Verilator (when a model is configured: --verilator PATH, else verilator_model in
  the user settings): the same firmware built with board=cv32e40p and run by
  `scons run`, which prints the testbench's total (`Cycles: N`) and the phases.

"other" = total - the sum of the printed phases: the reset vector before crt0, the
code between the phases (printing the counters, method_meta, inputs) and the exit.
The counts are deterministic; the median of N runs is printed, and a count that
varied between runs is marked with `~`.

    .venv/bin/python benchmarks/firmware.py [--runs 3] [--verilator PATH]
"""

import argparse
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODELS = REPO.parent / "shared" / "models"
sys.path.insert(0, str(REPO / "site_scons"))

from etcorev import boards, settings  # noqa: E402
from machine import machine_rows, median, print_rows, tool_version  # noqa: E402

SIZE = "riscv64-unknown-elf-size"
QEMU = "qemu-system-riscv32"
PHASES = ("startup", "program load", "method load", "execute", "output")
CYCLES_RE = re.compile(r"^Cycles ([a-z ]+): (\d+)\s*$", re.M)
TOTAL_RE = re.compile(r"^Cycles: (\d+)\s*$", re.M)


# ---------------------------------------------------------------- helpers

class Failed(Exception):
    pass


def scons(build_dir, *args):
    argv = [sys.executable, "-m", "SCons", "-Q", "build_dir=%s" % build_dir] + list(args)
    proc = subprocess.run(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if proc.returncode:
        raise Failed("scons failed (exit %d): %s\n%s" % (
            proc.returncode, " ".join(argv), "\n".join(proc.stdout.splitlines()[-25:])))
    return proc.stdout


def phases(output):
    found = {name: int(value) for name, value in CYCLES_RE.findall(output)}
    return {name: found[name] for name in PHASES if name in found}


def find_elf(build_dir, model_stem):
    hits = sorted(Path(build_dir).glob("*/%s/executor_runner.elf" % model_stem))
    if len(hits) != 1:
        raise Failed("expected one executor_runner.elf for %s under %s, found %d"
                     % (model_stem, build_dir, len(hits)))
    return hits[0]


def berkeley_size(elf):
    out = subprocess.run([SIZE, str(elf)], capture_output=True, text=True, check=True).stdout
    text, data, bss = out.splitlines()[1].split()[:3]
    return int(text), int(data), int(bss)


@functools.lru_cache(maxsize=None)
def singlestep_flag():
    full = subprocess.run([QEMU, "-help"], capture_output=True, text=True).stdout
    return ["-accel", "tcg,one-insn-per-tb=on"] if "one-insn-per-tb" in full else ["-singlestep"]


def run_qemu(elf, workdir, trace):
    """(output, total instructions or None) of one QEMU run of the firmware."""
    argv = boards.load("qemu").run_command(str(elf), str(elf.with_suffix(".hex")), {},
                                           str(workdir))
    log = Path(workdir) / "exec.log"
    if trace:
        argv = argv + singlestep_flag() + ["-d", "exec,nochain", "-D", str(log)]
    proc = subprocess.run(argv, cwd=workdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace", timeout=600)
    if proc.returncode:
        raise Failed("%s exited with %d:\n%s" % (elf, proc.returncode, proc.stdout[-2000:]))
    total = None
    if trace:
        blocks = rewound = 0
        with open(log, "rb") as f:
            for line in f:
                if line.startswith(b"Trace "):
                    blocks += 1
                elif line.startswith(b"cpu_io_recompile"):
                    rewound += 1
        log.unlink()
        total = blocks - rewound
    return proc.stdout, total


def median_of(values):
    """(median, varied?) of counts from several runs."""
    return median(values), len(set(values)) > 1


# ---------------------------------------------------------------- the benchmark

def measure(args, models, manifest, tmp):
    rows = []
    verilator = args.verilator
    for build_type in args.build_types:
        qemu_dir = tmp / ("qemu-" + build_type)
        cv_dir = tmp / ("cv32e40p-" + build_type)
        for name in models:
            entry = manifest[name]
            pte = MODELS / entry["file"]
            inputs = tmp / ("%s.inputs.json" % name)
            inputs.write_text(json.dumps(entry.get("inputs", [])))
            common = ["build_type=%s" % build_type, "model=%s" % pte, "inputs=%s" % inputs]
            print("%s %s ..." % (name, build_type), file=sys.stderr, flush=True)
            scons(qemu_dir, "board=qemu", *common)
            elf = find_elf(qemu_dir, pte.stem)
            row = {"model": name, "type": build_type, "size": berkeley_size(elf)}

            plain, totals = [], []
            for _ in range(args.runs):
                out, _ = run_qemu(elf, tmp, trace=False)
                plain.append(phases(out))
                out, total = run_qemu(elf, tmp, trace=True)
                totals.append(total)
                if phases(out) != plain[-1]:
                    print("warning: %s %s: phase counts differ with -singlestep"
                          % (name, build_type), file=sys.stderr)
            row["qemu"] = {p: median_of([r.get(p) for r in plain]) for p in plain[0]}
            row["qemu_total"] = median_of(totals)

            if verilator:
                runs = []
                for _ in range(args.runs):
                    out = scons(cv_dir, "run", "board=cv32e40p", "verilator_model=%s" % verilator,
                                *common)
                    match = TOTAL_RE.search(out)
                    if not match:
                        raise Failed("no `Cycles: N` from the testbench for %s %s:\n%s"
                                     % (name, build_type, out[-2000:]))
                    runs.append((int(match.group(1)), phases(out)))
                row["verilator_total"] = median_of([t for t, _ in runs])
                row["verilator"] = {p: median_of([ph.get(p) for _, ph in runs]) for p in runs[0][1]}
            rows.append(row)
    return rows


def count(value):
    number, varied = value
    return ("~" if varied else "") + "%d" % number


def phase_table(title, rows, counts_key, total_key, extra=None):
    print(title)
    head = ["model", "type", "total"] + list(PHASES) + ["other"] + ([extra[0]] if extra else [])
    widths = [8, 8, 10] + [max(9, len(p)) for p in PHASES] + [7] + ([11] if extra else [])
    print(" ".join("%*s" % (-w if i < 2 else w, h) for i, (h, w) in enumerate(zip(head, widths))))
    for row in rows:
        counts = row[counts_key]
        total = row[total_key]
        known = [counts[p][0] for p in PHASES if p in counts]
        cells = [row["model"], row["type"], count(total)]
        cells += [count(counts[p]) if p in counts else "-" for p in PHASES]
        cells.append("%d" % (total[0] - sum(known)))
        if extra:
            cells.append(extra[1](row))
        print(" ".join("%*s" % (-w if i < 2 else w, c) for i, (c, w) in enumerate(zip(cells, widths))))
    print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs of each simulation (3)")
    ap.add_argument("--verilator", default=None,
                    help="Vtb_top_verilator to run board=cv32e40p firmware on (default: "
                    "verilator_model in the user settings; --verilator '': QEMU only)")
    ap.add_argument("--models", default="", help="model names of the manifest (all)")
    ap.add_argument("--build-types", default="Release,Debug", help="(Release,Debug)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary build_dir")
    args = ap.parse_args()
    args.build_types = [t.strip() for t in args.build_types.split(",") if t.strip()]

    try:
        import SCons  # noqa: F401
    except ImportError:
        print("SCons is not importable: run this with the project's .venv/bin/python",
              file=sys.stderr)
        return 1
    root = os.environ.get("EXECUTORCH_ROOT") or settings.read().get("executorch")
    if not root or not os.path.isdir(root):
        print("no ExecuTorch tree: set EXECUTORCH_ROOT, or run ./setup.sh --executorch PATH",
              file=sys.stderr)
        return 1
    manifest_file = MODELS / "manifest.json"
    if not manifest_file.is_file():
        print("skipping: no %s" % manifest_file)
        return 0
    for tool in (SIZE, QEMU):
        if shutil.which(tool) is None:
            print("missing %s (./setup.sh installs it)" % tool, file=sys.stderr)
            return 1
    manifest = json.loads(manifest_file.read_text())
    wanted = [m.strip() for m in args.models.split(",") if m.strip()] or list(manifest)
    models = []
    for name in wanted:
        if name not in manifest or not (MODELS / manifest[name]["file"]).is_file():
            print("skipping %s: not in %s" % (name, MODELS))
        else:
            models.append(name)
    verilator_source = "--verilator"
    if args.verilator is None:
        args.verilator = settings.read().get("verilator_model") or ""
        verilator_source = "verilator_model in the user settings"
    if args.verilator:
        args.verilator = os.path.abspath(os.path.expanduser(args.verilator))
        if not os.access(args.verilator, os.X_OK):
            print("the Verilator model %s is not an executable file" % args.verilator,
                  file=sys.stderr)
            return 1

    tmp = Path(tempfile.mkdtemp(prefix="firmware-bench-"))
    try:
        rows = measure(args, models, manifest, tmp)
    except Failed as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print("kept %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    facts = machine_rows("riscv64-unknown-elf-gcc") + [
        ("QEMU", tool_version(QEMU)),
        ("Verilator", "%s (from %s)" % (os.path.basename(args.verilator), verilator_source)
         if args.verilator
         else "none configured (--verilator PATH or verilator_model in the user settings)"),
        ("builds", "board=qemu (and board=cv32e40p for Verilator), default options, "
         "inputs from the manifest"),
        ("runs", "%d of each simulation, median" % args.runs),
    ]
    print_rows(facts)
    print()
    print("Size of the board=qemu ELF, bytes (Berkeley: text includes rodata and the model)")
    print("%-8s %-8s %9s %7s %7s" % ("model", "type", "text", "data", "bss"))
    for row in rows:
        print("%-8s %-8s %9d %7d %7d" % ((row["model"], row["type"]) + row["size"]))
    print()
    phase_table("QEMU instructions (total: counted from -d exec with -singlestep; phases: "
                "the runner's mcycle, -icount shift=0)", rows, "qemu", "qemu_total")
    if args.verilator:
        def cpi(row):
            return "%.2f" % (row["verilator"]["execute"][0] / row["qemu"]["execute"][0])
        phase_table("CV32E40P cycles in the Verilator testbench (total: the testbench's "
                    "`Cycles: N`)", rows, "verilator", "verilator_total",
                    extra=("execute CPI", cpi))
        print("execute CPI: Verilator cycles / QEMU instructions of the execute phase "
              "(same program, built for each board).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
