"""Every test model of examples/models (made by its export.py), built by SCons with each
toolchain and run in QEMU as one model set (`model=examples/models`): the outputs match the
model's NAME.json (eager PyTorch), `scons run`'s own check against NAME.expected.json
passes, the firmware links for the CV32E40P, and the kernel sources the build selects are
exactly those of the model's operators. These builds use the default kernels (the CORE-V
kernels where they cover an operator, with the portable kernel compiled beside each as its
fallback); tests/test_corev_kernels.py checks them against the portable ones per operator.

Needs an ExecuTorch tree (EXECUTORCH_ROOT or the user settings); the v1.0.0 check also
needs EXECUTORCH_V1_0_ROOT, a v1.0.0 tree.
"""

import json
import math
import os
import re

import pytest

from etcorev.pte import model_io
from sconsrun import MODELS, export_program, model_entries, scons

REL_TOL = 1e-5
ABS_TOL = 1e-6   # for values near 0, where a relative tolerance means nothing
QUANTIZED_ABS_TOL = 1e-4
KERNELS_LINE = re.compile(r"^Kernels for (\S+): (.*)$", re.M)
# Operator -> its op_*.cpp where the file is not op_<base name>.cpp.
OP_FILE_EXCEPTIONS = {
    "aten::_softmax.out": "op_softmax.cpp",
    "dim_order_ops::_to_dim_order_copy.out": "op__to_dim_order_copy.cpp",
}


def manifest():
    """name -> NAME.json's entry, with "path" the model file, for every test model."""
    return model_entries()


def op_file(operator):
    """The portable (or quantized) kernel source of an operator as a model spells it."""
    if operator in OP_FILE_EXCEPTIONS:
        return OP_FILE_EXCEPTIONS[operator]
    return "op_%s.cpp" % operator.split("::", 1)[-1].split(".", 1)[0].replace("_per_tensor", "")


def kernel_sources(stdout, model_file):
    lines = [m.group(2) for m in KERNELS_LINE.finditer(stdout) if m.group(1) == model_file]
    assert len(lines) == 1, "expected one 'Kernels for %s:' line in:\n%s" % (model_file, stdout)
    return [s.strip() for s in lines[0].split(",") if s.strip() and s.strip() != "none"]


def run_sections(stdout):
    """The run's output split per model, in the order the set runs (by name)."""
    return re.split(r"(?m)^Cycles startup: ", stdout)[1:]


@pytest.fixture(scope="module")
def model_set():
    """The test models with their inputs and expected outputs (NAME.inputs.json and
    NAME.expected.json beside each NAME.pte, as NAME.json gives them: tests/test_export.py
    checks that), a model set as it is."""
    return MODELS


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("models-build")


@pytest.fixture(scope="module")
def qemu_set_run(et_root, toolchain, model_set, build_dir):
    """`scons run board=qemu model=DIR` with this toolchain and the default kernels."""
    return scons("board=qemu", "toolchain=%s" % toolchain,
                 "model=%s" % model_set, "atol=%g" % QUANTIZED_ABS_TOL, "run",
                 build_dir=build_dir)


def assert_outputs_match(section, name, entry, what):
    """The outputs one model's run printed equal its NAME.json entry's."""
    assert re.search(r"^Exit status: 0$", section, re.M), section
    outputs = model_io.parse_outputs(section)
    assert sorted(outputs) == list(range(len(entry["outputs"]))), section
    atol = QUANTIZED_ABS_TOL if name == "qmlp" else ABS_TOL
    for i, expected in enumerate(entry["outputs"]):
        got = outputs[i]
        assert (got.dtype, got.shape) == (expected["dtype"], expected["shape"]), (name, i)
        for j, (g, e) in enumerate(zip(got.values, expected["values"])):
            ok = math.isclose(g, e, rel_tol=REL_TOL, abs_tol=atol) \
                if expected["dtype"].startswith("float") else g == e
            assert ok, "%s output %d[%d]: got %r, expected %r (%s)" % (name, i, j, g, e, what)


def test_every_model_runs_in_qemu_with_manifest_outputs(qemu_set_run, toolchain):
    out = qemu_set_run.stdout
    assert qemu_set_run.returncode == 0, out
    models = manifest()
    sections = run_sections(out)
    assert len(sections) == len(models), out
    for name, section in zip(sorted(models), sections):
        assert_outputs_match(section, name, models[name], toolchain)
    # scons run's own summary checked every model against its expected file.
    summary = out[out.index("Summary ("):]
    for name in models:
        assert re.search(r"^%s\s+ok\s.*\sok$" % name, summary, re.M), summary


def test_mlp_with_the_fpu_matches_the_manifest(et_root, toolchain, model_set, build_dir):
    """isa=rv32imfc (hard float, the ilp32f multilib; the CORE-V kernels' fused
    multiply-adds) gives mlp's NAME.json outputs too."""
    result = scons("board=qemu", "toolchain=%s" % toolchain, "isa=rv32imfc",
                   "model=%s" % (model_set / "mlp.pte"), "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert "-rv32imfc-" in result.stdout, result.stdout
    assert_outputs_match(run_sections(result.stdout)[0], "mlp", manifest()["mlp"],
                         "%s, rv32imfc" % toolchain)


def test_kernel_sources_are_the_models_operators(qemu_set_run):
    for name, entry in manifest().items():
        sources = kernel_sources(qemu_set_run.stdout, "%s.pte" % name)
        assert len(sources) == len(set(sources)), "a source listed twice: %s" % sources
        op_files = {s for s in sources if s.startswith("op_")}
        expected = {op_file(op) for op in entry["operators"]}
        assert op_files == expected, (name, sorted(expected - op_files), sorted(op_files - expected))


def test_quantized_model_runs_the_corev_kernels_over_the_quantized_fallbacks(qemu_set_run):
    """qmlp's quantized_decomposed::* operators run the CORE-V kernels, registered by a
    codegen run of their own; ExecuTorch's quantized kernels are compiled beside them as
    their fallbacks (tests/test_corev_kernels.py checks the quantized library's own
    registration with corev_kernels=0)."""
    out = qemu_set_run.stdout
    assert {"corev/op_quantize.cpp", "corev/op_dequantize.cpp", "op_quantize.cpp",
            "op_dequantize.cpp", "op_addmm.cpp"} <= set(kernel_sources(out, "qmlp.pte"))
    assert re.search(r"registration/corev-\w+/RegisterCodegenUnboxedKernelsEverything\.cpp",
                     out), out


def test_every_model_links_for_cv32e40p(qemu_set_run, toolchain, model_set, build_dir):
    result = scons("board=cv32e40p", "toolchain=%s" % toolchain,
                   "model=%s" % model_set, build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    for name in manifest():
        hexes = list(build_dir.glob("cv32e40p-*/%s/executor_runner.hex" % name))
        assert [h.stat().st_size > 0 for h in hexes].count(True) >= 1, (name, hexes)


def test_add_on_executorch_v1_0(et_root, tmp_path_factory):
    v1_0 = os.environ.get("EXECUTORCH_V1_0_ROOT")
    if not v1_0:
        pytest.skip("EXECUTORCH_V1_0_ROOT (an ExecuTorch v1.0.0 tree) is not set")
    if not os.path.isdir(v1_0):
        pytest.skip("EXECUTORCH_V1_0_ROOT is not a directory")
    entry = manifest()["add"]
    build_dir = tmp_path_factory.mktemp("models-build-v1.0")
    inputs = build_dir / "add-inputs.json"
    inputs.write_text(json.dumps(entry["inputs"]))
    result = scons("board=qemu", "executorch=%s" % v1_0, "model=%s" % entry["path"],
                   "inputs=%s" % inputs, "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert re.search(r"^Output 0: float32\[5\] 2,2,2,2,2$", result.stdout, re.M), result.stdout


def test_a_program_without_kernels_runs(tmp_path):
    """A method whose output is its input calls no kernel, so no kernel library is
    selected. ExecuTorch's gen_max_kernel_num requires an oplist: the build failed with
    its exit status 2 before it passed an empty one."""
    model = export_program(
        tmp_path / "identity.pte",
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return x\n",
        "(torch.ones(4),)")
    values = [0.5, -2.0, 3.25, 7.0]
    (tmp_path / "identity.inputs.json").write_text(json.dumps(
        [{"dtype": "float32", "shape": [4], "values": values}]))
    result = scons("board=qemu", "model=%s" % model, "run", build_dir=tmp_path / "build")
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Kernels for identity.pte: none" in result.stdout, result.stdout[-3000:]
    assert "Output 0: float32[4] 0.5,-2,3.25,7" in result.stdout, result.stdout[-3000:]
