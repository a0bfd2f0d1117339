"""Tests for examples/models/export.py and the models it made (examples/models: NAME.pte,
NAME.json, NAME.inputs.json, NAME.expected.json), the test suite's models."""

import dataclasses
import importlib.util
import json
import math
import struct
from pathlib import Path

import pytest

from etcorev.pte import model_io, read_pte, validate_pte
from conftest import same_program  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
MODELS_DIR = REPO_ROOT / "examples" / "models"
EXPORT_SCRIPT = MODELS_DIR / "export.py"
SHIPPED = sorted(p.stem for p in MODELS_DIR.glob("*.pte"))
# The models the test suite uses (tests/test_models.py runs every one).
SUITE = ("add", "mul_add", "mlp", "cnn", "int_ops", "qmlp")
QUANTIZED = ("qmlp",)
# Models whose outputs are exact in any float arithmetic (elementwise, on values exact in
# float32, or int32): a fresh export's JSON files equal the shipped ones to the byte. The
# others' eager outputs (and qmlp's calibrated scales) may differ in the last bit on
# another CPU.
EXACT = ("add", "mul_add", "int_ops")


def _f32(value):
    """value rounded to float32, as a Python float."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _i32(value):
    """value wrapped to int32, as the int32 kernels compute."""
    return (value + 2 ** 31) % 2 ** 32 - 2 ** 31


# The elementwise models' computations in plain Python, rounding to float32 after each
# operation as the float32 kernels do (int32 for int_ops).
REFERENCE = {
    "add": lambda x, y: _f32(x + y),
    "mul_add": lambda x, y: _f32(_f32(_f32(x * y) + x) - 0.5),
    "int_ops": lambda x, y: _i32(_i32(x * 3) + y),
}


def _entry(name):
    return json.loads((MODELS_DIR / f"{name}.json").read_text())


def _load_export_module():
    spec = importlib.util.spec_from_file_location("models_export", EXPORT_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------
# No torch needed: the shipped files agree with themselves.
# --------------------------------------------------------------------------

def test_shipped_models_present():
    assert set(SUITE) <= set(SHIPPED), SHIPPED
    for name in SHIPPED:
        for suffix in (".pte", ".json", ".inputs.json", ".expected.json", ".bpte"):
            assert (MODELS_DIR / f"{name}{suffix}").is_file(), name + suffix
    assert (MODELS_DIR / "cnn.etrecord").is_file()


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_description_is_complete(name):
    entry = _entry(name)
    assert set(entry) == {"inputs", "outputs", "operators", "kernel_keys"}
    assert entry["operators"] == sorted(entry["operators"])
    assert sorted(entry["kernel_keys"]) == entry["operators"]
    for tensor in entry["inputs"] + entry["outputs"]:
        assert set(tensor) == {"dtype", "shape", "values"}
        assert len(tensor["values"]) == math.prod(tensor["shape"])
        assert all(math.isfinite(v) for v in tensor["values"])


@pytest.mark.parametrize("name", SHIPPED)
def test_build_files_hold_the_description(name):
    """NAME.inputs.json and NAME.expected.json (what the build and `scons run` read beside
    the model) hold NAME.json's inputs and outputs, and the build's own checks take them
    for the program's inputs and outputs."""
    entry = _entry(name)
    inputs_path = MODELS_DIR / f"{name}.inputs.json"
    expected_path = MODELS_DIR / f"{name}.expected.json"
    assert json.loads(inputs_path.read_text()) == entry["inputs"]
    assert json.loads(expected_path.read_text()) == entry["outputs"]
    method = validate_pte(MODELS_DIR / f"{name}.pte").methods[0]
    inputs = model_io.read_tensors(str(inputs_path), "inputs", "inputs")
    arrays = model_io.check_inputs(inputs, method.inputs, str(inputs_path), f"{name}.pte")
    assert len(arrays) == len(entry["inputs"])
    expected = model_io.read_tensors(str(expected_path), "outputs", "expected")
    model_io.check_expected(expected, method.outputs, str(expected_path), f"{name}.pte")
    assert [(t.dtype, t.shape, t.values) for t in expected] == [
        (t["dtype"], t["shape"], t["values"]) for t in entry["outputs"]]


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_shipped_outputs_agree_with_inputs(name):
    entry = _entry(name)
    (x, y), (out,) = entry["inputs"], entry["outputs"]
    for tensor in (x, y, out):
        assert tensor["dtype"] == ("int32" if name == "int_ops" else "float32")
        assert tensor["shape"] == x["shape"]
        count = 1
        for dim in tensor["shape"]:
            count *= dim
        assert len(tensor["values"]) == count
    expected = [REFERENCE[name](a, b) for a, b in zip(x["values"], y["values"])]
    assert out["values"] == expected


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_operators_match_pte(name):
    entry = _entry(name)
    program = read_pte(MODELS_DIR / f"{name}.pte")
    assert program.operators == entry["operators"]
    assert program.kernel_keys == entry["kernel_keys"]


def test_add_is_the_application_note_model():
    entry = _entry("add")
    assert [t["values"] for t in entry["inputs"]] == [[1.0] * 5, [1.0] * 5]
    assert entry["outputs"][0]["values"] == [2.0] * 5
    assert entry["operators"] == ["aten::add.out"]


def test_qmlp_is_quantized_and_not_delegated():
    """qmlp keeps the quantize/dequantize operators (only ExecuTorch's kernels/quantized
    has them): int8 tensors between float32 input and output."""
    program = validate_pte(MODELS_DIR / "qmlp.pte")
    assert {"quantized_decomposed::quantize_per_tensor.out",
            "quantized_decomposed::dequantize_per_tensor.out"} <= set(program.operators)
    assert program.methods[0].delegates == []
    assert program.kernel_keys["quantized_decomposed::quantize_per_tensor.out"] == [
        "v1/6;0,1|1;0,1|1;0,1"]                       # float32 in, int8 out
    entry = _entry("qmlp")
    assert [t["dtype"] for t in entry["inputs"] + entry["outputs"]] == ["float32", "float32"]


# --------------------------------------------------------------------------
# With the `export` extra: a fresh export equals the shipped files.
# --------------------------------------------------------------------------

def _programs_close(fresh: bytes, shipped: bytes, rel=1e-6) -> bool:
    """The same program but for float values (quantization scales) within rel."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    def close(a, b):
        if type(a) is not type(b):
            return False
        if dataclasses.is_dataclass(a):
            return all(close(getattr(a, f.name), getattr(b, f.name))
                       for f in dataclasses.fields(a))
        if isinstance(a, (list, tuple)):
            return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
        if isinstance(a, dict):
            return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
        if isinstance(a, float):
            return math.isclose(a, b, rel_tol=rel)
        return a == b

    return close(deserialize_pte_binary(fresh), deserialize_pte_binary(shipped))


@pytest.mark.parametrize("name", SHIPPED)
def test_export_reproduces_shipped(name, tmp_path):
    pytest.importorskip(
        "executorch.exir",
        reason="the executorch Python package is not installed "
               "(it is the `export` extra: ./setup.sh --export)")
    export = _load_export_module()
    paths = export.write_model(name, tmp_path)
    assert [p.name for p in paths] == [f"{name}{suffix}" for suffix in (
        ".pte", ".json", ".inputs.json", ".expected.json", ".bpte")
        + ((".etrecord",) if name == "cnn" else ())]
    assert all(p.parent == tmp_path for p in paths)
    fresh, shipped = paths[0].read_bytes(), (MODELS_DIR / f"{name}.pte").read_bytes()
    if name in QUANTIZED:
        assert _programs_close(fresh, shipped)
    else:
        assert same_program(fresh, shipped)
    _check_bundle(paths[4], MODELS_DIR / f"{name}.bpte", exact=name in EXACT,
                  quantized=name in QUANTIZED)
    paths = paths[:4]
    if name in EXACT:
        for path in paths[1:]:
            assert path.read_text() == (MODELS_DIR / path.name).read_text(), path.name
        return
    entry, fresh_entry = _entry(name), json.loads(paths[1].read_text())
    for key in ("inputs", "operators", "kernel_keys"):
        assert fresh_entry[key] == entry[key], key
    atol = 1e-4 if name in QUANTIZED else 1e-6
    for got, want in zip(fresh_entry["outputs"], entry["outputs"], strict=True):
        assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"])
        for g, w in zip(got["values"], want["values"], strict=True):
            assert math.isclose(g, w, rel_tol=1e-5, abs_tol=atol), (name, g, w)
    assert json.loads(paths[2].read_text()) == fresh_entry["inputs"]
    assert json.loads(paths[3].read_text()) == fresh_entry["outputs"]


def _check_bundle(fresh, shipped, exact, quantized):
    """A fresh .bpte is the shipped one: the same program (for a quantized model, but for
    its scales within float rounding, as the .pte), the same test cases (inputs exactly,
    expected outputs exactly or, for the models whose eager results may differ in the
    last bit on another CPU, to within float rounding)."""
    from executorch.devtools.bundled_program.serialize import (
        deserialize_from_flatbuffer_to_bundled_program)
    got, want = (deserialize_from_flatbuffer_to_bundled_program(p.read_bytes())
                 for p in (fresh, shipped))
    if quantized:
        assert _programs_close(bytes(got.program), bytes(want.program))
    else:
        assert same_program(bytes(got.program), bytes(want.program))
    for got_suite, want_suite in zip(got.method_test_suites, want.method_test_suites,
                                     strict=True):
        assert got_suite.method_name == want_suite.method_name
        for got_case, want_case in zip(got_suite.test_cases, want_suite.test_cases, strict=True):
            assert got_case.inputs == want_case.inputs
            for g, w in zip(got_case.expected_outputs, want_case.expected_outputs, strict=True):
                g, w = g.val, w.val
                assert (g.scalar_type, g.sizes, g.dim_order) == (w.scalar_type, w.sizes,
                                                                 w.dim_order)
                if exact or g.scalar_type != w.scalar_type or len(g.data) % 4:
                    assert g.data == w.data
                    continue
                count = len(g.data) // 4
                for a, b in zip(struct.unpack("<%df" % count, bytes(g.data)),
                                struct.unpack("<%df" % count, bytes(w.data))):
                    assert math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-4), (fresh.name, a, b)


def test_export_is_deterministic(tmp_path):
    """Two runs of the export write the same bytes (here the quantized model, whose
    calibration could vary most)."""
    pytest.importorskip(
        "executorch.exir",
        reason="the executorch Python package is not installed "
               "(it is the `export` extra: ./setup.sh --export)")
    export = _load_export_module()
    first = [p.read_bytes() for p in export.write_model("qmlp", tmp_path / "a")]
    second = [p.read_bytes() for p in export.write_model("qmlp", tmp_path / "b")]
    assert first == second
