"""An extra cross-check, where the shared test models sit beside the checkout
(../shared/models, with manifest.json and quantized/manifest.json; not in a user's clone):
each is what its manifest says, and the repository's model of the same name
(examples/models, which the suite builds and runs) is the same model: same operators and
kernel keys (gen_oplist's, in both), same memory plan, same weights, same inputs, and the
same outputs to within float rounding (eager PyTorch's last bit varies between CPUs).
Without ../shared this is the suite's one skip for it."""

import json
import math

import pytest

from etcorev.pte import read_pte, validate_pte
from sconsrun import SHARED_MODELS, model_entries

MANIFESTS = (SHARED_MODELS / "manifest.json", SHARED_MODELS / "quantized" / "manifest.json")
REL_TOL = 1e-5
ABS_TOL = 1e-6
QUANTIZED_ABS_TOL = 1e-4


def _shared_entries():
    """name -> manifest entry, with "path" the shared .pte, for every manifest present."""
    entries = {}
    for manifest in MANIFESTS:
        if manifest.is_file():
            for name, entry in json.loads(manifest.read_text()).items():
                entries[name] = dict(entry, path=manifest.parent / entry["file"])
    return entries


def _segments(program, data):
    """The bytes of each data segment (the weights)."""
    base = program.segment_base_offset
    return [data[base + s.offset:base + s.offset + s.size] for s in program.segments]


def test_repository_models_match_the_shared_models():
    shared = _shared_entries()
    if not shared:
        pytest.skip("no shared test models beside the repository (../shared/models/"
                    "manifest.json): only this cross-check uses them; the suite's models are "
                    "examples/models")
    ours = model_entries()
    assert sorted(shared) == sorted(set(shared) & set(ours)), (sorted(shared), sorted(ours))
    for name, entry in sorted(shared.items()):
        # The shared file is what its manifest says.
        path = entry["path"]
        program = validate_pte(path)
        assert program.operators == entry["operators"], name
        assert program.kernel_keys == entry["kernel_keys"], name
        assert program.size == entry["bytes"] == path.stat().st_size, name
        method = program.methods[0]
        assert (method.num_inputs, method.num_outputs) == (
            len(entry["inputs"]), len(entry["outputs"])), name
        assert method.delegates == [], name

        # The repository's model is the same model.
        mine = ours[name]
        data = mine["path"].read_bytes()
        program_mine = validate_pte(data)
        assert mine["operators"] == entry["operators"], name
        assert mine["kernel_keys"] == entry["kernel_keys"], name
        assert program_mine.op_signature() == program.op_signature(), name
        assert program_mine.planned_buffer_sizes == program.planned_buffer_sizes, name
        assert _segments(program_mine, data) == _segments(read_pte(path), path.read_bytes()), (
            "%s: other weights" % name)
        assert mine["inputs"] == entry["inputs"], name
        atol = QUANTIZED_ABS_TOL if "quantized_decomposed::quantize_per_tensor.out" in \
            entry["operators"] else ABS_TOL
        assert len(mine["outputs"]) == len(entry["outputs"]), name
        for got, want in zip(mine["outputs"], entry["outputs"]):
            assert (got["dtype"], got["shape"]) == (want["dtype"], want["shape"]), name
            for i, (g, w) in enumerate(zip(got["values"], want["values"], strict=True)):
                assert math.isclose(g, w, rel_tol=REL_TOL, abs_tol=atol), (name, i, g, w)
