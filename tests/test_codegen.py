"""The schemas the build gives ExecuTorch's codegen: torchgen's native_functions.yaml cut
to what a kernel library's yamls name (site_tools/executorch_codegen.py, schemas_for).
The cut must not change what codegen writes: for every library the build uses, with
every operator selected, codegen with the cut file and codegen with the whole file write
the same files, byte for byte."""

import filecmp
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from etcorev.executorch.kernel_sources import CUSTOM_OPS_YAML_FLAG, FUNCTIONS_YAML_FLAG, TREE_LIBRARIES
from etcorev.toolchain import torchgen
from sconsrun import REPO

pytestmark = pytest.mark.quick   # the edit-build loop's tier (README)

_spec = importlib.util.spec_from_file_location(
    "executorch_codegen", REPO / "site_scons" / "site_tools" / "executorch_codegen.py")
codegen_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(codegen_tool)

ATEN = """\
# a comment before the first entry
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  structured_delegate: add.out
- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  structured_delegate: add.out

- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
  structured: True
- func: _to_copy(Tensor self, *, bool non_blocking=False) -> Tensor
  autogen: _to_copy.out
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  structured_delegate: mul_out_impl.out
- func: mul_out_impl.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
- func: __ilshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)
  variants: method
  autogen: __lshift__.Scalar_out
- func: sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
"""


def names(text):
    return [line.split("(")[0][len("- func: "):] for line in text.splitlines()
            if line.startswith("- func: ")]


def test_a_library_gets_its_operators_variants_autogen_sources_and_delegates():
    library = ("- op: add.out\n  kernels: []\n- op: _to_copy.out\n- op: mul.Tensor\n"
               "- op: __lshift__.Scalar_out\n")
    assert names(codegen_tool.schemas_for(ATEN, [library])) == [
        "add.Tensor", "add_.Tensor", "add.out", "_to_copy", "mul.Tensor", "mul_out_impl.out",
        "__ilshift__.Scalar"]


def test_custom_ops_name_their_operators_with_a_namespace():
    library = "- func: my_ops::sub.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
    assert names(codegen_tool.schemas_for(ATEN, [library])) == ["sub.out"]


def test_custom_operators_alone_get_an_empty_list():
    library = "- func: my_ops::scaled_add.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n"
    assert codegen_tool.schemas_for(ATEN, [library]) == "[]\n"


def test_an_entry_that_is_not_a_func_is_an_error():
    import SCons.Errors
    with pytest.raises(SCons.Errors.UserError, match="not a `- func:`"):
        codegen_tool.schemas_for(ATEN + "- op: strange\n", ["- op: add.out\n"])


# ---------------------------------------------------------------- codegen's own prints

# A generator that prints the way gen_max_kernel_num does, with a pause in mid-line in
# which the test lets another thread print (chatty_pause is put in sys.modules below).
CHATTY_TOOL = """\
import sys
import chatty_pause

def main(argv):
    print("chatty_tool: wrote", argv[0], end="")
    chatty_pause.meanwhile()
    print(" (count=29)")
    print("chatty_tool: warning", file=sys.stderr)
"""


@pytest.mark.parametrize("verbose", [0, 1])
def test_codegen_prints_do_not_mix_into_the_build_output(verbose, tmp_path, capsys,
                                                         monkeypatch):
    """The generators run inside SCons's process, beside the job threads that print the
    build's one-line messages: "wrote ... (count=29)" once split a CI build's output
    mid-line. Quiet builds keep the generators' words out; verbose=1 prints them whole."""
    import threading
    import types
    (tmp_path / "chatty_pkg").mkdir()
    (tmp_path / "chatty_pkg" / "__init__.py").write_text("")
    (tmp_path / "chatty_pkg" / "tool.py").write_text(CHATTY_TOOL)

    def another_job_prints():
        for i in range(3):
            print("[ %d%%] Compiling other%d.cpp" % (i, i))

    def meanwhile():
        other = threading.Thread(target=another_job_prints)
        other.start()
        other.join()

    monkeypatch.setitem(sys.modules, "chatty_pause", types.SimpleNamespace(meanwhile=meanwhile))
    target = [types.SimpleNamespace(abspath=str(tmp_path / "out.h"))]
    codegen_tool.run_codegen({"ET_ROOT": str(tmp_path), "VERBOSE": verbose}, target,
                             "chatty_pkg.tool", ["out.h"])

    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[:3] == ["[ %d%%] Compiling other%d.cpp" % (i, i) for i in range(3)], out
    if verbose:
        assert lines[3:] == ["  (in-process) python -m chatty_pkg.tool out.h",
                             "chatty_tool: wrote out.h (count=29)"], out
        assert err == "chatty_tool: warning\n"
    else:
        assert lines[3:] == [] and err == "", out + err


def _codegen(et_root, module, *argv):
    """ExecuTorch's codegen module run as its docs run it, with torchgen importable (the
    per-user cache's copy when torch is not installed, as after ./setup.sh)."""
    path = os.pathsep.join(filter(None, [torchgen.ensure(), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=path)
    subprocess.run([sys.executable, "-B", "-m", module] + list(argv), cwd=et_root, env=env,
                   check=True, stdout=subprocess.DEVNULL)


LIBRARIES = {lib.name: [(lib.yaml_flag, lib.yaml)] for lib in TREE_LIBRARIES}
LIBRARIES["corev"] = [(FUNCTIONS_YAML_FLAG, str(REPO / "kernels" / "corev" / "functions.yaml"))]
LIBRARIES["custom ops alone (examples/custom_ops)"] = [
    (CUSTOM_OPS_YAML_FLAG, str(REPO / "examples" / "custom_ops" / "kernels" / "custom_ops.yaml"))]
LIBRARIES["portable with custom ops"] = [
    (FUNCTIONS_YAML_FLAG, "kernels/portable/functions.yaml"),
    (CUSTOM_OPS_YAML_FLAG, "kernels/portable/custom_ops.yaml")]


@pytest.mark.parametrize("library", sorted(LIBRARIES))
def test_cut_schemas_generate_what_the_whole_file_generates(library, et_root, tmp_path):
    flags = [(flag, str(Path(et_root) / path)) for flag, path in LIBRARIES[library]]
    aten_dir = Path(codegen_tool.aten_yaml_dir())
    cut = tmp_path / "native_functions.yaml"
    cut.write_text(codegen_tool.schemas_for(
        (aten_dir / "native_functions.yaml").read_text(),
        [Path(path).read_text() for _, path in flags]))
    selection = tmp_path / "selected_operators.yaml"
    _codegen(et_root, "codegen.tools.gen_oplist", "--output_path=%s" % selection,
             "--include_all_operators")
    for name, aten in (("whole", aten_dir / "native_functions.yaml"), ("cut", cut)):
        (tmp_path / name).mkdir()
        _codegen(et_root, "codegen.gen", "--source-path=%s" % (Path(et_root) / "codegen"),
                 "--install-dir=%s" % (tmp_path / name),
                 "--tags-path=%s" % (aten_dir / "tags.yaml"), "--aten-yaml-path=%s" % aten,
                 "--op-selection-yaml-path=%s" % selection,
                 *["%s=%s" % flag for flag in flags])
    written = sorted(p.name for p in (tmp_path / "whole").iterdir())
    assert len(written) >= 5 and written == sorted(p.name for p in (tmp_path / "cut").iterdir())
    match, mismatch, errors = filecmp.cmpfiles(tmp_path / "whole", tmp_path / "cut", written,
                                               shallow=False)
    assert (mismatch, errors) == ([], []), library
    assert len(cut.read_text()) < len((aten_dir / "native_functions.yaml").read_text()) / 3


def test_selections_also_select_the_kernels_compute_types(et_root, tmp_path):
    """ExecuTorch's gen_selected_op_variants selects the dtypes of a program's kernel keys;
    its portable kernels switch again on the compute type under the same operator name:
    float for float16 and bfloat16, double for integers in fmod and pow. The header the
    build writes selects those beside them (a float16 add.out aborted with "Unhandled
    dtype", an int32 fmod with "dtype not selected"), and nothing else."""
    import yaml
    oplist = tmp_path / "selected_operators.yaml"
    oplist.write_text(yaml.safe_dump({"et_kernel_metadata": {
        "aten::add.out": ["v1/5;0,1|5;0,1|5;0,1"],
        "aten::mul.out": ["v1/15;0,1|15;0,1|15;0,1"],
        "aten::sub.out": ["v1/3;0,1|3;0,1|3;0,1"],
        "aten::div.out": ["v1/6;0,1|5;0,1|6;0,1"],
        "aten::fmod.Tensor_out": ["v1/3;0|3;0|3;0"],
        "aten::fmod.Scalar_out": ["v1/5;0|5;0"],
        "aten::pow.Tensor_Scalar_out": ["v1/6;0|6;0", "v1/4;0|4;0"]}}))
    env = {"ET_ROOT": str(et_root)}
    header = tmp_path / "selected_op_variants.h"

    class Node:
        def __init__(self, path):
            self.abspath = str(path)
    codegen_tool._gen_op_variants([Node(header)], [Node(oplist)], env)
    text = header.read_text()
    conditions = dict(re.findall(r'__builtin_strcmp\(operator_name, "([\w.]+)"\) == 0\)\s*'
                                 r'&& \(([^()]*)\)', text))
    names = {op: sorted(re.findall(r"ScalarType::(\w+)", c)) for op, c in conditions.items()}
    assert names == {"add.out": ["Float", "Half"], "mul.out": ["BFloat16", "Float"],
                     "sub.out": ["Int"], "div.out": ["Float", "Half"],
                     "fmod.Tensor_out": ["Double", "Int"], "fmod.Scalar_out": ["Float", "Half"],
                     "pow.Tensor_Scalar_out": ["Double", "Float", "Long"]}
