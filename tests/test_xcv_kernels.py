"""The CORE-V kernels that stand in for CMSIS-NN functions (kernels/corev/cmsis_nn), against
CMSIS-NN's own C on the same seeded inputs (tests/fixtures/xcv_kernels/main.c: odd sizes,
channel counts that are not multiples of 4, strides, dilation, padding, batches, and in a
second pass requantization parameters off the quantizers' fast paths, a third 60 shapes
drawn at random):

- the RV32IMC kernels on QEMU (CMSIS-NN tree needed), and the quantize kernels'
  float32 <-> int8 arithmetic (kernels/corev/corev_quant.h) against the expressions of
  ExecuTorch's kernels;
- the CORE-V extension kernels (isa=rv32imc_xcv) on the PULP testbench, which `scons run`
  builds from the user's core-v-verif and cv32e40p checkouts: their outputs' checksums
  against those of the QEMU run;
- (MLPerf Tiny's networks with isa=rv32imc_xcv on that testbench, against their
  references: tests/test_cortex_m_pulp.py.)

Skips with the reason without a CMSIS-NN tree, a toolchain, QEMU or the checkouts.
"""

import re
import shutil
from pathlib import Path

import pytest

from sconsrun import NO_CHECKOUTS, REPO, scons, checkouts_for_testbench

FIXTURE = REPO / "tests" / "fixtures" / "xcv_kernels"
KERNELS = REPO / "kernels" / "corev" / "cmsis_nn"
QUANT = REPO / "kernels" / "corev" / "corev_quant.h"
SUMMARY = re.compile(r"^xcv_kernels: (\d+) cases, (\d+) mismatching bytes$", re.M)
CASE = re.compile(r"^case (\d+) (.+?): (?:\d+ mismatching, )?checksum ([0-9a-f]{8}), status (-?\d+),",
                  re.M)

needs_checkouts = pytest.mark.skipif(checkouts_for_testbench() is None, reason=NO_CHECKOUTS)


@pytest.fixture(scope="module")
def harness(cmsis_nn, tmp_path_factory):
    """The fixture's app directory: its files, cmsis/ with CMSIS-NN's headers and sources
    side by side (the ref_*.c files include them under other names), and corev/ with
    kernels/corev/cmsis_nn, kernels/corev/corev_quant.h (the quantize kernels'
    arithmetic) and CMSIS-NN's headers (our kernels include them by name)."""
    app = tmp_path_factory.mktemp("apps") / "xcv_kernels"
    shutil.copytree(FIXTURE, app)
    include, source = Path(cmsis_nn) / "Include", Path(cmsis_nn) / "Source"
    for part, kernels in (("cmsis", source.rglob("*.c")),
                          ("corev", list(KERNELS.iterdir()) + [QUANT])):
        shutil.copytree(include, app / part)
        for path in kernels:
            shutil.copy(path, app / part / path.name)
    return app


def _summary(result):
    """(cases, mismatching bytes) the harness printed last."""
    found = SUMMARY.findall(result.stdout)
    assert found, result.stdout[-4000:]
    return tuple(map(int, found[-1]))


def _mismatches(result):
    return [line for line in result.stdout.splitlines()
            if line.startswith("case ") and " 0 mismatching," not in line]


@pytest.fixture(scope="module")
def reference_run(harness, tmp_path_factory):
    """The RV32IMC kernels on QEMU, each case checked against the reference."""
    if not shutil.which("qemu-system-riscv32"):
        pytest.skip("qemu-system-riscv32 not installed (qemu-system-misc)")
    return scons("board=qemu", "isa=rv32imc", "app=%s" % harness, "run", "timeout=600",
                 build_dir=tmp_path_factory.mktemp("reference_run"))


def _case_results(result):
    """[(case number, name, checksum, status)] of the cases a run printed."""
    return CASE.findall(result.stdout)


def test_rv32imc_kernels_give_cmsis_nns_bytes(reference_run):
    result = reference_run
    assert "kernels: RV32IMC" in result.stdout.splitlines(), result.stdout[-3000:]
    cases, bad = _summary(result)
    assert cases > 50 and bad == 0, _mismatches(result)
    assert result.returncode == 0, result.stdout[-3000:]
    assert len(_case_results(result)) == cases, result.stdout[-3000:]


@pytest.mark.long(minutes=1.5)
@needs_checkouts
def test_xcv_kernels_give_cmsis_nns_bytes_on_the_pulp_testbench(harness, reference_run, tmp_path):
    """Ours only on the simulated core (CMSIS-NN's C beside them took most of its cycles):
    each case's checksum and status must be those of the QEMU run, whose bytes were
    compared with the reference's (same seeded inputs, the reference's integer C and
    soft-float expressions compute the same on both)."""
    assert _summary(reference_run)[1] == 0, "the reference run on QEMU failed"
    ours_only = tmp_path / "xcv_kernels"
    shutil.copytree(harness, ours_only)
    (ours_only / "reference.h").write_text("#define WITH_REFERENCE 0\n")
    result = scons("board=cv32e40p", "isa=rv32imc_xcv", "verilator_model=", "app=%s" % ours_only,
                   "run", "verbose=1", "timeout=1800", "max_cycles=200000000",
                   build_dir=tmp_path / "build", timeout=3600)
    assert "/testbench/pulp/Vtb_top_verilator +firmware=" in result.stdout, \
        result.stdout[-3000:]
    assert "kernels: CORE-V extensions (COREV_XCV)" in result.stdout.splitlines(), \
        result.stdout[-3000:]
    assert result.returncode == 0, result.stdout[-3000:]
    assert "cycles cmsis" not in result.stdout, "the reference ran on the testbench"
    expected, got = _case_results(reference_run), _case_results(result)
    assert len(got) == len(expected), result.stdout[-3000:]
    assert got == expected, [(want, have) for want, have in zip(expected, got) if want != have]
