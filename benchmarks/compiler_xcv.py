#!/usr/bin/env python3
"""Benchmark: what a compiler that knows the CORE-V extensions gains beyond our kernels.

Our kernels use the extensions (isa=rv32imc_xcv: cv.sdotsp.b, hardware loops,
post-increment loads) as `.insn` words, which any assembler takes; the rest of the firmware
(the runtime, the other kernels, the glue) is compiled for rv32imc. GCC 14 and later take
some CORE-V extensions in -march (xcvmac, xcvalu, xcvbi, xcvelw, xcvsimd) and generate
some of them from plain C: cv.mac for a multiply-add, branches against an immediate,
min/max/clip. This script measures what that gains on the networks, on the PULP testbench:

    .venv/bin/python benchmarks/compiler_xcv.py --toolchain PREFIX [--pulp-verilator PATH]
                      [--extensions _xcvmac_xcvalu_xcvbi] [--small] [--network NAME]

Each network is built with isa=rv32imc_xcv three times: with the build's own toolchain
(the reference), with --toolchain (a GCC that knows the extensions) as it is, and with
--toolchain and -march=rv32imc<EXTENSIONS> on every compile (a launcher script rewrites
the flag: the build's -march stays rv32imc for its link and library selection). It prints
the execute cycles of each, the gain of the extensions over the same compiler without
them, text sizes, how many cv.* instructions the compiler added (objdump of --toolchain
disassembles both images; our kernels' .insn words count in both), and whether every
build printed the same outputs. One run each: the counts are deterministic.

LTO stays on as in a release build: the compiles' -march travels in the LTO objects.
"""

import argparse
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import int8
from checkout import Failed
from int8 import footprint, network_pte, print_table, run_each, testbench
from machine import host_rows, print_rows, scons_version, tool_version
from etcorev.pte import macs  # noqa: E402  (int8 put site_scons on sys.path)
from etcorev import pte  # noqa: E402

LAUNCHER = """#!/bin/sh
# benchmarks/compiler_xcv.py: every compile's -march=rv32imc gains %(extensions)s.
for arg; do
  shift
  if [ "$arg" = "-march=rv32imc" ]; then arg="-march=rv32imc%(extensions)s"; fi
  set -- "$@" "$arg"
done
exec "$@"
"""


def check_compiler(prefix, extensions):
    """The compiler takes -march=rv32imc<extensions>, or Failed saying so."""
    argv = [prefix + "gcc", "-misa-spec=2.2", "-march=rv32imc" + extensions, "-mabi=ilp32",
            "-x", "c", "-c", "-o", "/dev/null", "-"]
    try:
        proc = subprocess.run(argv, input="int f(int a, int b, int c) { return a * b + c; }\n",
                              capture_output=True, text=True)
    except OSError as error:
        raise Failed("%s: %s" % (argv[0], error))
    if proc.returncode:
        raise Failed("%s does not take -march=rv32imc%s (GCC 14 or later knows xcvmac, "
                     "xcvalu, xcvbi, xcvelw, xcvsimd):\n%s"
                     % (argv[0], extensions, proc.stderr.strip()))


def cv_instructions(prefix, elf):
    """cv.* instructions in an ELF's code, by --toolchain's objdump."""
    out = subprocess.run([prefix + "objdump", "-d", "--no-show-raw-insn", str(elf)],
                         capture_output=True, text=True, check=True).stdout
    return len(re.findall(r"^\s+[0-9a-f]+:\s+cv\.", out, re.M))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toolchain", required=True,
                        help="prefix of a GCC that knows the CORE-V extensions (GCC 14+)")
    parser.add_argument("--base-toolchain", default="",
                        help="the reference's toolchain= (default: the build's)")
    parser.add_argument("--extensions", default="_xcvmac_xcvalu_xcvbi",
                        help="what -march=rv32imc gains (default: %(default)s)")
    parser.add_argument("--pulp-verilator", help="the PULP testbench (default: scons "
                        "testbench-pulp builds it)")
    parser.add_argument("--small", action="store_true", help="the smaller networks")
    parser.add_argument("--network", action="append", choices=int8.NETWORKS + int8.SMALL,
                        help="measure only this network (repeatable)")
    args = parser.parse_args(argv)
    int8.NETWORKS = tuple(args.network or (int8.SMALL if args.small else int8.NETWORKS))
    check_compiler(args.toolchain, args.extensions)
    pulp = testbench("pulp", args.pulp_verilator)
    print_rows(host_rows([("scons", scons_version()),
                          ("toolchain", tool_version(args.toolchain + "gcc")),
                          ("extensions", "-march=rv32imc" + args.extensions),
                          ("PULP testbench", pulp)]))
    common = ["board=cv32e40p", "isa=rv32imc_xcv", "corev_kernels=1",
              "verilator_model=%s" % pulp]
    with tempfile.TemporaryDirectory(prefix="corev-compiler-xcv-") as tmp:
        tmp = Path(tmp)
        launcher = tmp / "march.sh"
        launcher.write_text(LAUNCHER % {"extensions": args.extensions})
        launcher.chmod(0o755)
        base = run_each(tmp / "base", common + (
            ["toolchain=%s" % args.base_toolchain] if args.base_toolchain else []))
        plain = run_each(tmp / "plain", common + ["toolchain=%s" % args.toolchain])
        xcv = run_each(tmp / "xcv", common + ["toolchain=%s" % args.toolchain,
                                              "launcher=%s" % shlex.quote(str(launcher))])
        rows = [("network", "MACs", "reference", "GCC", "GCC + ext", "ext gain", "MAC/cycle",
                 "text", "text + ext", "cv.* added", "same outputs")]
        for name in int8.NETWORKS:
            count = macs.program_macs(pte.read_pte(network_pte(name)))
            (c0, o0, _), (c1, o1, e1), (c2, o2, e2) = base[name], plain[name], xcv[name]
            rows.append((name, "{:,}".format(count), "{:,}".format(c0), "{:,}".format(c1),
                         "{:,}".format(c2), "%+.2f%%" % (100.0 * (c1 - c2) / c1),
                         "%.3f" % (count / c2), "{:,}".format(footprint(e1)[0]),
                         "{:,}".format(footprint(e2)[0]),
                         "{:,}".format(cv_instructions(args.toolchain, e2)
                                       - cv_instructions(args.toolchain, e1)),
                         "yes" if o0 == o1 == o2 and o0 else "NO"))
    print_table(rows)
    print("\nExecute cycles on the PULP testbench, isa=rv32imc_xcv (our kernels' .insn "
          "extensions in every column). reference: the build's toolchain; GCC: --toolchain; "
          "GCC + ext: --toolchain with -march=rv32imc%s on every compile; ext gain: its "
          "cycles saved over GCC's; text of the board=cv32e40p image."
          % args.extensions)
    if any(row[-1] != "yes" for row in rows[1:]):
        raise Failed("the builds print different outputs")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as error:
        print("compiler benchmark failed: %s" % error, file=sys.stderr)
        sys.exit(1)
