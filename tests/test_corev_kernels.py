"""The CORE-V kernels (kernels/corev) against the portable ones, per operator, in QEMU.

Each model of tests/models/ops (made by its export.py: NAME.pte, NAME.inputs.json,
NAME.expected.json) is built and run with the CORE-V kernels (the default; rv32imc and
rv32imfc) and with ExecuTorch's portable kernels only (corev_kernels=0; rv32imc). Every
run must give the outputs eager PyTorch computed. Float outputs compare at rel 1e-5 with abs 1e-6 near 0
(the tolerance of tests/test_models.py): the CORE-V dot products round once at the
end (rv32imc) or use fused multiply-adds (rv32imfc) where the portable kernels and
eager PyTorch round after each step, and every output here is a sum of at most 40
products of values in [-1, 1], whose float rounding differences stay below 1e-6.
Integer outputs (quantized values, max-pool indices, int32 permutes) must be equal.

Needs an ExecuTorch tree and QEMU; skips (with the reason) when the build has no
corev_kernels option yet. CORE-V and portable builds have a build directory each, so
the ExecuTorch runtime is compiled once per ISA and library.
"""

import json
import math
import re
import shutil
import sys
from pathlib import Path

import pytest

from etcorev.pte import model_io
from sconsrun import REPO, scons
from conftest import same_program  # noqa: E402

OPS = Path(__file__).resolve().parent / "models" / "ops"
NAMES = sorted(p.name[:-len(".pte")] for p in OPS.glob("*.pte"))

# What each model must use: the operators whose CORE-V kernels it exercises.
OPERATORS = {
    "add": {"aten::add.out"},
    "addmm": {"aten::addmm.out", "aten::permute_copy.out"},
    "conv": {"aten::convolution.out"},
    "conv1d": {"aten::convolution.out"},
    "maxpool": {"aten::max_pool2d_with_indices.out"},
    "mul": {"aten::mul.out"},
    "permute": {"aten::permute_copy.out"},
    "quantize": {"quantized_decomposed::quantize_per_tensor.out",
                 "quantized_decomposed::dequantize_per_tensor.out"},
    "relu": {"aten::relu.out"},
    "softmax": {"aten::_softmax.out"},
    "half": {"aten::add.out", "aten::mul.out", "aten::relu.out"},
    "bfloat16": {"aten::add.out", "aten::mul.out", "aten::relu.out"},
}

pytestmark = [
    pytest.mark.skipif(not NAMES, reason="no models in tests/models/ops"),
    pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                       reason="qemu-system-riscv32 not installed (Debian: qemu-system-misc)"),
]


@pytest.fixture(scope="module")
def set_runs(et_root, tmp_path_factory):
    """(isa, library) -> `scons run` of every model of tests/models/ops as one model set
    (NAME.inputs.json and NAME.expected.json beside each: the run checks the outputs
    too), run once; one build directory, so that runs of a configuration share it."""
    build_dir = tmp_path_factory.mktemp("ops")
    runs = {}

    def run(isa, library):
        if (isa, library) not in runs:
            runs[isa, library] = scons("board=qemu", "isa=%s" % isa, "model=%s" % OPS,
                                       "corev_kernels=%d" % (library == "corev"), "run",
                                       build_dir=build_dir)
        return runs[isa, library]

    return run


def _expected(name):
    return json.loads((OPS / ("%s.expected.json" % name)).read_text())


# --------------------------------------------------------------- the library's files

LIBRARY = REPO / "kernels" / "corev"


def _library_yaml(name):
    import yaml
    return yaml.safe_load((LIBRARY / name).read_text())


def test_functions_and_coverage_name_the_same_operators():
    ops = set()
    for entry in _library_yaml("functions.yaml"):
        name = entry["op"] if "op" in entry else entry["func"].split("(", 1)[0]
        ops.add(name if "::" in name else "aten::" + name)
        (kernel,) = entry["kernels"]
        assert kernel["arg_meta"] is None, name
        assert kernel["kernel_name"].startswith("corev::"), name
    coverage = _library_yaml("coverage.yaml")
    assert ops == set(coverage)
    assert ops == set().union(*OPERATORS.values())


def test_coverage_uses_scalar_type_names():
    sys.path.insert(0, str(REPO / "site_scons"))
    from etcorev.pte import SCALAR_TYPES

    names = {name for name, _ in SCALAR_TYPES.values()}
    for op, dtypes in _library_yaml("coverage.yaml").items():
        assert dtypes and set(dtypes) <= names, (op, set(dtypes) - names)
    # int32 add (int_ops.pte) must stay portable.
    assert "Int" not in _library_yaml("coverage.yaml")["aten::add.out"]


def test_every_kernel_is_defined_and_its_fallback_declared():
    fallback = (LIBRARY / "portable_fallback.h").read_text()
    sources = {p.name: p.read_text() for p in LIBRARY.glob("op_*.cpp")}
    for entry in _library_yaml("functions.yaml"):
        function = entry["kernels"][0]["kernel_name"].split("::")[-1]
        defined = [name for name, text in sources.items()
                   if re.search(r"^\S.*\b%s\(" % function, text, re.M)]
        assert len(defined) == 1, (function, defined)
        assert re.search(r"\b%s\(" % function, fallback), function
        assert "torch::executor::native::%s(" % function in sources[defined[0]], function


# --------------------------------------------------------------- the shipped models


def test_every_model_has_its_files_and_operators():
    sys.path.insert(0, str(REPO / "site_scons"))
    from etcorev.pte import read_pte

    assert set(NAMES) == set(OPERATORS), "models and OPERATORS disagree"
    for name in NAMES:
        inputs = json.loads((OPS / ("%s.inputs.json" % name)).read_text())
        expected = _expected(name)
        for tensor in inputs + expected:
            assert set(tensor) == {"dtype", "shape", "values"}
            count = 1
            for dim in tensor["shape"]:
                count *= dim
            assert len(tensor["values"]) == count, (name, tensor["shape"])
        assert OPERATORS[name] <= set(read_pte(OPS / ("%s.pte" % name)).operators), name


def test_export_reproduces_shipped(tmp_path):
    pytest.importorskip("executorch.exir", reason="the executorch Python package is not "
                        "installed (it is the `export` extra: ./setup.sh --export)")
    import importlib.util

    spec = importlib.util.spec_from_file_location("ops_export", OPS / "export.py")
    export = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export)
    for name in ("relu", "quantize"):
        paths = export.write_model(name, tmp_path)
        for path in paths:
            if path.suffix == ".pte":
                assert same_program(path.read_bytes(), (OPS / path.name).read_bytes()), path.name
            else:
                assert path.read_bytes() == (OPS / path.name).read_bytes(), path.name


# --------------------------------------------------------------- QEMU


# The CORE-V kernels on both ISAs (soft float and FPU paths differ); the portable ones
# on rv32imc.
CONFIGURATIONS = [("rv32imc", "corev"), ("rv32imfc", "corev"), ("rv32imc", "portable")]


@pytest.mark.long(minutes=0.5)
@pytest.mark.parametrize("isa, library", CONFIGURATIONS)
def test_outputs_match_eager(isa, library, set_runs):
    result = set_runs(isa, library)
    assert result.returncode == 0, result.stdout
    # Models whose kernels share helpers: each helper's object is declared once.
    assert "scons: warning" not in result.stdout, result.stdout
    sections = re.split(r"(?m)^Cycles startup: ", result.stdout)[1:]
    assert len(sections) == len(NAMES), result.stdout
    for name, section in zip(NAMES, sections):              # the set runs in name order
        assert re.search(r"^Exit status: 0$", section, re.M), section
        outputs = model_io.parse_outputs(section)
        expected = _expected(name)
        assert sorted(outputs) == list(range(len(expected))), section
        for i, want in enumerate(expected):
            got = outputs[i]
            assert (got.dtype, got.shape) == (want["dtype"], want["shape"]), (name, i)
            for j, (g, e) in enumerate(zip(got.values, want["values"])):
                ok = math.isclose(g, e, rel_tol=1e-5, abs_tol=1e-6) \
                    if want["dtype"].startswith(("float", "bfloat")) else g == e
                assert ok, "%s (%s, %s) output %d[%d]: got %r, expected %r" % (
                    name, isa, library, i, j, g, e)


@pytest.mark.parametrize("isa, library", CONFIGURATIONS)
def test_the_corev_kernels_are_chosen_or_not(isa, library, set_runs):
    """corev_kernels=1: every operator of these models has a CORE-V registration;
    corev_kernels=0: none, and quantized_decomposed::* come from ExecuTorch's quantized
    library, with a codegen run and registration of its own beside the portable one."""
    out = set_runs(isa, library).stdout

    def registered(library):
        return re.findall(r"registration/%s-\w+/RegisterCodegenUnboxedKernelsEverything\.cpp"
                          % library, out)
    if library == "corev":
        assert registered("corev") and not registered("quantized"), out
    else:
        assert not registered("corev"), out
        assert registered("portable") and registered("quantized"), out
