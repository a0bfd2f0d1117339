"""Every test model of ../shared/models, built by SCons and run in QEMU: the outputs match
the manifest's (eager PyTorch), the firmware links for the CV32E40P, and the kernel
sources the build selects are exactly those of the model's operators.

Needs an ExecuTorch tree (EXECUTORCH_ROOT or the user settings); the v1.0.0 check also
needs EXECUTORCH_V1_0_ROOT, a v1.0.0 tree. All builds of this module share one build
directory, so the ExecuTorch runtime is compiled once per board.
"""

import json
import math
import os
import re
from pathlib import Path

import pytest

from sconsrun import MODELS, scons

MANIFEST = MODELS / "manifest.json"
MODEL_NAMES = sorted(json.loads(MANIFEST.read_text())) if MANIFEST.is_file() else []

pytestmark = pytest.mark.skipif(not MODEL_NAMES, reason="test models not found "
                                "(expected ../shared/models/manifest.json beside the repo)")

REL_TOL = 1e-5
ABS_TOL = 1e-6  # for values near 0, where a relative tolerance means nothing

OUTPUT_LINE = re.compile(r"^Output (\d+): (\w+)\[([\d,\s]*)\] ?(.*)$", re.M)
KERNELS_LINE = re.compile(r"^Kernels for (\S+): (.*)$", re.M)

# Operator -> its op_*.cpp where the file is not op_<base name>.cpp.
OP_FILE_EXCEPTIONS = {
    "aten::_softmax.out": "op_softmax.cpp",
    "dim_order_ops::_to_dim_order_copy.out": "op__to_dim_order_copy.cpp",
}


def manifest():
    return json.loads(MANIFEST.read_text())


def op_file(operator):
    """The portable kernel source of an operator as a model spells it."""
    if operator in OP_FILE_EXCEPTIONS:
        return OP_FILE_EXCEPTIONS[operator]
    base = operator.split("::", 1)[-1].split(".", 1)[0]
    return "op_%s.cpp" % base


def parse_value(text):
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        return float.fromhex(text)  # the runner prints huge/tiny floats as 0x1.8p-70


def parse_outputs(stdout):
    """{index: (dtype, shape, values)} of every `Output i: dtype[shape] v,v,...` line."""
    outputs = {}
    for match in OUTPUT_LINE.finditer(stdout):
        index, dtype, shape, values = match.groups()
        shape = [int(d) for d in shape.split(",") if d.strip()]
        values = [parse_value(v) for v in values.split(",") if v.strip()]
        assert int(index) not in outputs, "output %s printed twice" % index
        outputs[int(index)] = (dtype, shape, values)
    return outputs


def kernel_sources(stdout, model_file):
    lines = [m.group(2) for m in KERNELS_LINE.finditer(stdout) if m.group(1) == model_file]
    assert len(lines) == 1, "expected one 'Kernels for %s:' line in:\n%s" % (model_file, stdout)
    return [s.strip() for s in lines[0].split(",") if s.strip() and s.strip() != "none"]


def assert_close(name, got, expected, dtype):
    assert len(got) == len(expected), "%s: %d values, expected %d" % (name, len(got), len(expected))
    bad = []
    for i, (g, e) in enumerate(zip(got, expected)):
        if dtype.startswith(("float", "bfloat", "half")):
            ok = math.isclose(g, e, rel_tol=REL_TOL, abs_tol=ABS_TOL)
        else:
            ok = g == e
        if not ok:
            bad.append("[%d] got %r, expected %r" % (i, g, e))
    assert not bad, "%s differs from the manifest:\n  %s" % (name, "\n  ".join(bad))


# ---------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("models-build")


@pytest.fixture(scope="module")
def inputs_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("models-inputs")


@pytest.fixture(scope="module")
def qemu_runs(et_root, build_dir, inputs_dir):
    """`scons board=qemu model=... inputs=... run` per model, run once and cached."""
    runs = {}

    def run(name):
        if name not in runs:
            entry = manifest()[name]
            inputs = inputs_dir / ("%s.json" % name)
            inputs.write_text(json.dumps(entry["inputs"]))
            runs[name] = scons("board=qemu", "model=%s" % (MODELS / entry["file"]),
                               "inputs=%s" % inputs, "run", build_dir=build_dir)
        return runs[name]

    return run


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_runs_in_qemu_with_manifest_outputs(name, qemu_runs):
    entry = manifest()[name]
    result = qemu_runs(name)
    assert result.returncode == 0, result.stdout
    assert re.search(r"^Exit status: 0$", result.stdout, re.M), result.stdout
    outputs = parse_outputs(result.stdout)
    assert sorted(outputs) == list(range(len(entry["outputs"]))), result.stdout
    for i, expected in enumerate(entry["outputs"]):
        dtype, shape, values = outputs[i]
        assert dtype == expected["dtype"], "output %d dtype" % i
        assert shape == expected["shape"], "output %d shape" % i
        assert_close("%s output %d" % (name, i), values, expected["values"], dtype)


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_kernel_sources_are_the_models_operators(name, qemu_runs):
    entry = manifest()[name]
    result = qemu_runs(name)
    sources = kernel_sources(result.stdout, entry["file"])
    assert len(sources) == len(set(sources)), "a source listed twice: %s" % sources
    op_files = {s for s in sources if s.startswith("op_")}
    expected = {op_file(op) for op in entry["operators"]}
    assert op_files == expected, (
        "missing: %s; not needed: %s"
        % (sorted(expected - op_files) or "none", sorted(op_files - expected) or "none"))


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_links_for_cv32e40p(name, et_root, build_dir):
    entry = manifest()[name]
    result = scons("board=cv32e40p", "model=%s" % (MODELS / entry["file"]), build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    model = os.path.splitext(entry["file"])[0]
    hexes = list(Path(build_dir).glob("cv32e40p-*/%s/executor_runner.hex" % model))
    assert len(hexes) == 1, "expected one cv32e40p-*/%s/executor_runner.hex under %s: %s" % (
        model, build_dir, hexes)
    assert hexes[0].stat().st_size > 0


def test_add_on_executorch_v1_0(et_root, tmp_path_factory):
    v1_0 = os.environ.get("EXECUTORCH_V1_0_ROOT")
    if not v1_0:
        pytest.skip("EXECUTORCH_V1_0_ROOT (an ExecuTorch v1.0.0 tree) is not set")
    if not os.path.isdir(v1_0):
        pytest.skip("EXECUTORCH_V1_0_ROOT is not a directory")
    entry = manifest().get("add")
    if entry is None:
        pytest.skip("no add model in the manifest")
    # Its own build directory: the same variant name as the v1.4 builds above.
    build_dir = tmp_path_factory.mktemp("models-build-v1.0")
    inputs = build_dir / "add-inputs.json"
    inputs.write_text(json.dumps(entry["inputs"]))
    result = scons("board=qemu", "executorch=%s" % v1_0, "model=%s" % (MODELS / entry["file"]),
                   "inputs=%s" % inputs, "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert re.search(r"^Exit status: 0$", result.stdout, re.M), result.stdout
    outputs = parse_outputs(result.stdout)
    assert list(outputs) == [0], result.stdout
    dtype, shape, values = outputs[0]
    assert (dtype, shape) == ("float32", [5])
    assert values == [2.0] * 5
    assert re.search(r"^Output 0: float32\[5\] 2,2,2,2,2$", result.stdout, re.M), result.stdout
