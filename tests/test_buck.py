"""The Buck evaluation that finds which sources each kernel needs is strict: what it does
not understand in ExecuTorch's .bzl files is an error naming the file and line, never a
silent empty value (which would lose sources and fail at link time)."""

import shutil
from pathlib import Path

import pytest

from etcorev.executorch import buck
from etcorev.executorch.et_tree import TreeReader

pytestmark = pytest.mark.quick   # the edit-build loop's tier (README)

RUNTIME_WRAPPER = 'load("@fbsource//xplat/executorch/build:runtime_wrapper.bzl", "runtime")\n'


def evaluate(tmp_path, text, package="kernels/mine"):
    (tmp_path / package).mkdir(parents=True, exist_ok=True)
    (tmp_path / package / "targets.bzl").write_text(text)
    evaluator = buck.BuckEvaluator(TreeReader(tmp_path), {})
    evaluator.evaluate_package(package, required=True)
    return evaluator


def test_records_libraries_with_sources_and_deps(tmp_path):
    evaluator = evaluate(tmp_path, RUNTIME_WRAPPER + """
def define_common_targets():
    runtime.cxx_library(
        name = "op_thing",
        srcs = ["op_thing.cpp"] + select({"DEFAULT": ["extra.cpp"], "ovr_config//os:x": []}),
        exported_headers = ["thing.h"],
        deps = [":helper", "//executorch/kernels/portable/cpu/util:dtype_util"],
        visibility = ["PUBLIC"],
    )
""")
    assert evaluator.targets["//kernels/mine:op_thing"] == {
        "srcs": ["kernels/mine/op_thing.cpp", "kernels/mine/extra.cpp"],
        "headers": ["kernels/mine/thing.h"],
        "deps": ["//kernels/mine:helper", "//kernels/portable/cpu/util:dtype_util"]}


@pytest.mark.parametrize("body, what", [
    ("    new_helper_of_meta()\n", "NameError: name 'new_helper_of_meta' is not defined"),
    ("    runtime.cxx_shiny_library(name = 'x')\n", "'runtime' has no attribute 'cxx_shiny_library'"),
    ("    native.some_rule(name = 'x')\n", "'native' has no attribute 'some_rule'"),
    ("    runtime.cxx_library(name = 'x', srcs = select({'ovr_config//os:x': ['a.cpp']}))\n",
     "select() without a DEFAULT branch"),
])
def test_unknown_construct_is_an_error_naming_file_and_line(tmp_path, body, what):
    text = RUNTIME_WRAPPER + "\ndef define_common_targets():\n    pass\n" + body
    with pytest.raises(buck.BuckError) as error:
        evaluate(tmp_path, text)
    message = str(error.value)
    assert "kernels/mine/targets.bzl:5" in message, message
    assert what in message, message


def test_loading_an_unknown_symbol_is_an_error(tmp_path):
    text = ('load("@fbsource//xplat/executorch/build:runtime_wrapper.bzl", "runtime", '
            '"fancy_new_macro")\ndef define_common_targets():\n    pass\n')
    with pytest.raises(buck.BuckError, match=r"targets.bzl:1.*does not define 'fancy_new_macro'"):
        evaluate(tmp_path, text)


def test_the_trees_own_files_evaluate(et_root, tmp_path):
    """The real kernel packages, and the same with one changed construct: the change
    is reported, not skipped."""
    reader = TreeReader(Path(et_root))
    evaluator = buck.BuckEvaluator(reader, buck.exec_build_variables(reader))
    for package in ("kernels/portable/cpu", "kernels/portable/cpu/util", "kernels/quantized/cpu"):
        evaluator.evaluate_package(package, required=True)
    assert "kernels/portable/cpu/op_add.cpp" in evaluator.targets["//kernels/portable/cpu:op_add"]["srcs"]

    copy = tmp_path / "executorch"
    for rel in ("kernels/portable/cpu/util/targets.bzl",
                "shim_et/xplat/executorch/build/build_variables.bzl"):
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(et_root) / rel, copy / rel)
    bzl = copy / "kernels/portable/cpu/util/targets.bzl"
    text = bzl.read_text()
    assert "runtime.cxx_library(" in text
    bzl.write_text(text.replace("runtime.cxx_library(", "runtime.cxx_library_v2(", 1))
    line = text[:text.index("runtime.cxx_library(")].count("\n") + 1
    reader = TreeReader(copy)
    evaluator = buck.BuckEvaluator(reader, buck.exec_build_variables(reader))
    with pytest.raises(buck.BuckError, match=r"util/targets.bzl:%d: .*cxx_library_v2" % line):
        evaluator.evaluate_package("kernels/portable/cpu/util", required=True)
