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

--layers adds a table per network (and per ISA, with --xcv): each kernel call of one
execution with its operator, shape, MACs, cycles, MACs per cycle and share of execute,
then the shares of execute in MAC kernels (convolutions, depthwise, linear: their
requantization and im2col included), in the other kernels (quantize, dequantize, add,
pooling) and in the runtime between them (execute without a profiler minus the kernels).
The cycles are the kernel events (native_call_<op>) of a profile=etdump build on the same
testbench, read with ExecuTorch's Inspector (the export extra): profile=1 counts the same
events, but sums them per operator.

--network NAME (repeatable) measures only those networks. --small measures two smaller
networks of the same kinds instead (examples/models/tiny/small: a DS-CNN of 48 channels and
three blocks, a two-stage residual net on 24x24 RGB), where a kernel's fixed costs per call
weigh more; they have no decomposed baseline.
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
# Smaller networks of the same kinds (examples/models/tiny/small, no decomposed baseline).
SMALL = ("ds_cnn_small", "resnet_small")
ROW = re.compile(r"^(\w+)\s+(ok|FAIL \d+)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+", re.M)


def network_pte(name, directory=TINY):
    return directory / ("small" if name in SMALL else "") / ("%s.pte" % name)


def execute_counts(output):
    """{model: execute count} from a model set's summary table."""
    summary = output[output.index("Summary ("):]
    return {m.group(1): int(m.group(6)) for m in ROW.finditer(summary)}


def run_set(build_dir, directory, options, names=None):
    names = NETWORKS if names is None else names
    if not names:
        return {}
    models = ",".join(str(network_pte(name, directory)) for name in names)
    out = scons(build_dir, "model=%s" % models, "run", "timeout=3600", *options)
    if len(names) == 1:                         # one model prints no summary table
        return {names[0]: int(re.search(r"^Cycles execute: (\d+)$", out, re.M).group(1))}
    return execute_counts(out)


def run_each(build_dir, options):
    """{network: (execute cycles, printed outputs, its ELF)}, one `scons run` each (a model
    set would run them all before the first count is known)."""
    found = {}
    for name in NETWORKS:
        out = scons(build_dir, "model=%s" % network_pte(name), "run", "timeout=3600",
                    *options)
        cycles = int(re.search(r"^Cycles execute: (\d+)$", out, re.M).group(1))
        elf = next(Path(build_dir).glob("*/%s/executor_runner.elf" % name))
        found[name] = (cycles, model_io.parse_outputs(out), elf)
    return found


MAC_OPERATORS = ("cortex_m::quantized_conv2d.out", "cortex_m::quantized_depthwise_conv2d.out",
                 "cortex_m::quantized_linear.out", "cortex_m::quantized_batch_matmul.out")


def _short(op):
    """cortex_m::quantized_conv2d.out -> quantized_conv2d"""
    return op.split("::", 1)[-1].rsplit(".", 1)[0]


def _hwc(sizes):
    """NCHW sizes as HxWxC (or the sizes as they are)."""
    if sizes is not None and len(sizes) == 4:
        return "%dx%dx%d" % (sizes[2], sizes[3], sizes[1])
    return "x".join(map(str, sizes or ()))


def layer_shape(op, sizes):
    """A kernel call's shape, as a reader of the table wants it: in -> out, the kernel."""
    out = sizes[-1]
    if op == "cortex_m::quantized_conv2d.out":          # weight OHWI
        return "%s %dx%d -> %s" % (_hwc(sizes[0]), sizes[1][1], sizes[1][2], _hwc(out))
    if op == "cortex_m::quantized_depthwise_conv2d.out":   # weight 1HWO
        return "%s dw %dx%d -> %s" % (_hwc(sizes[0]), sizes[1][1], sizes[1][2], _hwc(out))
    if op == "cortex_m::quantized_linear.out":
        return "%d -> %d" % (sizes[1][-1], sizes[1][0])
    return "%s -> %s" % (_hwc(sizes[0]), _hwc(out))


def etdump_kernels(path):
    """Cycles of each kernel call of one execution, in execution order: the
    registration's native_call_<op> events of the ETDump (the kernel alone, as
    profile=1's `kernel` records count it), read with ExecuTorch's Inspector."""
    import warnings
    warnings.simplefilter("ignore")
    try:
        from executorch.devtools import Inspector
        from executorch.devtools.inspector import TimeScale
    except ImportError:
        raise Failed("--layers reads the ETDump with ExecuTorch's Inspector: ./setup.sh --export")
    inspector = Inspector(etdump_path=str(path), source_time_scale=TimeScale.CYCLES,
                          target_time_scale=TimeScale.CYCLES)
    block = next(b for b in inspector.event_blocks if b.name == "Execute")
    events = sorted(block.events, key=lambda e: e.start_time[0])
    return [(e.name[len("native_call_"):], int(e.perf_data.raw[0]))
            for e in events if e.name.startswith("native_call_")]


def layer_tables(build_dir, options, executes, where):
    """{network: (rows, summary)}: per kernel call of one execution its cycles from a
    profile=etdump build on the testbench (options name it), beside its shape and MACs
    from the program; executes: {network: execute cycles of the build without a
    profiler} (for the runtime's share: execute minus the kernels)."""
    tables = {}
    for name in NETWORKS:
        scons(build_dir, "model=%s" % network_pte(name), "run", "timeout=3600",
              "profile=etdump", *options)
        etdp = next(Path(build_dir).glob("*-etdump/%s/executor_runner.etdp" % name))
        measured = etdump_kernels(etdp)
        calls = pte.read_pte(network_pte(name)).methods[0].kernel_calls
        if [_short(op) for op, _ in calls] != [_short(op) for op, _ in measured]:
            raise Failed("%s: the ETDump's kernel events are not the program's kernel calls"
                         % name)
        execute = executes[name]
        rows = [("#", "operator", "shape", "MACs", "cycles", "MAC/cycle", "share")]
        mac_cycles = other = 0
        for i, ((op, sizes), (_, cycles)) in enumerate(zip(calls, measured)):
            count = macs.call_macs(op, sizes)
            if op in MAC_OPERATORS:
                mac_cycles += cycles
            else:
                other += cycles
            rows.append((str(i), _short(op), layer_shape(op, sizes),
                         "{:,}".format(count) if count else "",
                         "{:,}".format(cycles), "%.3f" % (count / cycles) if count else "",
                         "%.1f %%" % (100.0 * cycles / execute)))
        runtime = execute - mac_cycles - other
        summary = ("execute %s cycles: MAC kernels %.1f %%, other kernels %.1f %%, runtime "
                   "%.1f %%" % ("{:,}".format(execute), 100.0 * mac_cycles / execute,
                                100.0 * other / execute, 100.0 * runtime / execute))
        tables[name] = (rows, summary)
        print("\n%s, %s: %s" % (name, where, summary))
        print_table(rows)
        sys.stdout.flush()
    return tables


def testbench(variant, given):
    """A testbench variant's model: given, or built by `scons testbench-VARIANT` (default
    build_dir) from core_v_verif= and cv32e40p=."""
    if given:
        return given
    proc = subprocess.run([sys.executable, "-m", "SCons", "-Q", "testbench-%s" % variant],
                          cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode:
        raise Failed("scons testbench-%s failed (core_v_verif= and cv32e40p= set?):\n%s"
                     % (variant, "\n".join(proc.stdout.splitlines()[-10:])))
    return str(REPO / "build" / "testbench" / variant / "Vtb_top_verilator")


def xcv_table(tmp, model, options):
    """Rows of the CORE-V extension table: rv32imc and rv32imc_xcv on one PULP testbench;
    and {network: _xcv execute cycles}."""
    on_pulp = ["board=cv32e40p", "verilator_model=%s" % model] + options
    plain = run_each(tmp / "pulp-rv32imc", ["isa=rv32imc"] + on_pulp)
    xcv = run_each(tmp / "pulp-xcv", ["isa=rv32imc_xcv"] + on_pulp)
    rows = [("network", "MACs", "rv32imc cycles", "_xcv cycles", "_xcv MACs/cycle",
             "speed-up", "rv32imc text", "_xcv text", "same outputs")]
    for name in NETWORKS:
        count = macs.program_macs(pte.read_pte(network_pte(name)))
        (a, out_a, elf_a), (b, out_b, elf_b) = plain[name], xcv[name]
        rows.append((name, "{:,}".format(count), "{:,}".format(a), "{:,}".format(b),
                     "%.3f" % (count / b), "%.2fx" % (a / b),
                     "{:,}".format(footprint(elf_a)[0]), "{:,}".format(footprint(elf_b)[0]),
                     "yes" if out_a == out_b and out_a else "NO"))
    return rows, {name: cycles for name, (cycles, _, _) in xcv.items()}


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
    global NETWORKS
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
    parser.add_argument("--layers", action="store_true",
                        help="add a per-layer table of each network (profile=etdump on the "
                        "testbench)")
    parser.add_argument("--network", action="append", choices=NETWORKS + SMALL,
                        help="measure only this network (repeatable)")
    parser.add_argument("--small", action="store_true",
                        help="measure the smaller networks (%s) instead of MLPerf Tiny's"
                        % ", ".join(SMALL))
    args = parser.parse_args(argv)
    NETWORKS = tuple(args.network or (SMALL if args.small else NETWORKS))
    user = settings.read()
    verilator = None if args.no_verilator else (args.verilator or user.get("verilator_model")
                                                or testbench("plain", None))
    et_root = user.get("executorch")
    common = ["isa=%s" % args.isa] + (["toolchain=%s" % args.toolchain] if args.toolchain else [])
    int8 = common + ["corev_kernels=%d" % args.corev_kernels]

    print_rows(host_rows([("scons", scons_version()),
                          ("configuration", " ".join(int8)),
                          ("Verilator testbench", verilator or "none")]))
    with tempfile.TemporaryDirectory(prefix="corev-int8-") as tmp:
        tmp = Path(tmp)
        qemu = run_set(tmp / "qemu", TINY, ["board=qemu"] + int8)
        baseline = {} if args.only_int8 else run_set(
            tmp / "decomposed", DECOMPOSED, ["board=qemu"] + common,
            [name for name in NETWORKS if name not in SMALL])
        rtl = {}
        if verilator:
            runs = run_each(tmp / "rtl", ["board=cv32e40p", "verilator_model=%s" % verilator]
                            + int8)
            rtl = {name: cycles for name, (cycles, _, _) in runs.items()}
        layers = {}
        if args.layers and verilator:
            where = "%s on the plain testbench" % args.isa
            layers[where] = layer_tables(
                tmp / "layers", ["board=cv32e40p", "verilator_model=%s" % verilator] + int8,
                rtl, where)
        rows = [("network", "MACs", "QEMU int8", "QEMU decomposed", "ratio",
                 "CV32E40P cycles", "MACs/cycle", "text", "rodata", "RAM", "planned",
                 "scratch", "method pool")]
        for name in NETWORKS:
            program = pte.read_pte(network_pte(name))
            count = macs.program_macs(program)
            if name in baseline:
                other = macs.program_macs(pte.read_pte(network_pte(name, DECOMPOSED)))
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
        xcv = None
        if args.xcv:
            pulp = testbench("pulp", args.pulp_verilator)
            xcv, xcv_cycles = xcv_table(tmp, pulp, ["corev_kernels=1"] + common[1:])
            if args.layers:
                where = "rv32imc_xcv on the PULP testbench"
                layers[where] = layer_tables(
                    tmp / "layers-xcv", ["board=cv32e40p", "verilator_model=%s" % pulp,
                                         "isa=rv32imc_xcv", "corev_kernels=1"] + common[1:],
                    xcv_cycles, where)
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
    if layers:
        print("\nPer layer: cycles of each kernel call (the kernel event of a "
              "profile=etdump build); share: of execute without a profiler.")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as error:
        print("int8 benchmark failed: %s" % error, file=sys.stderr)
        sys.exit(1)
