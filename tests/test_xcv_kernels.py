"""The CORE-V kernels that stand in for CMSIS-NN functions (kernels/corev/cmsis_nn), against
CMSIS-NN's own C on the same seeded inputs (tests/fixtures/xcv_kernels/main.c: odd sizes,
channel counts that are not multiples of 4, strides, dilation, padding, batches, and in a
second pass requantization parameters off the quantizers' fast paths):

- the RV32IMC kernels on QEMU (CMSIS-NN tree needed);
- the CORE-V extension kernels (isa=rv32imc_xcv) on the PULP testbench, which `scons run`
  builds from the user's core-v-verif and cv32e40p checkouts;
- MLPerf Tiny's four networks (examples/models/tiny) end to end with isa=rv32imc_xcv on that
  testbench: each matches its expected outputs, and prints exactly what the rv32imc build
  prints on QEMU.

Skips with the reason without a CMSIS-NN tree, a toolchain, QEMU or the checkouts.
"""

import re
import shutil
from pathlib import Path

import pytest

from etcorev.pte import model_io
from sconsrun import NO_CHECKOUTS, REPO, scons, checkouts_for_testbench

FIXTURE = REPO / "tests" / "fixtures" / "xcv_kernels"
KERNELS = REPO / "kernels" / "corev" / "cmsis_nn"
TINY = REPO / "examples" / "models" / "tiny"
SUMMARY = re.compile(r"^xcv_kernels: (\d+) cases, (\d+) mismatching bytes$", re.M)

needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 not installed (qemu-system-misc)")
needs_checkouts = pytest.mark.skipif(checkouts_for_testbench() is None, reason=NO_CHECKOUTS)


@pytest.fixture(scope="module")
def harness(cmsis_nn, tmp_path_factory):
    """The fixture's app directory: its files, cmsis/ with CMSIS-NN's headers and sources
    side by side (the ref_*.c files include them under other names), and corev/ with
    kernels/corev/cmsis_nn and CMSIS-NN's headers (our kernels include them by name)."""
    app = tmp_path_factory.mktemp("apps") / "xcv_kernels"
    shutil.copytree(FIXTURE, app)
    include, source = Path(cmsis_nn) / "Include", Path(cmsis_nn) / "Source"
    for part, kernels in (("cmsis", source.rglob("*.c")), ("corev", KERNELS.iterdir())):
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


@needs_qemu
def test_rv32imc_kernels_give_cmsis_nns_bytes(harness, tmp_path):
    result = scons("board=qemu", "isa=rv32imc", "app=%s" % harness, "run", "timeout=600",
                   build_dir=tmp_path)
    assert "kernels: RV32IMC" in result.stdout.splitlines(), result.stdout[-3000:]
    cases, bad = _summary(result)
    assert cases > 50 and bad == 0, _mismatches(result)
    assert result.returncode == 0, result.stdout[-3000:]


@needs_checkouts
def test_xcv_kernels_give_cmsis_nns_bytes_on_the_pulp_testbench(harness, tmp_path):
    result = scons("board=cv32e40p", "isa=rv32imc_xcv", "verilator_model=", "app=%s" % harness,
                   "run", "verbose=1", "timeout=1800", "max_cycles=400000000",
                   build_dir=tmp_path, timeout=3600)
    assert "/testbench/pulp/Vtb_top_verilator +firmware=" in result.stdout, \
        result.stdout[-3000:]
    assert "kernels: CORE-V extensions (COREV_XCV)" in result.stdout.splitlines(), \
        result.stdout[-3000:]
    cases, bad = _summary(result)
    assert cases > 50 and bad == 0, _mismatches(result)
    assert result.returncode == 0, result.stdout[-3000:]


def _outputs(result):
    """The printed outputs of each model of a model set's run, in run order."""
    return [model_io.parse_outputs(section)
            for section in re.split(r"(?m)^Cycles startup: ", result.stdout)[1:]]


@needs_qemu
@needs_checkouts
def test_tiny_networks_with_xcv_print_what_rv32imc_prints(et_root, cmsis_nn, tmp_path):
    names = sorted(p.stem for p in TINY.glob("*.pte"))
    xcv = scons("board=cv32e40p", "isa=rv32imc_xcv", "verilator_model=", "model=%s" % TINY,
                "cmsis_nn=%s" % cmsis_nn, "run", "timeout=1800", build_dir=tmp_path / "xcv",
                timeout=3600)
    assert xcv.returncode == 0, xcv.stdout[-4000:]
    plain = scons("board=qemu", "isa=rv32imc", "model=%s" % TINY, "cmsis_nn=%s" % cmsis_nn,
                  "run", "timeout=900", build_dir=tmp_path / "plain")
    assert plain.returncode == 0, plain.stdout[-4000:]
    ours, theirs = _outputs(xcv), _outputs(plain)
    assert len(ours) == len(theirs) == len(names), (len(ours), len(theirs))
    for name, a, b in zip(names, ours, theirs):
        assert a and a == b, name
