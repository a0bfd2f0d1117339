"""Tests for site_scons/etcorev/pte/ (etcorev.pte), the .pte reader/validator."""

import json
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from etcorev import pte
from etcorev.pte import PteError, read_pte, validate_pte
from sconsrun import MODELS, model_entries

pytestmark = pytest.mark.quick   # the edit-build loop's tier (README)

REPO_ROOT = Path(__file__).resolve().parents[1]
PTE_SCRIPT = REPO_ROOT / "site_scons" / "etcorev" / "pte" / "__main__.py"

# The test models are the repository's own (examples/models); each NAME.json gives the
# operators and kernel keys ExecuTorch's gen_oplist reported for it at export.
# (tests/test_shared_models.py checks the shared models' manifests, where present.)
MANIFEST_PARAMS = [pytest.param(entry["path"], entry, id=name)
                   for name, entry in model_entries().items()]


def _model(name: str) -> Path:
    path = MODELS / name
    assert path.is_file(), f"test model {name} not found in examples/models"
    return path


def _all_models():
    return [p.values[0] for p in MANIFEST_PARAMS]


# --------------------------------------------------------------------------
# Real models: operators and kernel keys equal gen_oplist's (NAME.json).
# --------------------------------------------------------------------------

def test_the_suites_models_are_here():
    assert {"add", "mul_add", "mlp", "cnn", "int_ops", "qmlp"} <= set(model_entries())


@pytest.mark.parametrize("path,entry", MANIFEST_PARAMS)
def test_manifest_operators_and_kernel_keys(path, entry):
    program = read_pte(path)
    assert program.operators == entry["operators"]
    assert program.kernel_keys == entry["kernel_keys"]
    assert program.size == path.stat().st_size


@pytest.mark.parametrize("path,entry", MANIFEST_PARAMS)
def test_manifest_models_validate(path, entry):
    program = validate_pte(path)
    assert program.operators == entry["operators"]
    assert program.kernel_keys == entry["kernel_keys"]
    assert [m.name for m in program.methods] == ["forward"]
    method = program.methods[0]
    assert method.num_inputs == len(entry["inputs"])
    assert method.num_outputs == len(entry["outputs"])
    assert method.delegates == []
    assert sorted(set(method.operators)) == entry["operators"]
    assert method.kernel_keys == entry["kernel_keys"]
    assert method.non_const_buffer_sizes[0] == 0
    assert program.planned_buffer_sizes == method.non_const_buffer_sizes[1:]
    assert all(s > 0 for s in program.planned_buffer_sizes)
    # Same result from the file's bytes.
    assert read_pte(path.read_bytes()).op_signature() == program.op_signature()


def test_header_fields():
    mlp = read_pte(_model("mlp.pte"))
    assert mlp.has_extended_header
    assert mlp.program_size <= mlp.segment_base_offset
    assert mlp.segment_base_offset + mlp.segment_data_size == mlp.size
    assert mlp.segments and mlp.segments[0].size > 0

    add = read_pte(_model("add.pte"))  # no data segments, no extended header
    assert not add.has_extended_header
    assert (add.program_size, add.segment_base_offset, add.segment_data_size) == (0, 0, 0)
    assert add.flatbuffer_size == add.size


def test_op_signature_ignores_weights(tmp_path):
    path = _model("mlp.pte")
    original = read_pte(path)
    data = bytearray(path.read_bytes())
    start = original.segment_base_offset
    end = start + original.segment_data_size
    assert end - start > 64
    for i in range(start, end):
        data[i] ^= 0x5A  # every weight byte changes
    changed = tmp_path / "mlp_other_weights.pte"
    changed.write_bytes(bytes(data))

    other = validate_pte(changed)
    assert changed.read_bytes() != path.read_bytes()
    assert other.op_signature() == original.op_signature()
    assert other.planned_buffer_sizes == original.planned_buffer_sizes
    assert json.loads(other.op_signature()) == {
        "operators": original.operators, "kernel_keys": original.kernel_keys}


def test_op_signature_differs_between_models():
    models = _all_models()
    assert len(models) >= 2, models
    assert len({read_pte(p).op_signature() for p in models}) == len(models)


def test_cli_prints_json():
    path = _model("mlp.pte")
    out = subprocess.run([sys.executable, str(PTE_SCRIPT), str(path)],
                         capture_output=True, text=True, check=True).stdout
    report = json.loads(out)
    program = read_pte(path)
    assert report["operators"] == program.operators
    assert report["kernel_keys"] == program.kernel_keys
    assert report["planned_buffer_sizes"] == program.planned_buffer_sizes


def test_cli_reports_errors(tmp_path):
    bad = tmp_path / "bad.pte"
    bad.write_bytes(b"")
    proc = subprocess.run([sys.executable, str(PTE_SCRIPT), str(bad)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "bad.pte" in proc.stderr and "empty" in proc.stderr
    assert "Traceback" not in proc.stderr


# --------------------------------------------------------------------------
# Malformed input: always PteError, with a useful message.
# --------------------------------------------------------------------------

def _expect_pte_error(source, *fragments):
    for fn in (read_pte, validate_pte):
        with pytest.raises(PteError) as info:
            fn(source)
        message = str(info.value)
        for fragment in fragments:
            assert fragment in message, message
    return message


def test_empty_file(tmp_path):
    path = tmp_path / "empty.pte"
    path.write_bytes(b"")
    _expect_pte_error(path, "empty.pte", "empty")


def test_three_bytes(tmp_path):
    path = tmp_path / "tiny.pte"
    path.write_bytes(b"ET1")
    _expect_pte_error(path, "tiny.pte", "too small")


def test_missing_file(tmp_path):
    _expect_pte_error(tmp_path / "nope.pte", "nope.pte")


def test_png_is_not_a_pte(tmp_path):
    path = tmp_path / "image.pte"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + bytes(64))
    _expect_pte_error(path, "image.pte", "identifier is '\\x0d\\x0a\\x1a\\x0a'",
                      "expected 'ET12'")


def test_text_is_not_a_pte(tmp_path):
    path = tmp_path / "notes.pte"
    path.write_text("This is a plain text file, not a model.\n")
    _expect_pte_error(path, "notes.pte", "identifier is ' is '", "expected 'ET12'")


def test_bytes_input_named_in_message():
    _expect_pte_error(b"GIF89a\x00\x00\x00\x00", "<bytes>", "expected 'ET12'")


@pytest.mark.parametrize("name", ["add.pte", "mlp.pte", "cnn.pte"])
def test_truncated(name):
    data = _model(name).read_bytes()
    program = read_pte(data)
    cuts = {4, 8, 11, 12, 20, 39, 40, 64, 100, len(data) // 3, len(data) // 2,
            len(data) - 100, len(data) - 1}
    if program.has_extended_header:
        cuts |= {program.program_size - 1, program.program_size,
                 program.segment_base_offset, program.segment_base_offset + 1}
    for cut in sorted(c for c in cuts if 0 < c < len(data)):
        with pytest.raises(PteError):
            validate_pte(data[:cut])
        if program.has_extended_header:
            # The extended header gives the sizes, so even reading fails.
            with pytest.raises(PteError, match="truncated|too small|corrupt"):
                read_pte(data[:cut])


def test_truncated_inside_data_segment(tmp_path):
    path = _model("mlp.pte")
    data = path.read_bytes()
    program = read_pte(data)
    base, seg_size = program.segment_base_offset, program.segment_data_size
    assert base + seg_size == len(data)
    for cut in (base + 1, base + seg_size // 2, len(data) - 1):
        cut_path = tmp_path / f"mlp_cut_{cut}.pte"
        cut_path.write_bytes(data[:cut])
        message = _expect_pte_error(cut_path, f"mlp_cut_{cut}.pte", "truncated")
        assert str(len(data)) in message and str(cut) in message


def test_data_segment_outside_file():
    # Header without segment_data_size (pre-1.0 layout), so only validate_pte's
    # segment check can see that the segment is cut off.
    data = bytearray(_model("mlp.pte").read_bytes())
    assert data[8:12] == b"eh00"
    struct.pack_into("<Q", data, 32, 0)  # clear segment_data_size
    cut = bytes(data[:-10])
    read_pte(cut)  # reading the operators does not need the segments
    with pytest.raises(PteError, match="data segment 0 .* extends past the end of the file"):
        validate_pte(cut)


@pytest.mark.parametrize("root", [0, 2, 7, 0xFFFFFFF0, 5673, 0x7FFFFFFF])
def test_corrupted_root_offset(root):
    data = bytearray(_model("mlp.pte").read_bytes())
    struct.pack_into("<I", data, 0, root)
    _expect_pte_error(bytes(data), "root table offset")


def test_root_offset_pointing_inside_data():
    data = bytearray(_model("add.pte").read_bytes())
    struct.pack_into("<I", data, 0, 0x30)  # a valid offset, but not a table
    with pytest.raises(PteError):
        validate_pte(bytes(data))


def test_extended_header_larger_than_file():
    data = bytearray(_model("mlp.pte").read_bytes())
    struct.pack_into("<Q", data, 16, len(data) + 1000)  # program_size
    _expect_pte_error(bytes(data), "truncated", str(len(data) + 1000))


def test_bad_extended_header_length():
    data = bytearray(_model("mlp.pte").read_bytes())
    struct.pack_into("<I", data, 12, 8)
    _expect_pte_error(bytes(data), "extended header length")


# --------------------------------------------------------------------------
# Random mutations: only success or PteError, never another exception.
# --------------------------------------------------------------------------

def _mutate(rng: random.Random, base: bytes, limit: int) -> bytes:
    data = bytearray(base)
    for _ in range(rng.randint(1, 8)):
        pos = rng.randrange(limit)
        choice = rng.random()
        if choice < 0.5:
            data[pos] = rng.randrange(256)
        elif choice < 0.8:
            data[pos] ^= 1 << rng.randrange(8)
        else:
            data[pos:pos + 4] = rng.randrange(2 ** 32).to_bytes(4, "little")
    if rng.random() < 0.1:
        data = data[:rng.randrange(len(data) + 1)]
    return bytes(data)


def test_random_mutations_only_raise_pte_error():
    models = _all_models()
    assert models
    rng = random.Random(20240601)
    outcomes = {"ok": 0, "error": 0}
    for path in models:
        base = path.read_bytes()
        program = read_pte(base)
        # Mostly hit the FlatBuffer part, where structure lives.
        flat = program.flatbuffer_size
        for _ in range(400):
            limit = len(base) if rng.random() < 0.2 else flat
            mutated = _mutate(rng, base, limit)
            for fn in (read_pte, validate_pte):
                try:
                    result = fn(mutated)
                except PteError as e:
                    assert str(e)
                    outcomes["error"] += 1
                else:
                    assert isinstance(result, pte.Program)
                    result.op_signature()
                    outcomes["ok"] += 1
    assert outcomes["error"] > 0 and outcomes["ok"] > 0


def test_random_garbage_with_identifier():
    rng = random.Random(7)
    for size in list(range(0, 80)) + [200, 1000, 4096]:
        for _ in range(20):
            data = bytearray(rng.randbytes(size))
            if size >= 8:
                data[4:8] = b"ET12"
            if size >= 12 and rng.random() < 0.5:
                data[8:12] = b"eh00"
            for fn in (read_pte, validate_pte):
                try:
                    fn(bytes(data))
                except PteError:
                    pass


def test_inputs_and_outputs_say_whether_the_program_plans_their_memory():
    """unplanned_io was exported with MemoryPlanningPass(alloc_graph_input=False,
    alloc_graph_output=False): none of its tensors is planned, and the method pool the
    runner is built with makes room for each (it takes their memory from that pool)."""
    from etcorev.run.runner_config import method_pool_size, unplanned_io_bytes
    method = read_pte(REPO_ROOT / "tests" / "models" / "memory" / "unplanned_io.pte").methods[0]
    specs = method.inputs + method.outputs
    assert [(s.planned, s.nbytes) for s in specs] == [
        (False, 60), (False, 60), (False, 56), (False, 60), (False, 56), (False, 12)]
    assert unplanned_io_bytes(method) == 6 * 16 + 64 + 64 + 64 + 64 + 64 + 16
    add = read_pte(_model("add.pte")).methods[0]
    assert all(s.planned and s.nbytes == 20 for s in add.inputs + add.outputs)
    assert unplanned_io_bytes(add) == 0
    assert method_pool_size(method) >= unplanned_io_bytes(method) + 2048
