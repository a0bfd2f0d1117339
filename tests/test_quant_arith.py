"""The dequantize kernels' table (kernels/corev/corev_quant.h, cv_dequant_table), compiled
for the host: 25.6 M values against the per-value arithmetic it replaced and against the
float multiply of ExecuTorch's expression (tests/fixtures/dequant_table). The firmware's
own runs of it are tests/test_xcv_kernels.py's dequantize cases. Skips without a host C
compiler."""

import shutil
import subprocess

import pytest

from sconsrun import REPO

FIXTURE = REPO / "tests" / "fixtures" / "dequant_table" / "main.c"
KERNELS = REPO / "kernels" / "corev"


def test_dequantize_table_gives_the_float_multiplys_bits(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no host C compiler (cc)")
    program = tmp_path / "dequant_table"
    # -ffp-contract=off: the reference is one rounded multiply, as on the firmware
    subprocess.run([cc, "-O2", "-ffp-contract=off", "-I", str(KERNELS), str(FIXTURE), "-o", str(program)],
                   check=True, capture_output=True, text=True)
    result = subprocess.run([str(program)], capture_output=True, text=True, timeout=300)
    assert "values 25600000, differing from cv_dequant_one 0, from the float multiply 0" \
        in result.stdout, result.stdout + result.stderr
    assert result.returncode == 0
