"""Reduction operators with the default kernels, on both toolchains, in QEMU.

ExecuTorch's portable reductions (mean, sum, amax, argmax, var, ...) need the helper
reduce_util.cpp, and so does the portable softmax the CORE-V softmax falls back to. A
model with both takes kernels from two libraries that share that helper: the firmware
must link (it did not: the helper went into the CORE-V library's archive, which the
linker had passed by when the portable archive asked for it) and give the outputs eager
PyTorch computed (NAME.expected.json beside each model; `scons run` checks them).
"""

import re
import shutil
from pathlib import Path

import pytest

from sconsrun import scons

MODELS = Path(__file__).resolve().parent / "models" / "reductions"
NAMES = sorted(p.stem for p in MODELS.glob("*.pte"))

pytestmark = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 not installed (Debian: "
                                       "qemu-system-misc)")


def test_the_models_share_a_helper_between_libraries():
    """What makes these models the reproducer: a CORE-V kernel beside portable
    reductions."""
    from etcorev.pte import read_pte

    assert NAMES == ["layer_norm", "reductions"]
    for name in NAMES:
        ops = set(read_pte(MODELS / ("%s.pte" % name)).operators)
        assert "aten::_softmax.out" in ops, name
        assert ops & {"aten::mean.out", "aten::native_layer_norm.out"}, name


@pytest.mark.long(minutes=1)
def test_reductions_link_and_match_eager(et_root, toolchain, tmp_path):
    result = scons("board=qemu", "toolchain=%s" % toolchain, "model=%s" % MODELS, "run",
                   build_dir=tmp_path)
    assert result.returncode == 0, result.stdout
    assert "undefined reference" not in result.stdout, result.stdout
    summary = result.stdout[result.stdout.index("Summary"):]
    for name in NAMES:
        assert re.search(r"^%s\s+ok\s.*\sok$" % name, summary, re.M), summary
