"""The int8-quantized MLP (../shared/models/quantized/qmlp.pte): its
quantized_decomposed::* operators come from ExecuTorch's kernels/quantized library,
chosen from the model, registered by its own codegen run."""

import json
import math
import re

import pytest

from sconsrun import MODELS, scons
from test_models import kernel_sources, parse_outputs

QUANTIZED = MODELS / "quantized"
MANIFEST = QUANTIZED / "manifest.json"
pytestmark = pytest.mark.skipif(not MANIFEST.is_file(),
                                reason="../shared/models/quantized/manifest.json not found")
ABS_TOL = 1e-4


@pytest.fixture(scope="module")
def entry():
    return json.loads(MANIFEST.read_text())["qmlp"]


@pytest.fixture(scope="module")
def qemu_run(et_root, entry, tmp_path_factory):
    build_dir = tmp_path_factory.mktemp("quantized")
    inputs = build_dir / "inputs.json"
    inputs.write_text(json.dumps(entry["inputs"]))
    result = scons("board=qemu", "model=%s" % (QUANTIZED / entry["file"]), "inputs=%s" % inputs,
                   "run", build_dir=build_dir)
    return build_dir, result


def test_qmlp_runs_in_qemu_with_manifest_outputs(entry, qemu_run):
    _, result = qemu_run
    assert result.returncode == 0, result.stdout
    outputs = parse_outputs(result.stdout)
    dtype, shape, values = outputs[0]
    expected = entry["outputs"][0]
    assert (dtype, shape) == (expected["dtype"], expected["shape"])
    assert all(math.isclose(g, e, abs_tol=ABS_TOL) for g, e in zip(values, expected["values"])), \
        (values, expected["values"])


def test_qmlp_kernels_come_from_both_libraries(entry, qemu_run):
    _, result = qemu_run
    sources = kernel_sources(result.stdout, entry["file"])
    assert {"op_quantize.cpp", "op_dequantize.cpp", "op_addmm.cpp"} <= set(sources)
    # One codegen run (and registration) per library.
    assert re.search(r"gen/quantized/RegisterCodegenUnboxedKernelsEverything\.cpp", result.stdout)
    assert re.search(r"gen/portable/RegisterCodegenUnboxedKernelsEverything\.cpp", result.stdout)


def test_qmlp_links_for_cv32e40p(entry, qemu_run):
    build_dir, _ = qemu_run
    result = scons("board=cv32e40p", "model=%s" % (QUANTIZED / entry["file"]), build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert list(build_dir.glob("cv32e40p-*/qmlp/executor_runner.hex"))
