"""Tests for examples/models/export.py and the models it made (examples/models/*.pte, *.json)."""

import importlib.util
import json
import struct
from pathlib import Path

import pytest

from etcorev.pte import read_pte
from conftest import same_program  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parents[1]
MODELS_DIR = REPO_ROOT / "examples" / "models"
EXPORT_SCRIPT = MODELS_DIR / "export.py"
SHIPPED = sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def _f32(value):
    """value rounded to float32, as a Python float."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


# The models' computations in plain Python, rounding to float32 after each operation as the
# float32 kernels do.
REFERENCE = {
    "add": lambda x, y: _f32(x + y),
    "mul_add": lambda x, y: _f32(_f32(_f32(x * y) + x) - 0.5),
}


def _load_export_module():
    spec = importlib.util.spec_from_file_location("models_export", EXPORT_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------
# No torch needed: the shipped files agree with themselves.
# --------------------------------------------------------------------------

def test_shipped_models_present():
    for name in ("add", "mul_add"):
        assert (MODELS_DIR / f"{name}.pte").is_file()
        assert (MODELS_DIR / f"{name}.json").is_file()


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_outputs_agree_with_inputs(name):
    entry = json.loads((MODELS_DIR / f"{name}.json").read_text())
    assert set(entry) == {"inputs", "outputs", "operators"}
    (x, y), (out,) = entry["inputs"], entry["outputs"]
    for tensor in (x, y, out):
        assert tensor["dtype"] == "float32"
        assert tensor["shape"] == x["shape"]
        count = 1
        for dim in tensor["shape"]:
            count *= dim
        assert len(tensor["values"]) == count
    expected = [REFERENCE[name](a, b) for a, b in zip(x["values"], y["values"])]
    assert out["values"] == expected


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_operators_match_pte(name):
    entry = json.loads((MODELS_DIR / f"{name}.json").read_text())
    assert read_pte(MODELS_DIR / f"{name}.pte").operators == entry["operators"]


def test_add_is_the_application_note_model():
    entry = json.loads((MODELS_DIR / "add.json").read_text())
    assert [t["values"] for t in entry["inputs"]] == [[1.0] * 5, [1.0] * 5]
    assert entry["outputs"][0]["values"] == [2.0] * 5
    assert entry["operators"] == ["aten::add.out"]


# --------------------------------------------------------------------------
# With the `export` extra: a fresh export equals the shipped files.
# --------------------------------------------------------------------------

def test_export_add_reproduces_shipped(tmp_path):
    pytest.importorskip(
        "executorch.exir",
        reason="the executorch Python package is not installed "
               "(it is the `export` extra: ./setup.sh --export)")
    export = _load_export_module()
    pte_path, json_path = export.write_model("add", tmp_path)
    assert pte_path == tmp_path / "add.pte"
    assert same_program(pte_path.read_bytes(), (MODELS_DIR / "add.pte").read_bytes())
    assert json_path.read_text() == (MODELS_DIR / "add.json").read_text()
