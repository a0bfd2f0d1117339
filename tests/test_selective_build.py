"""Incremental and selective builds: new weights for the same model rebuild only the
model's own objects; an operator no kernel library has fails the build cleanly; a
second build has nothing to do.

Needs an ExecuTorch tree (EXECUTORCH_ROOT or the user settings); the models are the
repository's (examples/models).
"""

import re
import shutil
import struct

import pytest

from sconsrun import MODELS, scons

MLP = MODELS / "mlp.pte"
MLP_INPUTS = MODELS / "mlp.inputs.json"

# The one-line messages of site_scons/site_tools/quiet.py, after their "[ 42%] "
# progress (with verbose=1 SCons's Textfile says "Creating '...'").
ACTION_LINE = re.compile(r"^(?:\[ *\d+%\] )?(Compiling|Assembling|Generating|Archiving|Indexing|"
                         r"Linking|Writing|Creating|Installing|Checking size of) +'?(.*?)'?$",
                         re.M)
EXPLAIN_LINE = re.compile(r"^scons: (?:rebuilding|building) `([^']*)' because", re.M)


def actions(stdout):
    return [(m.group(1), m.group(2).strip()) for m in ACTION_LINE.finditer(stdout)]


def with_new_weights(data):
    """The .pte with the sign of its first 64 weights flipped (in the data segment)."""
    assert data[8:12] == b"eh00", "mlp.pte has no extended header"
    (segment_base,) = struct.unpack_from("<Q", data, 24)
    assert 0 < segment_base and segment_base + 256 <= len(data), segment_base
    out = bytearray(data)
    for i in range(64):
        out[segment_base + 4 * i + 3] ^= 0x80  # little-endian float32: the sign bit
    return bytes(out)


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("selective-build")


@pytest.fixture(scope="module")
def mlp_copy(tmp_path_factory):
    """A copy of mlp.pte (same file name) and its inputs file."""
    work = tmp_path_factory.mktemp("selective-model")
    model = work / "mlp.pte"
    shutil.copyfile(MLP, model)
    inputs = work / "mlp-inputs.json"
    shutil.copyfile(MLP_INPUTS, inputs)
    return model, inputs


@pytest.fixture(scope="module")
def first_build(et_root, build_dir, mlp_copy):
    model, inputs = mlp_copy
    result = scons("board=qemu", "embed=incbin", "model=%s" % model, "inputs=%s" % inputs,
                   "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert re.search(r"^Exit status: 0$", result.stdout, re.M), result.stdout
    return result


def output_lines(stdout):
    return re.findall(r"^Output \d+: .*$", stdout, re.M)


def test_noop_rebuild_is_up_to_date(first_build, build_dir, mlp_copy):
    model, inputs = mlp_copy
    args = ("board=qemu", "embed=incbin", "model=%s" % model, "inputs=%s" % inputs)
    # The first build ran `run` (always built); the default targets are built now.
    again = scons(*args, build_dir=build_dir)
    assert again.returncode == 0, again.stdout
    query = scons("-q", *args, build_dir=build_dir)
    assert query.returncode == 0, "scons -q: not up to date after a build:\n" + query.stdout
    third = scons(*args, build_dir=build_dir)
    assert third.returncode == 0, third.stdout
    assert actions(third.stdout) == [], "a no-op build did work:\n" + third.stdout


def test_new_weights_rebuild_only_the_model(first_build, build_dir, mlp_copy):
    model, inputs = mlp_copy
    model.write_bytes(with_new_weights(MLP.read_bytes()))
    result = scons("--debug=explain", "board=qemu", "embed=incbin", "model=%s" % model,
                   "inputs=%s" % inputs, "run", build_dir=build_dir)
    assert result.returncode == 0, result.stdout
    assert re.search(r"^Exit status: 0$", result.stdout, re.M), result.stdout

    done = actions(result.stdout)
    kinds = {kind for kind, _ in done}
    assert not kinds & {"Compiling", "Generating", "Archiving", "Indexing", "Installing"}, (
        "new weights rebuilt more than the model:\n" + result.stdout)
    # Only the embedded model (embed=incbin: an assembler file) and the firmware.
    assert kinds <= {"Assembling", "Writing", "Creating", "Linking", "Checking size of"}, (
        result.stdout)
    assert [t for kind, t in done
            if kind in ("Writing", "Creating") and "/mlp/model." not in t
            and not t.endswith("/mlp/executor_runner.hex")] == [], result.stdout
    assert any(kind == "Assembling" and "/mlp/model." in target for kind, target in done), (
        "the model object was not rebuilt:\n" + result.stdout)
    assert any(kind == "Linking" for kind, _ in done), result.stdout

    rebuilt = EXPLAIN_LINE.findall(result.stdout)
    unexpected = [t for t in rebuilt
                  if not re.search(r"/mlp/(model\.\w+|executor_runner\.(elf|map|hex|size\.txt))$"
                                   r"|^run$", t)]
    assert not unexpected, "rebuilt besides the model and firmware: %s\n%s" % (
        unexpected, result.stdout)

    # Negated weights give other outputs: the new model is the one that ran.
    assert output_lines(result.stdout), result.stdout
    assert output_lines(result.stdout) != output_lines(first_build.stdout), (
        "same outputs with new weights: the old model was linked?\n" + result.stdout)


@pytest.mark.parametrize("ops", ["aten::not_an_op.out", "aten::add.out,aten::not_an_op.out"])
def test_unknown_operator_fails_cleanly(ops, et_root, build_dir):
    result = scons("board=qemu", "model=%s" % (MODELS / "add.pte"), "ops=%s" % ops,
                   build_dir=build_dir)
    assert result.returncode != 0, result.stdout
    assert "aten::not_an_op.out" in result.stdout, result.stdout
    assert "Traceback" not in result.stdout, result.stdout
    assert not actions(result.stdout), "built something before failing:\n" + result.stdout


def test_the_dtype_selection_leaves_other_dtypes_code_out(et_root, tmp_path):
    """add.pte adds float32 tensors: of the portable add (the CORE-V kernel's fallback)
    the image holds the float code only. ExecuTorch's generated selection compared
    std::string_views, which GCC -Os never folded: the check stayed a run-time one and
    every dtype's code stayed in, complex<double> and soft double among it (add.pte's
    text was 49 KB, 26 KB without)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection
    result = scons("board=qemu", "model=%s" % (MODELS / "add.pte"), build_dir=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    [elf] = tmp_path.glob("qemu-*/add/executor_runner.elf")
    with open(elf, "rb") as f:
        names = {symbol.name for section in ELFFile(f).iter_sections()
                 if isinstance(section, SymbolTableSection) for symbol in section.iter_symbols()}
    loads = [n for n in names if "get_load_to_compute_fn_impl" in n and "7add_out" in n]
    assert loads and all("_implIfX" in n for n in loads), sorted(loads)
    assert not [n for n in names if "complexI" in n], sorted(n for n in names if "complexI" in n)
    assert not {"__adddf3", "__muldf3"} & names

