"""The custom-operator example (examples/custom_ops): my_ops::scaled_add with its own kernel,
given to the build with kernels=DIR.

- No tree needed: the shipped .json agrees with the .pte and with the operator's arithmetic;
  the kernel directory is one custom_ops.yaml plus its source.
- With an ExecuTorch tree: without kernels= the build fails with one line naming the
  operator; a kernel directory named like one of ExecuTorch's libraries gets its own name.
  With QEMU as well: the README's command builds and runs the example, its outputs are the
  .json's, and the kernel list has the example's kernel.
- With the `export` extra: a fresh export equals the shipped files.
"""

import importlib.util
import json
import math
import re
import shutil
import struct
from pathlib import Path

import pytest

from etcorev.executorch import kernel_plan
from etcorev.errors import BuildSetupError
from etcorev.pte import read_pte
from sconsrun import REPO, scons
from conftest import same_program  # noqa: E402

EXAMPLE = REPO / "examples" / "custom_ops"
PTE = EXAMPLE / "scaled_add.pte"
DESCRIPTION = EXAMPLE / "scaled_add.json"
KERNELS = EXAMPLE / "kernels"
OPERATOR = "my_ops::scaled_add.out"

# The command line of examples/custom_ops/README.md, run from the repository root.
EXAMPLE_ARGS = ("board=qemu", "model=examples/custom_ops/scaled_add.pte",
                "kernels=examples/custom_ops/kernels",
                "inputs=examples/custom_ops/scaled_add.json")
WITHOUT_KERNELS = tuple(a for a in EXAMPLE_ARGS if not a.startswith("kernels="))

REL_TOL = 1e-5
ABS_TOL = 1e-6  # for values near 0, where a relative tolerance means nothing

OUTPUT_LINE = re.compile(r"^Output (\d+): (\w+)\[([\d,\s]*)\] ?(.*)$", re.M)
KERNELS_LINE = re.compile(r"^Kernels for scaled_add\.pte: (.*)$", re.M)

needs_qemu = pytest.mark.skipif(not shutil.which("qemu-system-riscv32"),
                                reason="qemu-system-riscv32 not installed (Debian: qemu-system-misc)")


# Where this checkout and its user live: nothing committed may name them.
MACHINE_PATHS = {str(REPO) + "/", str(REPO.parent) + "/", str(Path.home()) + "/"}


def description():
    return json.loads(DESCRIPTION.read_text())


def _f32(value):
    return struct.unpack("<f", struct.pack("<f", value))[0]


# --------------------------------------------------------------------------
# No tree, no torch: the shipped files.
# --------------------------------------------------------------------------

def test_shipped_description_matches_pte():
    entry = description()
    assert set(entry) == {"inputs", "outputs", "operators"}
    assert entry["operators"] == ["aten::relu.out", OPERATOR]
    assert read_pte(PTE).operators == entry["operators"]


def test_shipped_outputs_are_relu_of_scaled_add():
    entry = description()
    (x, y), (out,) = entry["inputs"], entry["outputs"]
    for tensor in (x, y, out):
        assert tensor["dtype"] == "float32"
        assert tensor["shape"] == [2, 4]
        assert len(tensor["values"]) == 8
    expected = [max(_f32(a + _f32(0.5 * b)), 0.0) for a, b in zip(x["values"], y["values"])]
    assert out["values"] == expected
    # Both sides of the relu are exercised.
    assert 0 < sum(v == 0.0 for v in expected) < len(expected)


def test_kernel_directory_is_a_custom_ops_library():
    library = kernel_plan.DirectoryKernels(str(KERNELS))
    assert library.name == "kernels"
    [(flag, yaml_path)] = library.yamls
    assert yaml_path.endswith("custom_ops.yaml")
    assert flag == "--custom-ops-yaml-path"
    assert set(library.kernel_names) == {OPERATOR}
    assert [s.rsplit("/", 1)[-1] for s in library.sources([OPERATOR])[0]] == ["op_scaled_add.cpp"]


def test_kernel_directory_without_sources_is_refused(tmp_path):
    shutil.copyfile(KERNELS / "custom_ops.yaml", tmp_path / "custom_ops.yaml")
    with pytest.raises(BuildSetupError, match=r"no C\+\+ sources"):
        kernel_plan.DirectoryKernels(str(tmp_path))


def test_example_names_no_path_of_this_machine():
    for path in [EXAMPLE / "README.md", EXAMPLE / "export.py", DESCRIPTION,
                 KERNELS / "custom_ops.yaml", KERNELS / "op_scaled_add.cpp"]:
        text = path.read_text()
        for prefix in MACHINE_PATHS:
            assert prefix not in text, (path, prefix)
    for prefix in MACHINE_PATHS:
        assert prefix.encode() not in PTE.read_bytes(), prefix


# --------------------------------------------------------------------------
# With an ExecuTorch tree: the build.
# --------------------------------------------------------------------------

def test_directory_named_like_an_executorch_library_gets_its_own_name(et_root, tmp_path):
    mine = tmp_path / "portable"
    shutil.copytree(KERNELS, mine)
    plan = kernel_plan.plan(et_root, read_pte(PTE).kernel_keys, [str(mine)])
    names = [k.name for k in plan.kernel_sets]
    assert len(names) == len(set(names)) == 2, names
    assert plan.kernel_sets[0].op_sources == [str(mine / "op_scaled_add.cpp")]
    assert list(plan.kernel_sets[0].selection) == [OPERATOR]
    assert list(plan.kernel_sets[1].selection) == ["aten::relu.out"]


@pytest.fixture(scope="module")
def qemu_run(et_root, toolchain, tmp_path_factory):
    """The README's command, into a fresh build directory, with each toolchain."""
    build_dir = tmp_path_factory.mktemp("custom-ops-build")
    return scons(*EXAMPLE_ARGS, "toolchain=%s" % toolchain, "run", build_dir=build_dir)


@needs_qemu
def test_runs_in_qemu_with_the_exported_outputs(qemu_run):
    assert qemu_run.returncode == 0, qemu_run.stdout
    assert re.search(r"^Exit status: 0$", qemu_run.stdout, re.M), qemu_run.stdout
    outputs = OUTPUT_LINE.findall(qemu_run.stdout)
    expected = description()["outputs"]
    assert len(outputs) == len(expected), qemu_run.stdout
    for (index, dtype, shape, values), want in zip(outputs, expected):
        assert dtype == want["dtype"]
        assert [int(d) for d in shape.split(",")] == want["shape"]
        got = [float(v) for v in values.split(",")]
        assert len(got) == len(want["values"])
        for i, (g, e) in enumerate(zip(got, want["values"])):
            assert math.isclose(g, e, rel_tol=REL_TOL, abs_tol=ABS_TOL), (
                "output %s[%d]: got %r, expected %r" % (index, i, g, e))


@needs_qemu
def test_kernel_list_has_the_example_kernel(qemu_run):
    lines = KERNELS_LINE.findall(qemu_run.stdout)
    assert len(lines) == 1, qemu_run.stdout
    sources = [s.strip() for s in lines[0].split(",")]
    assert {s for s in sources if s.startswith("op_")} == {"op_scaled_add.cpp", "op_relu.cpp"}


def test_without_kernels_the_build_names_the_operator(et_root, tmp_path):
    result = scons(*WITHOUT_KERNELS, build_dir=tmp_path)
    assert result.returncode != 0, result.stdout
    assert OPERATOR in result.stdout
    assert "kernels=" in result.stdout   # the hint
    assert "Traceback" not in result.stdout and 'File "' not in result.stdout, result.stdout
    errors = [line for line in result.stdout.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1, result.stdout
    assert not list(tmp_path.rglob("*.o")), "compiled something before failing"


# --------------------------------------------------------------------------
# With the `export` extra: a fresh export equals the shipped files.
# --------------------------------------------------------------------------

def test_export_reproduces_shipped(tmp_path):
    pytest.importorskip(
        "executorch.exir",
        reason="the executorch Python package is not installed "
               "(it is the `export` extra: ./setup.sh --export)")
    spec = importlib.util.spec_from_file_location("custom_ops_export", EXAMPLE / "export.py")
    export = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(export)
    pte_path, json_path = export.write(tmp_path)
    assert pte_path == tmp_path / "scaled_add.pte"
    assert same_program(pte_path.read_bytes(), PTE.read_bytes())
    assert json_path.read_text() == DESCRIPTION.read_text()
