#!/usr/bin/env python3
"""Benchmark: firmware size and run-time counts by toolchain, kernel library and ISA.

For the repository's models in examples/models (add, mlp, cnn and qmlp unless --models
says otherwise), each with its NAME.inputs.json, one model-set build per configuration
into a temporary build_dir. The configurations: the first toolchain present (CORE-V
GCC, else Debian's with picolibc) with the portable and the CORE-V kernels on rv32imc
and rv32imfc; every other toolchain as the default build (CORE-V kernels, rv32imc). For
each model and configuration:

* text / data / bss of the board=qemu ELF (`riscv64-unknown-elf-size`, Berkeley format:
  text includes read-only data, the embedded model among it);
* QEMU: the runner's phase counters (`Cycles startup|program load|method load|
  execute|output: N`: mcycle, which counts instructions under `-icount shift=0`),
  and the total instruction count of the run. Debian's QEMU 7.2 ships no TCG
  plugins (no libinsn.so), so the total is counted from QEMU's own execution log:
  one instruction per translation block (-singlestep), `-d exec,nochain`, one
  `Trace` line per executed block, less the blocks that icount rewound and ran
  again (`cpu_io_recompile` lines, at MMIO stores);
* Verilator (rv32imc: --verilator PATH, else verilator_model in the user settings;
  rv32imfc: --verilator-fpu PATH, an FPU-enabled testbench): the same firmware built
  with board=cv32e40p and run by `scons run`, which prints the testbench's total
  (`Cycles: N`) and the phases.

Then two comparisons: the toolchains side by side, and portable versus CORE-V kernels
(execute counts and their ratio, text). "other" = total - the sum of the printed phases:
the reset vector before crt0, the code between the phases and the exit. The counts are
deterministic; the median of N runs is printed, and a count that varied between runs is
marked with `~`.

    .venv/bin/python benchmarks/firmware.py [--runs 3] [--verilator PATH]
                                            [--verilator-fpu PATH] [--models all]
"""

import argparse
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from checkout import REPO, Failed, scons

MODELS = REPO / "examples" / "models"              # the repository's example models
sys.path.insert(0, str(REPO / "site_scons"))

from etcorev import boards  # noqa: E402
from etcorev.scons import settings
from etcorev.toolchain import corev_gcc
from machine import executorch_root, host_rows, median, print_rows, scons_version, tool_version  # noqa: E402

SIZE = "riscv64-unknown-elf-size"
# The compared toolchains, by the prefix given as toolchain= (the first is the default).
TOOLCHAINS = {"corev": "riscv32-corev-elf-", "picolibc": "riscv64-unknown-elf-"}
QEMU = "qemu-system-riscv32"
PHASES = ("startup", "program load", "method load", "execute", "output")
CYCLES_RE = re.compile(r"^Cycles ([a-z ]+): (\d+)\s*$", re.M)
TOTAL_RE = re.compile(r"^Cycles: (\d+)\s*$", re.M)


# ---------------------------------------------------------------- helpers

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

class Config:
    """One build configuration: the options that differ between the compared builds."""

    def __init__(self, toolchain, kernels, isa, build_type):
        self.toolchain, self.kernels, self.isa, self.build_type = (
            toolchain, kernels, isa, build_type)

    @property
    def name(self):
        return "%s %s %s %s" % (self.toolchain, self.kernels, self.isa, self.build_type)

    @property
    def key(self):
        return self.name.replace(" ", "-")

    def options(self):
        return ["toolchain=%s" % TOOLCHAINS[self.toolchain], "isa=%s" % self.isa,
                "corev_kernels=%d" % (self.kernels == "corev"),
                "build_type=%s" % self.build_type]


def model_set(models, tmp):
    """A model set directory of the chosen models of examples/models: links to each
    NAME.pte and its NAME.inputs.json (not NAME.expected.json: the builds and runs here
    count, they do not check outputs)."""
    folder = tmp / "models"
    folder.mkdir()
    for name in models:
        for suffix in (".pte", ".inputs.json"):
            source = MODELS / (name + suffix)
            if source.is_file():
                os.symlink(source, folder / (name + suffix))
    return folder


def measure(args, config, models, folder, tmp):
    """Rows for every model built with one configuration: size, QEMU counts and (when a
    Verilator model for its ISA is given) CV32E40P cycles."""
    rows = []
    qemu_dir = tmp / ("qemu-" + config.key)
    cv_dir = tmp / ("cv32e40p-" + config.key)
    print("%s: building %d models ..." % (config.name, len(models)), file=sys.stderr,
          flush=True)
    scons(qemu_dir, "board=qemu", "model=%s" % folder, *config.options())
    verilator = args.verilator_fpu if config.isa == "rv32imfc" else args.verilator
    for name in models:
        elf = find_elf(qemu_dir, name)
        row = {"model": name, "config": config, "size": berkeley_size(elf)}
        plain, totals = [], []
        for _ in range(args.runs):
            out, _ = run_qemu(elf, tmp, trace=False)
            plain.append(phases(out))
            out, total = run_qemu(elf, tmp, trace=True)
            totals.append(total)
            if phases(out) != plain[-1]:
                print("warning: %s %s: phase counts differ with -singlestep"
                      % (name, config.name), file=sys.stderr)
        row["qemu"] = {p: median_of([r.get(p) for r in plain]) for p in plain[0]}
        row["qemu_total"] = median_of(totals)

        if verilator:
            print("%s: %s on the Verilator model ..." % (config.name, name), file=sys.stderr,
                  flush=True)
            model = folder / ("%s.pte" % name)
            inputs = folder / ("%s.inputs.json" % name)
            given = ["inputs=%s" % inputs] if inputs.is_file() else []
            runs = []
            for _ in range(args.runs):
                out = scons(cv_dir, "run", "board=cv32e40p", "verilator_model=%s" % verilator,
                            "model=%s" % model, *given, *config.options())
                match = TOTAL_RE.search(out)
                if not match:
                    raise Failed("no `Cycles: N` from the testbench for %s %s:\n%s"
                                 % (name, config.name, out[-2000:]))
                runs.append((int(match.group(1)), phases(out)))
            row["verilator_total"] = median_of([t for t, _ in runs])
            row["verilator"] = {p: median_of([ph.get(p) for _, ph in runs]) for p in runs[0][1]}
        rows.append(row)
    return rows


def count(value):
    number, varied = value
    return ("~" if varied else "") + "%d" % number


def table(title, head, lines, left=1):
    """Print a table: the first `left` columns left-aligned, the others right-aligned."""
    print(title)
    widths = [max(len(str(c)) for c in column) for column in zip(head, *lines)]

    def line(cells):
        return "  ".join(("%-*s" if i < left else "%*s") % (w, c)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    print(line(head))
    for cells in lines:
        print(line(cells))
    print()


def phase_table(title, rows, counts_key, total_key):
    lines = []
    for row in rows:
        if counts_key not in row:
            continue
        counts, total = row[counts_key], row[total_key]
        known = [counts[p][0] for p in PHASES if p in counts]
        lines.append([row["model"], row["config"].name, count(total)]
                     + [count(counts[p]) if p in counts else "-" for p in PHASES]
                     + ["%d" % (total[0] - sum(known))])
    if lines:
        table(title, ["model", "configuration", "total"] + list(PHASES) + ["other"], lines,
              left=2)


def ratio(new, old):
    return "1/%.1f" % (old / new) if new else "-"


def find(rows, model, **config):
    for row in rows:
        if row["model"] == model and all(getattr(row["config"], k) == v
                                         for k, v in config.items()):
            return row
    return None


def toolchain_table(rows, models, toolchains, build_type):
    """The toolchains side by side: the default kernels, rv32imc."""
    if len(toolchains) < 2:
        return
    lines = []
    for model in models:
        for name in toolchains:
            row = find(rows, model, toolchain=name, kernels="corev", isa="rv32imc",
                       build_type=build_type)
            if row is not None:
                text, data, bss = row["size"]
                lines.append([model, name, text, data + bss, count(row["qemu_total"]),
                              count(row["qemu"]["execute"]),
                              count(row["verilator_total"]) if "verilator_total" in row
                              else "-"])
    table("Toolchains side by side (%s, rv32imc, CORE-V kernels)" % build_type,
          ["model", "toolchain", "text", "data+bss", "QEMU total", "QEMU execute",
           "CV32E40P cycles"], lines, left=2)


def kernels_table(rows, models, toolchain, isas, build_type):
    """Portable versus CORE-V kernels, per ISA: execute counts, their ratio, text."""
    head = ["model", "isa", "QEMU execute portable", "QEMU execute CORE-V", "ratio",
            "CV32E40P execute portable", "CV32E40P execute CORE-V", "ratio",
            "text portable", "text CORE-V"]
    lines = []
    for isa in isas:
        for model in models:
            portable = find(rows, model, toolchain=toolchain, kernels="portable", isa=isa,
                            build_type=build_type)
            corev = find(rows, model, toolchain=toolchain, kernels="corev", isa=isa,
                         build_type=build_type)
            if portable is None or corev is None:
                continue
            cells = [model, isa, count(portable["qemu"]["execute"]),
                     count(corev["qemu"]["execute"]),
                     ratio(corev["qemu"]["execute"][0], portable["qemu"]["execute"][0])]
            if "verilator" in portable and "verilator" in corev:
                old, new = portable["verilator"]["execute"], corev["verilator"]["execute"]
                cells += [count(old), count(new), ratio(new[0], old[0])]
            else:
                cells += ["-", "-", "-"]
            cells += [portable["size"][0], corev["size"][0]]
            lines.append(cells)
    if lines:
        table("Portable versus CORE-V kernels (%s, %s; execute: QEMU instructions, "
              "CV32E40P cycles)" % (toolchain, build_type), head, lines, left=2)


def present_toolchains():
    """The toolchains of TOOLCHAINS found here, by name, with the gcc each one runs."""
    found = {}
    for name, prefix in TOOLCHAINS.items():
        gcc = shutil.which(prefix + "gcc")
        if gcc is None and prefix == corev_gcc.PREFIX and corev_gcc.installed_prefix():
            gcc = corev_gcc.installed_prefix() + "gcc"
        if gcc:
            found[name] = gcc
    return found


def configurations(args, toolchains):
    """The first toolchain with every kernel library and ISA; the others as the default
    build (CORE-V kernels, rv32imc)."""
    configs = []
    for build_type in args.build_types:
        for i, toolchain in enumerate(toolchains):
            for isa in args.isas if i == 0 else ["rv32imc"]:
                for kernels in args.kernels if i == 0 else ["corev"]:
                    configs.append(Config(toolchain, kernels, isa, build_type))
    return configs


def words(text):
    return [word.strip() for word in text.split(",") if word.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="runs of each simulation (3)")
    ap.add_argument("--verilator", default=None,
                    help="Vtb_top_verilator to run rv32imc firmware on (default: "
                    "verilator_model in the user settings; --verilator '': QEMU only)")
    ap.add_argument("--verilator-fpu", default="",
                    help="an FPU-enabled Vtb_top_verilator to run rv32imfc firmware on "
                    "(default: none)")
    ap.add_argument("--models", default="add,mlp,cnn,qmlp",
                    help="model names in examples/models (add,mlp,cnn,qmlp; 'all': every "
                    ".pte there)")
    ap.add_argument("--toolchains", default=",".join(TOOLCHAINS),
                    help="(%s: those present)" % ",".join(TOOLCHAINS))
    ap.add_argument("--kernels", default="portable,corev", help="(portable,corev)")
    ap.add_argument("--isas", default="rv32imc,rv32imfc", help="(rv32imc,rv32imfc)")
    ap.add_argument("--build-types", default="Release", help="(Release; e.g. Release,Debug)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary build_dir")
    args = ap.parse_args()
    args.build_types = words(args.build_types)
    args.kernels = words(args.kernels)
    args.isas = words(args.isas)

    root = executorch_root()
    if root is None:
        return 1
    for tool in (SIZE, QEMU):
        if shutil.which(tool) is None:
            print("missing %s (./setup.sh installs it)" % tool, file=sys.stderr)
            return 1
    present = present_toolchains()
    toolchains = [t for t in words(args.toolchains) if t in present]
    for name in words(args.toolchains):
        if name not in TOOLCHAINS:
            print("unknown toolchain %s (known: %s)" % (name, ", ".join(TOOLCHAINS)),
                  file=sys.stderr)
            return 1
        if name not in present:
            print("skipping toolchain %s: %sgcc not found" % (name, TOOLCHAINS[name]))
    if not toolchains:
        print("none of the toolchains %s found (./setup.sh installs them)" % args.toolchains,
              file=sys.stderr)
        return 1
    available = sorted(path.stem for path in MODELS.glob("*.pte"))
    wanted = available if args.models == "all" else words(args.models)
    models = []
    for name in wanted:
        if name not in available:
            print("skipping %s: not in %s" % (name, MODELS.relative_to(REPO)))
        else:
            models.append(name)
    if not models:
        print("skipping: none of the models %s in %s" % (args.models, MODELS.relative_to(REPO)))
        return 0
    verilator_source = "--verilator"
    if args.verilator is None:
        args.verilator = settings.read().get("verilator_model") or ""
        verilator_source = "verilator_model in the user settings"
    for flag in ("verilator", "verilator_fpu"):
        path = getattr(args, flag)
        if path:
            path = os.path.abspath(os.path.expanduser(path))
            if not os.access(path, os.X_OK):
                print("the Verilator model %s is not an executable file" % path,
                      file=sys.stderr)
                return 1
            setattr(args, flag, path)

    tmp = Path(tempfile.mkdtemp(prefix="firmware-bench-"))
    rows = []
    try:
        folder = model_set(models, tmp)
        for config in configurations(args, toolchains):
            rows += measure(args, config, models, folder, tmp)
    except Failed as error:
        print(error, file=sys.stderr)
        return 1
    finally:
        if args.keep:
            print("kept %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)

    facts = host_rows() + [("SCons", scons_version())] + [
        ("toolchain " + name, tool_version(present[name])) for name in toolchains] + [
        ("QEMU", tool_version(QEMU)),
        ("Verilator rv32imc", "%s (from %s)" % (args.verilator, verilator_source)
         if args.verilator
         else "none configured (--verilator PATH or verilator_model in the user settings)"),
        ("Verilator rv32imfc", args.verilator_fpu or "none (--verilator-fpu PATH)"),
        ("builds", "board=qemu (and board=cv32e40p for Verilator), inputs from "
         "examples/models/NAME.inputs.json, one model-set build per configuration"),
        ("runs", "%d of each simulation, median" % args.runs),
    ]
    print_rows(facts)
    print()
    table("Size of the board=qemu ELF, bytes (Berkeley: text includes rodata and the model)",
          ["model", "configuration", "text", "data", "bss"],
          [[row["model"], row["config"].name] + list(row["size"]) for row in rows], left=2)
    phase_table("QEMU instructions (total: counted from -d exec with -singlestep; phases: "
                "the runner's mcycle, -icount shift=0)", rows, "qemu", "qemu_total")
    phase_table("CV32E40P cycles in the Verilator testbench (total: the testbench's "
                "`Cycles: N`)", rows, "verilator", "verilator_total")
    for build_type in args.build_types:
        toolchain_table(rows, models, toolchains, build_type)
        kernels_table(rows, models, toolchains[0], args.isas, build_type)
    print("configuration: toolchain, kernel library, ISA, build type. The ratio is "
          "CORE-V / portable.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
