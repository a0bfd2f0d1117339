"""ExecuTorch's Cortex-M operators with the CORE-V extensions: the operator models of the
three targets and MLPerf Tiny's networks, built with isa=rv32imc_xcv (the CORE-V kernels
with cv.sdotsp.b) and run on the PULP testbench, match their references.

A file of its own: it is the suite's longest test (minutes of simulation), and pytest's
workers take whole files, so beside tests/test_cortex_m.py's QEMU runs it would keep one
worker busy for both.

Needs an ExecuTorch tree, a CMSIS-NN tree and the core-v-verif and cv32e40p checkouts;
skips with the reason without them.
"""

import re

import pytest

from etcorev import pte
from etcorev.executorch import cortex_m_forms as forms
from etcorev.run import models
from sconsrun import NO_CHECKOUTS, REPO, checkouts_for_testbench, scons

OPS = REPO / "tests" / "models" / "cortex_m"
TINY = REPO / "examples" / "models" / "tiny"

# The networks exported for Cortex-M3 and M4 that run here besides ExecuTorch's default
# target's. Their MobileNet and ResNet-8 take 60 M of the testbench's cycles and carry no
# form the programs below do not (test_the_other_targets_forms_are_all_run checks it);
# every target's networks run on QEMU in tests/test_cortex_m.py.
OTHER_TARGETS_NETWORKS = ("ds_cnn", "autoencoder")


def _other_targets_programs():
    return [path for target in ("m3", "m4") for path in sorted((TINY / target).glob("*.pte"))
            if path.stem in OTHER_TARGETS_NETWORKS]


def _run_here():
    return [OPS, OPS / "m3", OPS / "m4", TINY] + _other_targets_programs()


def _forms(path):
    """(operator, backends whose form it has) of each Cortex-M call of a program."""
    return {(form.op, frozenset(form.backends))
            for form in forms.call_forms(pte.read_pte(path).methods[0])}


@pytest.mark.quick
def test_the_other_targets_forms_are_all_run():
    """Every form the Cortex-M3 and M4 networks carry is carried by a program this file
    runs on the testbench (a form is what of a call depends on the target: the same form
    of two targets is the same computation)."""
    networks = [p for target in ("m3", "m4") for p in (TINY / target).glob("*.pte")]
    needed = set().union(*map(_forms, networks))
    run = set().union(*(_forms(p) for entry in _run_here()
                        for p in (sorted(entry.glob("*.pte")) if entry.is_dir() else [entry])))
    assert any(len(backends) < len(forms.BACKENDS) for _, backends in needed), needed
    assert needed <= run, needed - run


@pytest.mark.long(minutes=4)
@pytest.mark.skipif(checkouts_for_testbench() is None, reason=NO_CHECKOUTS)
def test_every_target_on_the_pulp_testbench_with_the_core_v_extensions(et_root, cmsis_nn,
                                                                       tmp_path):
    model_set = ",".join(map(str, _run_here()))
    result = scons("board=cv32e40p", "isa=rv32imc_xcv", "verilator_model=",
                   "model=%s" % model_set, "cmsis_nn=%s" % cmsis_nn, "lto=0",
                   "run", "timeout=1800", build_dir=tmp_path, timeout=3600)
    assert result.returncode == 0, result.stdout[-4000:]
    out = result.stdout
    summary = {m.group(1): m.group(2) for m in re.finditer(
        r"^([\w.-]+)\s+(ok|FAIL \d+)\s.*$", out[out.index("Summary ("):], re.M)}
    assert sorted(summary) == sorted(m.name for m in models.model_set(model_set)), summary
    assert set(summary.values()) == {"ok"}, summary
