"""Reading an ExecuTorch tree: checks (et_tree), source lists and their cache (et_index),
and which kernel sources the plan picks (kernel_plan over kernel_sources).

Runs against the tree in EXECUTORCH_ROOT (fixture ``et_root``).  To check
several trees in one run, list them in EXECUTORCH_ROOTS (separated by
``os.pathsep``).  Counts that depend on the ExecuTorch version are checked for
the versions in EXPECTED and skipped for others.
"""

import json
import os
import re
import time
from pathlib import Path

import pytest

from etcorev.scons import usercache
from etcorev.executorch import et_index, et_tree, kernel_plan
from etcorev.errors import BuildSetupError
from etcorev.executorch.et_tree import ETSourceError
from etcorev.executorch.kernel_sources import TREE_LIBRARIES
from sconsrun import model_entries

pytestmark = pytest.mark.quick   # the edit-build loop's tier (README)


# Per ExecuTorch version: EXECUTORCH_CORE_SRCS without the PAL, and the
# number of op_*.cpp files of the portable library.
EXPECTED = {
    "1.4.1": {"core": 23, "portable_ops": 172},
    "1.0.0": {"core": 20, "portable_ops": 166},
}

_ROOTS = [p for p in os.environ.get("EXECUTORCH_ROOTS", "").split(os.pathsep) if p]


@pytest.fixture(params=_ROOTS or [None], ids=lambda p: os.path.basename(os.path.dirname(p)) if p else "et_root")
def root(request, tmp_path_factory, monkeypatch):
    # Keep the tests' cache away from the user's.
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path_factory.getbasetemp() / "etcache"))
    et_index.forget()
    if request.param is None:
        return request.getfixturevalue("et_root")
    return Path(request.param)


def expected(root, key):
    version = et_tree.detect_version(root)
    if version not in EXPECTED:
        pytest.skip("no expected %s for ExecuTorch %s" % (key, version))
    return EXPECTED[version][key]


def exists_all(root, paths):
    missing = [p for p in paths if not (Path(root) / p).is_file()]
    assert not missing, missing


# --- tree checks --------------------------------------------------------------


def test_check_tree_returns_version(root):
    version = et_tree.check_tree(root)
    assert version == et_tree.detect_version(root)
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)


@pytest.mark.parametrize(
    "text, version",
    [("1.4.1\n", "1.4.1"), ("1.0.0a0\n", "1.0.0"), ("0.7.0+git1234", "0.7.0"), ("junk", None)],
)
def test_detect_version_from_version_txt(tmp_path, text, version):
    (tmp_path / "version.txt").write_text(text)
    assert et_tree.detect_version(tmp_path) == version


def test_detect_version_without_version_txt(tmp_path):
    assert et_tree.detect_version(tmp_path) is None


def test_missing_dir_raises(tmp_path):
    with pytest.raises(ETSourceError, match="does not exist"):
        et_tree.check_tree(tmp_path / "executorch")


def test_bogus_dir_raises(tmp_path):
    bogus = tmp_path / "executorch"
    bogus.mkdir()
    (bogus / "README.md").write_text("not ExecuTorch")
    with pytest.raises(ETSourceError, match="does not look like an ExecuTorch") as exc:
        et_index.core_sources(bogus)
    assert "build_variables.bzl" in str(exc.value)


def test_dir_not_named_executorch_raises(root, tmp_path):
    link = tmp_path / "et-src"
    link.symlink_to(Path(root).resolve(), target_is_directory=True)
    with pytest.raises(ETSourceError, match="must be named 'executorch'") as exc:
        et_tree.check_tree(link)
    assert "include path" in str(exc.value)
    assert str(tmp_path) in str(exc.value)


# --- core and prim ops ------------------------------------------------------------


def test_core_sources(root):
    n = expected(root, "core")
    core = et_index.core_sources(root, pal=None)
    assert len(core) == n
    assert not [s for s in core if s.startswith("runtime/platform/default/")]
    exists_all(root, core)
    with_pal = et_index.core_sources(root)
    assert with_pal == core + ["runtime/platform/default/minimal.cpp"]
    assert et_index.core_sources(root, pal="posix")[-1] == "runtime/platform/default/posix.cpp"


def test_unknown_pal_raises(root):
    with pytest.raises(ETSourceError, match="minimal"):
        et_index.core_sources(root, pal="nosuchpal")


def test_prim_ops_sources(root):
    srcs = et_index.prim_ops_sources(root)
    assert len(srcs) == 3
    assert all(s.startswith("kernels/prim_ops/") for s in srcs)
    exists_all(root, srcs)
    assert "executorch_prim::et_view.default" in et_index.prim_ops(root)


# --- kernel libraries and the plan -----------------------------------------------------


def plan(root, ops, **kw):
    """kernel_plan.plan for operators without kernel keys, portable and quantized only."""
    return kernel_plan.plan(root, {op: [] for op in ops} if ops != "all" else "all",
                            corev=False, **kw)


def kernel_set_ops(root):
    """Every operator of the tree's portable library."""
    return set(et_index.tree_index(root)["libraries"]["portable"]["ops"])


def sources_of(kernel_set, root):
    return [os.path.relpath(s, root) for s in kernel_set.op_sources], \
        [os.path.relpath(s, root) for s in kernel_set.util_sources]


def test_kernel_libraries(root):
    idx = et_index.tree_index(root)
    assert [lib.name for lib in TREE_LIBRARIES] == ["portable", "quantized", "cortex_m"]
    assert sorted(idx["libraries"]) == ["cortex_m", "portable", "quantized"]
    exists_all(root, [lib.yaml for lib in TREE_LIBRARIES])
    portable, quantized = idx["libraries"]["portable"]["ops"], idx["libraries"]["quantized"]["ops"]
    cortex_m = idx["libraries"]["cortex_m"]["ops"]
    assert "aten::add.out" in portable
    assert "dim_order_ops::_to_dim_order_copy.out" in portable
    assert "quantized_decomposed::quantize_per_tensor.out" in quantized
    # Every operator of the Cortex-M backend has its source (op_<name>.cpp).
    assert cortex_m["cortex_m::quantized_conv2d.out"] == [
        "backends/cortex_m/ops/op_quantized_conv2d.cpp"]
    assert all(len(files) == 1 for files in cortex_m.values()), cortex_m
    assert all("::" in op for op in list(portable) + list(quantized) + list(cortex_m))


def test_ops_all_brings_the_corev_fallbacks_and_registers_each_operator_once(root):
    """ops=all with the CORE-V kernels. Their libraries' fallbacks (the tree's quantize
    and dequantize sources) were left out, so every model failed to link; and the
    portable library registered every operator, those of the CORE-V library too, which
    aborts the program at start-up (ExecuTorch refuses a second kernel for one name).
    (add.pte with ops=all, end to end: it runs on QEMU; compiling every portable
    operator costs minutes, too many for the suite.)"""
    result = kernel_plan.plan(root, "all")
    compiled = {os.path.relpath(s, root) for k in result.kernel_sets for s in k.op_sources}
    for fallback in ("kernels/quantized/cpu/op_quantize.cpp",
                     "kernels/quantized/cpu/op_dequantize.cpp",
                     "backends/cortex_m/ops/op_quantize_per_tensor.cpp",
                     "backends/cortex_m/ops/op_dequantize_per_tensor.cpp"):
        assert fallback in compiled, fallback
    searched, index = kernel_plan.libraries(root)
    ours = {op for lib in searched if lib.kind == "directory" for op in lib.kernel_names}
    assert "aten::add.out" in ours
    [portable] = [k for k in result.kernel_sets if k.name == "portable"]
    assert portable.selection != "all"
    portable_ops = set(index["libraries"]["portable"]["ops"])
    assert set(portable.selection) == portable_ops - ours


def _registered(kernel_set, root):
    """The operators a kernel set registers."""
    if kernel_set.selection != "all":
        return set(kernel_set.selection)
    searched, index = kernel_plan.libraries(root)
    [library] = [lib for lib in searched if lib.name == kernel_set.name]
    return (set(library.kernel_names) if library.kind == "directory"
            else set(index["libraries"][kernel_set.name]["ops"]))


def test_ops_all_registers_an_operator_two_libraries_give_once(root):
    """ops=all registered every operator of every directory library: two of them with a
    kernel for one operator (kernels/corev and kernels/portable_fixes both give
    quantized_decomposed::quantize_per_tensor.out; a user's library and ours, aten::add)
    registered it twice, which aborts the program at start-up. The first library in the
    search order registers it."""
    result = kernel_plan.plan(root, "all")
    seen = {}
    for kernel_set in result.kernel_sets:
        for op in _registered(kernel_set, root):
            assert op not in seen, (op, seen.get(op), kernel_set.name)
            seen[op] = kernel_set.name
    assert seen["quantized_decomposed::quantize_per_tensor.out"] == "corev"
    assert seen["aten::remainder.Tensor_out"] == "portable_fixes"


def test_op_add_selection(root):
    [kernel_set] = plan(root, ["aten::add.out"]).kernel_sets
    assert kernel_set.name == "portable" and kernel_set.selection == {"aten::add.out": []}
    ops, utils = sources_of(kernel_set, root)
    assert ops == ["kernels/portable/cpu/op_add.cpp"]
    # op_add -> broadcast_util (broadcast_util.cpp + delinearize_index.cpp),
    # dtype_util, kernel_ops_util; broadcast_util.cpp calls repeat_tensor(),
    # so broadcast_util depends on repeat_util.
    util = "kernels/portable/cpu/util/"
    assert set(utils) == {util + "broadcast_util.cpp", util + "delinearize_index.cpp",
                          util + "dtype_util.cpp", util + "kernel_ops_util.cpp",
                          util + "repeat_util.cpp"}


@pytest.mark.parametrize(
    "op, source",
    [
        ("aten::_softmax.out", "op_softmax.cpp"),
        ("aten::_native_batch_norm_legit.out", "op_native_batch_norm.cpp"),
        ("aten::_native_batch_norm_legit_no_training.out", "op_native_batch_norm.cpp"),
        ("aten::acos.out", "op_acos.cpp"),  # defined by a macro
        ("dim_order_ops::_to_dim_order_copy.out", "op__to_dim_order_copy.cpp"),
        ("convolution.out", "op_convolution.cpp"),  # no namespace means aten::
    ],
)
def test_op_to_file(root, op, source):
    [kernel_set] = plan(root, [op]).kernel_sets
    assert sources_of(kernel_set, root)[0] == ["kernels/portable/cpu/" + source]


def test_quantized_selection(root):
    sets = plan(root, ["quantized_decomposed::dequantize_per_tensor.out", "aten::relu.out"]).kernel_sets
    assert [k.name for k in sets] == ["portable", "quantized"]
    ops, utils = sources_of(sets[1], root)
    assert ops == ["kernels/quantized/cpu/op_dequantize.cpp"]
    assert utils == ["kernels/portable/cpu/util/reduce_util.cpp"]
    every = [s for k in sets for s in k.op_sources + k.util_sources]
    assert len(every) == len(set(every))


def _manifest_models():
    """The test models' kernel keys (examples/models/NAME.json: gen_oplist's)."""
    return [pytest.param(entry["kernel_keys"], id=name)
            for name, entry in model_entries().items()]


@pytest.mark.parametrize("kernel_keys", _manifest_models())
def test_manifest_models_resolve(root, kernel_keys):
    result = kernel_plan.plan(root, kernel_keys, corev=False)
    chosen = {op for k in result.kernel_sets for op in k.selection}
    assert chosen | set(result.prim_ops) == set(kernel_keys)
    exists_all(root, [os.path.relpath(s, root) for s in result.sources])
    assert len(result.sources) == len(set(result.sources))


def test_unknown_op_raises(root):
    with pytest.raises(BuildSetupError) as exc:
        plan(root, ["aten::add.out", "aten::foo.out", "bogus::bar.baz"])
    msg = str(exc.value)
    assert "aten::foo.out" in msg and "bogus::bar.baz" in msg
    assert "aten::add.out" not in msg.split("(")[0]
    assert "portable: kernels/portable/functions.yaml" in msg
    assert "quantized: kernels/quantized/quantized.yaml" in msg


def test_prim_ops_are_not_errors(root):
    result = plan(root, ["aten::add.out", "executorch_prim::et_view.default"])
    assert result.prim_ops == ("executorch_prim::et_view.default",)
    assert [list(k.selection) for k in result.kernel_sets] == [["aten::add.out"]]


def test_all_is_cmake_portable_kernels(root):
    """ops=all without the CORE-V kernels: the portable kernels, but for the operators
    kernels/portable_fixes corrects (it registers those, for every dtype, with the tree's
    source of each compiled beside it). The portable library then compiles its
    operators' sources, not its whole directory: op_allclose.cpp (an operator of its
    custom_ops.yaml, which the build does not register) stays out."""
    n_ops = expected(root, "portable_ops")
    fixes, kernel_set = plan(root, "all").kernel_sets
    assert fixes.name == "portable_fixes" and fixes.selection == "all"
    corrected = {op for op in kernel_set_ops(root) if op.startswith("aten::remainder.")}
    assert kernel_set.name == "portable" and set(kernel_set.selection) == \
        kernel_set_ops(root) - corrected
    fallback = [s for s in sources_of(fixes, root)[0] if s.startswith("kernels/portable/")]
    assert fallback == ["kernels/portable/cpu/op_remainder.cpp"]
    ops, utils = sources_of(kernel_set, root)
    ops += fallback
    utils += sources_of(fixes, root)[1]          # each helper compiled once, in one set
    unregistered = {"kernels/portable/cpu/op_allclose.cpp"}
    assert len(ops) == n_ops - len(unregistered)
    assert all(re.fullmatch(r"kernels/portable/cpu/op_\w+\.cpp", s) for s in ops)
    assert all(re.match(r"kernels/portable/cpu/(util|pattern)/", s) for s in utils)
    # Same files as kernels/portable/CMakeLists.txt's GLOB_RECURSE minus tests.
    cpu = Path(root) / "kernels/portable/cpu"
    globbed = {p.relative_to(root).as_posix() for p in cpu.rglob("*.cpp")
               if "test" not in p.relative_to(cpu).parts}
    assert set(ops + utils) == globbed - unregistered


# --- cache --------------------------------------------------------------------------


def test_cache_warm_call_is_fast(root, tmp_path, monkeypatch):
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path / "cache"))
    et_index.forget()
    cold = plan(root, ["aten::add.out"])
    assert list((tmp_path / "cache").glob("*.json"))
    et_index.forget()  # as in a new SCons run
    t0 = time.perf_counter()
    et_index.core_sources(root)
    warm = plan(root, ["aten::add.out"])
    elapsed = time.perf_counter() - t0
    assert warm == cold
    assert elapsed < 0.1, "warm call took %.0f ms" % (elapsed * 1e3)


def test_corrupt_cache_is_rebuilt(root, tmp_path, monkeypatch):
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path / "cache"))
    et_index.forget()
    expected_core = et_index.core_sources(root)
    for f in (tmp_path / "cache").glob("*.json"):
        f.write_text("{not json")
    et_index.forget()
    assert et_index.core_sources(root) == expected_core


def test_entries_of_trees_that_are_gone_are_removed(root, tmp_path, monkeypatch):
    """Each tree has an entry, by its real path. A tree that is gone (a copy a test or a
    benchmark made, a clone deleted) leaves its entry behind until the next entry is
    written, which removes it: the cache does not grow with every copy ever built."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("COREV_ET_CACHE", str(cache))
    copy = tmp_path / "copy" / "executorch"
    _partial_copy(root, copy)
    et_index.forget()
    et_index.core_sources(copy)
    (gone,) = cache.glob("et-*.json")
    assert json.loads(gone.read_text())["real_root"] == str(copy)
    (cache / "et-not-json.json").write_text("{not json")
    import shutil
    shutil.rmtree(copy)
    et_index.forget()
    et_index.core_sources(root)
    (kept,) = cache.glob("et-*.json")
    assert json.loads(kept.read_text())["real_root"] == os.path.realpath(str(root))


def test_cache_disabled(root, tmp_path, monkeypatch):
    monkeypatch.setenv("COREV_ET_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    et_index.forget()
    assert usercache.cache_root() is None
    et_index.core_sources(root)
    assert not list(tmp_path.rglob("*.json"))


def _partial_copy(root, dst):
    """Copy the parts of an ExecuTorch tree that source selection reads."""
    import shutil

    root = Path(root)
    for rel in (
        "version.txt",
        "runtime/executor/program.h",
        "shim_et/xplat/executorch/build/build_variables.bzl",
        "shim_et/xplat/executorch/kernels/portable/op_registration_util.bzl",
    ):
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, dst / rel)
    for rel in ("runtime/platform/default", "kernels/prim_ops", "kernels/portable", "kernels/quantized"):
        shutil.copytree(root / rel, dst / rel, ignore=shutil.ignore_patterns("test", "*.h"))


def test_cache_invalidation_and_include_fallback(root, tmp_path, monkeypatch):
    """Editing a Buck file re-reads the tree; an op file that no Buck target
    builds gets its helpers from its #includes."""
    copy = tmp_path / "executorch"
    _partial_copy(root, copy)
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path / "cache"))
    et_index.forget()
    [before] = plan(copy, ["aten::add.out"]).kernel_sets

    bzl = copy / "shim_et/xplat/executorch/kernels/portable/op_registration_util.bzl"
    text = bzl.read_text()
    edited = re.sub(r'op_target\(\s*name = "op_add",.*?\),\n', "", text, count=1, flags=re.S)
    assert edited != text
    bzl.write_text(edited)
    et_index.forget()
    [after] = plan(copy, ["aten::add.out"]).kernel_sets
    notes = et_index.tree_index(copy)["notes"]
    assert any("op_add.cpp: no Buck target" in n for n in notes)
    assert after.op_sources == before.op_sources
    assert set(after.util_sources) == set(before.util_sources)
