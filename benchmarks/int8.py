#!/usr/bin/env python3
"""Benchmark: MLPerf Tiny's four int8 networks (examples/models/tiny), through ExecuTorch's
Cortex-M operators over CMSIS-NN, against the same networks through the decomposed path
(quantize, float operator, dequantize: examples/models/tiny/decomposed).

For each network: its MACs (from the program's convolutions and linear layers,
etcorev.pte.macs; both routes must agree), QEMU execute instructions of both routes and
their ratio, CV32E40P execute cycles and MACs per cycle (when a Verilator testbench is
configured: --verilator PATH, else verilator_model in the user settings; --no-verilator
skips it), and the firmware's footprint: text, read-only data (the model among it),
RAM (data + bss), and of that the planned memory (activations and the kernels' scratch
buffers), the scratch buffers alone and the method pool. Every run checks the outputs
against NAME.expected.json; a failure stops the benchmark. The counts are deterministic
(one run each).

    .venv/bin/python benchmarks/int8.py [--toolchain PREFIX] [--corev-kernels 0|1]
                                        [--verilator PATH | --no-verilator]
                                        [--isa rv32imc] [--only-int8]
                                        [--xcv [--pulp-verilator PATH]]

--xcv adds the CORE-V extension table: each network built with isa=rv32imc and with
isa=rv32imc_xcv, both run on the PULP testbench (--pulp-verilator PATH, else
`scons testbench-pulp` builds it into build/testbench/pulp from core_v_verif= and
cv32e40p=): execute cycles of both, MACs per cycle, the speed-up, text sizes, and whether
the two print the same outputs.
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from checkout import REPO, Failed, scons
sys.path.insert(0, str(REPO / "site_scons"))

from etcorev import pte  # noqa: E402
from etcorev.scons import settings
from etcorev.image import memory_usage
from etcorev.pte import macs, model_io
from etcorev.run import runner_config
from machine import host_rows, print_rows, scons_version  # noqa: E402

TINY = REPO / "examples" / "models" / "tiny"
DECOMPOSED = TINY / "decomposed"
NETWORKS = ("ds_cnn", "mobilenet_v1", "resnet8", "autoencoder")
ROW = re.compile(r"^(\w+)\s+(ok|FAIL \d+)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+", re.M)



def execute_counts(output):
    """{model: execute count} from a model set's summary table."""
    summary = output[output.index("Summary ("):]
    return {m.group(1): int(m.group(6)) for m in ROW.finditer(summary)}


def run_set(build_dir, directory, options):
    return execute_counts(scons(build_dir, "model=%s" % directory, "run", "timeout=3600",
                                *options))


def run_each(build_dir, options):
    """{network: (execute cycles, printed outputs, its ELF)}, one `scons run` each (a model
    set would run them all before the first count is known)."""
    found = {}
    for name in NETWORKS:
        out = scons(build_dir, "model=%s" % (TINY / ("%s.pte" % name)), "run", "timeout=3600",
                    *options)
        cycles = int(re.search(r"^Cycles execute: (\d+)$", out, re.M).group(1))
        elf = next(Path(build_dir).glob("*/%s/executor_runner.elf" % name))
        found[name] = (cycles, model_io.parse_outputs(out), elf)
    return found


def pulp_testbench(given):
    """The PULP testbench: given, or built by `scons testbench-pulp` (default build_dir)."""
    if given:
        return given
    proc = subprocess.run([sys.executable, "-m", "SCons", "-Q", "testbench-pulp"], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        raise Failed("scons testbench-pulp failed (core_v_verif= and cv32e40p= set?):\n%s"
                     % "\n".join(proc.stdout.splitlines()[-10:]))
    return str(REPO / "build" / "testbench" / "pulp" / "Vtb_top_verilator")


def xcv_table(tmp, model, options):
    """Rows of the CORE-V extension table: rv32imc and rv32imc_xcv on one PULP testbench."""
    on_pulp = ["board=cv32e40p", "verilator_model=%s" % model] + options
    plain = run_each(tmp / "pulp-rv32imc", ["isa=rv32imc"] + on_pulp)
    xcv = run_each(tmp / "pulp-xcv", ["isa=rv32imc_xcv"] + on_pulp)
    rows = [("network", "MACs", "rv32imc cycles", "_xcv cycles", "_xcv MACs/cycle",
             "speed-up", "rv32imc text", "_xcv text", "same outputs")]
    for name in NETWORKS:
        count = macs.program_macs(pte.read_pte(TINY / ("%s.pte" % name)))
        (a, out_a, elf_a), (b, out_b, elf_b) = plain[name], xcv[name]
        rows.append((name, "{:,}".format(count), "{:,}".format(a), "{:,}".format(b),
                     "%.3f" % (count / b), "%.2fx" % (a / b),
                     "{:,}".format(footprint(elf_a)[0]), "{:,}".format(footprint(elf_b)[0]),
                     "yes" if out_a == out_b and out_a else "NO"))
    return rows


def print_table(rows):
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print()
    for row in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, widths))))


def scratch_bytes(program, et_root):
    """Bytes of the tensors the Cortex-M kernels take as `Tensor scratch` (CMSIS-NN's
    working buffers, sized at export and planned with the activations)."""
    import yaml
    positions = {}
    entries = yaml.safe_load((Path(et_root) / "backends" / "cortex_m" / "ops" /
                              "operators.yaml").read_text())
    for entry in entries:
        name, args = entry["func"].split("(", 1)
        names = [a.strip().split(" ")[-1] for a in args.split(")")[0].replace("*,", "").split(",")]
        if "scratch" in names:
            positions[name.strip()] = names.index("scratch")
    total = 0
    for op, sizes in program.methods[0].kernel_calls:
        if op in positions and sizes[positions[op]] is not None:
            total += macs._numel(sizes[positions[op]])       # int8: one byte each
    return total


def footprint(elf):
    """(text, rodata, data + bss) of an ELF, by section flags."""
    from elftools.elf.elffile import ELFFile
    text = rodata = ram = 0
    with open(elf, "rb") as f:
        for section in ELFFile(f).iter_sections():
            flags, size = section["sh_flags"], section["sh_size"]
            if not flags & 0x2:                          # SHF_ALLOC
                continue
            if flags & 0x4:                              # SHF_EXECINSTR
                text += size
            elif flags & 0x1:                            # SHF_WRITE: data, bss, stack
                ram += size
            else:
                rodata += size
    return text, rodata, ram


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toolchain", default="", help="toolchain= (default: the build's)")
    parser.add_argument("--corev-kernels", type=int, default=1, choices=(0, 1),
                        help="corev_kernels= of the int8 builds (0: CMSIS-NN's own C)")
    parser.add_argument("--isa", default="rv32imc")
    parser.add_argument("--verilator", help="Vtb_top_verilator (default: the user settings')")
    parser.add_argument("--no-verilator", action="store_true")
    parser.add_argument("--xcv", action="store_true",
                        help="add rv32imc against rv32imc_xcv on the PULP testbench")
    parser.add_argument("--pulp-verilator", help="the PULP testbench (default: scons "
                        "testbench-pulp builds it)")
    parser.add_argument("--only-int8", action="store_true",
                        help="skip the decomposed baseline (QEMU, 1.5 minutes)")
    args = parser.parse_args(argv)
    user = settings.read()
    verilator = None if args.no_verilator else (args.verilator or user.get("verilator_model"))
    et_root = user.get("executorch")
    common = ["isa=%s" % args.isa] + (["toolchain=%s" % args.toolchain] if args.toolchain else [])
    int8 = common + ["corev_kernels=%d" % args.corev_kernels]

    print_rows(host_rows([("scons", scons_version()),
                          ("configuration", " ".join(int8)),
                          ("Verilator testbench", verilator or "none")]))
    with tempfile.TemporaryDirectory(prefix="corev-int8-") as tmp:
        tmp = Path(tmp)
        qemu = run_set(tmp / "qemu", TINY, ["board=qemu"] + int8)
        baseline = {} if args.only_int8 else run_set(tmp / "decomposed", DECOMPOSED,
                                                     ["board=qemu"] + common)
        rtl = {}
        if verilator:
            runs = run_each(tmp / "rtl", ["board=cv32e40p", "verilator_model=%s" % verilator]
                            + int8)
            rtl = {name: cycles for name, (cycles, _, _) in runs.items()}
        rows = [("network", "MACs", "QEMU int8", "QEMU decomposed", "ratio",
                 "CV32E40P cycles", "MACs/cycle", "text", "rodata", "RAM", "planned",
                 "scratch", "method pool")]
        for name in NETWORKS:
            program = pte.read_pte(TINY / ("%s.pte" % name))
            count = macs.program_macs(program)
            if not args.only_int8:
                other = macs.program_macs(pte.read_pte(DECOMPOSED / ("%s.pte" % name)))
                if other != count:
                    raise Failed("%s: %d MACs int8, %d decomposed" % (name, count, other))
            elf = next((tmp / "qemu").glob("*/%s/executor_runner.elf" % name))
            text, rodata, ram = footprint(elf)
            env = {"method_pool": 0, "temp_pool": 0}
            planned, method_pool, _ = runner_config.pool_sizes(program.methods[0], env)
            cycles = rtl.get(name)
            rows.append((
                name, "{:,}".format(count), "{:,}".format(qemu[name]),
                "{:,}".format(baseline[name]) if name in baseline else "-",
                "1/%.1f" % (baseline[name] / qemu[name]) if name in baseline else "-",
                "{:,}".format(cycles) if cycles else "-",
                "%.3f" % (count / cycles) if cycles else "-",
                "{:,}".format(text), "{:,}".format(rodata), "{:,}".format(ram),
                "{:,}".format(planned),
                "{:,}".format(scratch_bytes(program, et_root)) if et_root else "-",
                "{:,}".format(method_pool)))
        xcv = xcv_table(tmp, pulp_testbench(args.pulp_verilator),
                        ["corev_kernels=1"] + common[1:]) if args.xcv else None
    print_table(rows)
    print("\nQEMU: instructions of Method::execute (mcycle under -icount). CV32E40P: its "
          "execute cycles on the testbench. Sizes in bytes, of the board=qemu image; "
          "planned memory includes the scratch buffers.")
    if xcv:
        print_table(xcv)
        print("\nBoth on the PULP testbench (CV32E40P with COREV_PULP): execute cycles; text "
              "of the board=cv32e40p image; same outputs: every printed value equal.")
        if any(row[-1] != "yes" for row in xcv[1:]):
            raise Failed("rv32imc and rv32imc_xcv print different outputs")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as error:
        print("int8 benchmark failed: %s" % error, file=sys.stderr)
        sys.exit(1)
