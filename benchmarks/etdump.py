#!/usr/bin/env python3
"""Benchmark: the two profilers against no profiler, for examples/models/cnn.pte.

Three builds of cnn.pte with its cnn.inputs.json (the default build otherwise: Release,
CORE-V GCC, CORE-V kernels): profile=0, profile=1 (the runner's cycle tracer) and
profile=etdump (ExecuTorch's ETDumpGen over a static buffer, the flatcc runtime), each
run by `scons run` on QEMU (instructions) and, when a testbench is configured, on the
CV32E40P Verilator model (cycles). All three use the same ExecuTorch tree, one with the
third-party/flatcc submodule (--tree, else $COREV_ET_FLATCC_TREE, else the configured
tree). For each build:

* text / data+bss of the ELF (as `size` counts them);
* the runner's `Cycles method load` and `Cycles execute`, and on the testbench the
  whole run (`Cycles: N`, reset to exit, the ETDump's base64 printing included);
* per operator, both profilers' two figures: the operator's instruction (the runtime's
  OPERATOR_CALL event) and the kernel inside it (the registration's native_call_<op>
  event). profile=1 prints them itself; the ETDump is read with ExecuTorch's Inspector
  (the export extra), its OPERATOR_CALL events taken in execution order.

The kernel figures of the two profilers should agree within a few counts: no tracer
call is inside a kernel's event, only the edges of the two that open and close it. The
operator figures differ by what each tracer spends inside them, on the kernel event
nested in each (ETDumpGen: a flatbuffer table per event). The counts are
deterministic; --runs N prints the median of N.

    .venv/bin/python benchmarks/etdump.py [--runs 1] [--tree PATH] [--verilator PATH]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from checkout import REPO, Failed, scons

MODEL = REPO / "examples" / "models" / "cnn.pte"
ETRECORD = REPO / "examples" / "models" / "cnn.etrecord"
sys.path.insert(0, str(REPO / "site_scons"))

from etcorev import pte  # noqa: E402
from etcorev.scons import settings  # noqa: E402
from etcorev.executorch.flatcc import has_flatcc  # noqa: E402
from etcorev.image import memory_usage  # noqa: E402
from etcorev.run import profile as cycle_profile  # noqa: E402
from machine import host_rows, median, print_rows, scons_version, tool_version  # noqa: E402

PROFILES = ("0", "1", "etdump")
CYCLES_RE = re.compile(r"^Cycles ([a-z ]+): (\d+)\s*$", re.M)
TOTAL_RE = re.compile(r"^Cycles: (\d+)\s*$", re.M)



def flatcc_tree(given):
    for candidate in (given, os.environ.get("COREV_ET_FLATCC_TREE"),
                      os.environ.get("EXECUTORCH_ROOT"), settings.read().get("executorch")):
        if candidate and has_flatcc(candidate):
            return candidate
    return None


def etdump_operators(path, kernel_calls):
    """{operator: (op cycles, kernel cycles)} of an ETDump (one execution), with the
    Inspector; the OPERATOR_CALL events in execution order are the method's kernel
    calls in order."""
    import warnings
    warnings.simplefilter("ignore")
    from executorch.devtools import Inspector
    from executorch.devtools.inspector import TimeScale

    inspector = Inspector(etdump_path=str(path), etrecord=str(ETRECORD),
                          source_time_scale=TimeScale.CYCLES,
                          target_time_scale=TimeScale.CYCLES)
    block = next(b for b in inspector.event_blocks if b.name == "Execute")
    events = sorted(block.events, key=lambda e: e.start_time[0])
    calls = [e for e in events if e.name == "OPERATOR_CALL"]
    kernels = {e.name: e.perf_data.raw[0] for e in events if e.name.startswith("native_call_")}
    figures = {}
    for (op, _), event in zip(kernel_calls, calls):
        short = op.split("::", 1)[1]                    # aten::relu.out -> relu.out
        kernel = kernels.get("native_call_" + short)
        figures[op] = (int(event.perf_data.raw[0]), None if kernel is None else int(kernel))
    execute = int(next(e.perf_data.raw[0] for e in events if e.name == "Method::execute"))
    return figures, execute


def one_build(build_dir, board, profile, tree, verilator):
    options = ["board=%s" % board, "model=%s" % MODEL, "profile=%s" % profile,
               "executorch=%s" % tree, "run"]
    if board == "cv32e40p":
        options.append("verilator_model=%s" % verilator)
    out = scons(build_dir, *options)
    elf = next(Path(build_dir).glob("%s-*/cnn/executor_runner.elf" % board))
    sizes = memory_usage.memory_usage(str(elf), [])["totals"]
    text, data, bss = sizes["text"], sizes["data"], sizes["bss"]
    phases = {name: int(value) for name, value in CYCLES_RE.findall(out)}
    total = TOTAL_RE.search(out)
    row = {"text": text, "data+bss": data + bss, "method load": phases.get("method load"),
           "execute": phases.get("execute"), "total": int(total.group(1)) if total else None}
    if profile == "1":
        records = cycle_profile.parse(out)
        ops = {r.name: r.cycles for r in records if r.kind == "op"}
        kernels = {r.name: r.cycles for r in records if r.kind == "kernel"}
        row["operators"] = {op: (ops[op], kernels.get(op)) for op in ops}
        row["profiled execute"] = cycle_profile.execute_total(records)
    elif profile == "etdump":
        etdp = next(Path(build_dir).glob("*-etdump/cnn/executor_runner.etdp"))
        row["etdump bytes"] = etdp.stat().st_size
        try:
            method = pte.read_pte(MODEL).methods[0]
            row["operators"], row["profiled execute"] = etdump_operators(etdp, method.kernel_calls)
        except ImportError:
            row["operators"] = None
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1, help="runs of each build (1: the counts "
                    "are deterministic)")
    ap.add_argument("--tree", default=None, help="an ExecuTorch tree with third-party/flatcc")
    ap.add_argument("--verilator", default=None,
                    help="Vtb_top_verilator (default: verilator_model in the user settings; "
                    "'': QEMU only)")
    args = ap.parse_args()
    tree = flatcc_tree(args.tree)
    if tree is None:
        print("no ExecuTorch tree with third-party/flatcc: give --tree PATH or set "
              "COREV_ET_FLATCC_TREE (git submodule update --init third-party/flatcc)",
              file=sys.stderr)
        return 1
    verilator = args.verilator if args.verilator is not None else (
        os.environ.get("VERILATOR_MODEL") or settings.read().get("verilator_model") or "")
    boards = ["qemu"] + (["cv32e40p"] if verilator and os.path.isfile(verilator) else [])

    print_rows(host_rows([("load average", "%.2f %.2f %.2f" % os.getloadavg())]) + [
        ("SCons", scons_version()), ("QEMU", tool_version("qemu-system-riscv32")),
        ("ExecuTorch tree", tree), ("testbench", verilator if "cv32e40p" in boards else "none")])
    results = {}
    with tempfile.TemporaryDirectory(prefix="corev-etdump-bench-") as tmp:
        for board in boards:
            for profile in PROFILES:
                runs = []
                for run in range(args.runs):
                    build_dir = Path(tmp) / ("%s-%s-%d" % (board, profile, run))
                    runs.append(one_build(build_dir, board, profile, tree, verilator))
                row = dict(runs[0])
                for key in ("method load", "execute", "total"):
                    values = [r[key] for r in runs if r[key] is not None]
                    row[key] = median(values) if values else None
                results[board, profile] = row

    for board in boards:
        unit = "instructions" if board == "qemu" else "cycles"
        print("\ncnn.pte on %s (%s)" % (board, unit))
        header = ("profile", "text", "data+bss", "method load", "execute", "vs profile=0",
                  "whole run")
        rows = []
        base = results[board, "0"]["execute"]
        for profile in PROFILES:
            row = results[board, profile]
            rows.append((profile, row["text"], row["data+bss"], row["method load"],
                         row["execute"], "%+d (%+.1f %%)" % (row["execute"] - base,
                                                             100.0 * (row["execute"] - base) / base),
                         row["total"] if row["total"] is not None else "-"))
        widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
        for line in [header] + rows:
            print("  ".join(str(c).rjust(w) for c, w in zip(line, widths)))
        etdump = results[board, "etdump"]
        print("ETDump: %d bytes" % etdump["etdump bytes"])
        if not etdump.get("operators"):
            print("(per-operator ETDump figures need the export extra: ./setup.sh --export)")
            continue
        cycle = results[board, "1"]["operators"]
        print("\nper operator, %s: op = the operator's instruction, kernel = the kernel "
              "inside it" % unit)
        header = ("operator", "profile=1 op", "etdump op", "diff", "profile=1 kernel",
                  "etdump kernel", "diff")
        rows, op_diffs, kernel_diffs = [], [], []
        for op, (c_op, c_kernel) in sorted(cycle.items(), key=lambda item: -item[1][0]):
            e_op, e_kernel = etdump["operators"].get(op, (None, None))
            if e_op is None:
                continue
            op_diffs.append(e_op - c_op)
            kernel_diffs.append(e_kernel - c_kernel)
            rows.append((op, c_op, e_op, "%+d" % (e_op - c_op), c_kernel, e_kernel,
                         "%+d" % (e_kernel - c_kernel)))
        widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]
        for line in [header] + rows:
            print("  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                            for i, (c, w) in enumerate(zip(line, widths))))
        print("kernels agree within %d %s; operators differ by %+d to %+d (the tracers' "
              "own work inside each operator's event); Method::execute as profiled: "
              "profile=1 %d, etdump %d" % (
                  max(abs(d) for d in kernel_diffs), unit, min(op_diffs), max(op_diffs),
                  results[board, "1"]["profiled execute"], etdump["profiled execute"]))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as error:
        print(error, file=sys.stderr)
        sys.exit(1)
