"""Source selection from an ExecuTorch tree (site_scons/etcorev/etsources.py).

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

from etcorev import etsources
from etcorev.etsources import ETSourceError

MODELS = Path(__file__).resolve().parent.parent.parent / "shared" / "models"

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
    etsources._clear_memo()
    if request.param is None:
        return request.getfixturevalue("et_root")
    return Path(request.param)


def expected(root, key):
    version = etsources.detect_version(root)
    if version not in EXPECTED:
        pytest.skip("no expected %s for ExecuTorch %s" % (key, version))
    return EXPECTED[version][key]


def exists_all(root, paths):
    missing = [p for p in paths if not (Path(root) / p).is_file()]
    assert not missing, missing


# --- tree checks --------------------------------------------------------------


def test_check_tree_returns_version(root):
    version = etsources.check_tree(root)
    assert version == etsources.detect_version(root)
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)


@pytest.mark.parametrize(
    "text, version",
    [("1.4.1\n", "1.4.1"), ("1.0.0a0\n", "1.0.0"), ("0.7.0+git1234", "0.7.0"), ("junk", None)],
)
def test_detect_version_from_version_txt(tmp_path, text, version):
    (tmp_path / "version.txt").write_text(text)
    assert etsources.detect_version(tmp_path) == version


def test_detect_version_without_version_txt(tmp_path):
    assert etsources.detect_version(tmp_path) is None


def test_missing_dir_raises(tmp_path):
    with pytest.raises(ETSourceError, match="does not exist"):
        etsources.check_tree(tmp_path / "executorch")


def test_bogus_dir_raises(tmp_path):
    bogus = tmp_path / "executorch"
    bogus.mkdir()
    (bogus / "README.md").write_text("not ExecuTorch")
    with pytest.raises(ETSourceError, match="does not look like an ExecuTorch") as exc:
        etsources.core_sources(bogus)
    assert "build_variables.bzl" in str(exc.value)


def test_dir_not_named_executorch_raises(root, tmp_path):
    link = tmp_path / "et-src"
    link.symlink_to(Path(root).resolve(), target_is_directory=True)
    with pytest.raises(ETSourceError, match="must be named 'executorch'") as exc:
        etsources.check_tree(link)
    assert "include path" in str(exc.value)
    assert str(tmp_path) in str(exc.value)


# --- core and prim ops ------------------------------------------------------------


def test_core_sources(root):
    n = expected(root, "core")
    core = etsources.core_sources(root, pal=None)
    assert len(core) == n
    assert not [s for s in core if s.startswith("runtime/platform/default/")]
    exists_all(root, core)
    with_pal = etsources.core_sources(root)
    assert with_pal == core + ["runtime/platform/default/minimal.cpp"]
    assert etsources.core_sources(root, pal="posix")[-1] == "runtime/platform/default/posix.cpp"


def test_unknown_pal_raises(root):
    with pytest.raises(ETSourceError, match="minimal"):
        etsources.core_sources(root, pal="nosuchpal")


def test_prim_ops_sources(root):
    srcs = etsources.prim_ops_sources(root)
    assert len(srcs) == 3
    assert all(s.startswith("kernels/prim_ops/") for s in srcs)
    exists_all(root, srcs)
    assert "executorch_prim::et_view.default" in etsources.prim_ops(root)


# --- kernel libraries ----------------------------------------------------------------


def test_kernel_libraries(root):
    libs = {lib.name: lib for lib in etsources.kernel_libraries(root)}
    assert list(libs) == ["portable", "quantized"]
    assert libs["portable"].yaml_paths == (
        "kernels/portable/functions.yaml",
        "kernels/portable/custom_ops.yaml",
    )
    assert libs["quantized"].yaml_paths == (None, "kernels/quantized/quantized.yaml")
    for lib in libs.values():
        exists_all(root, [p for p in lib.yaml_paths if p])
    assert "aten::add.out" in libs["portable"].ops
    assert "aten::allclose.out" in libs["portable"].ops  # from custom_ops.yaml
    assert "dim_order_ops::_to_dim_order_copy.out" in libs["portable"].ops
    assert "quantized_decomposed::quantize_per_tensor.out" in libs["quantized"].ops
    assert all("::" in op for lib in libs.values() for op in lib.ops)


def test_op_add_selection(root):
    sel = etsources.select_kernel_sources(root, ["aten::add.out"])
    assert [lib.name for lib in sel.libraries] == ["portable"]
    lib = sel["portable"]
    assert lib.ops == ("aten::add.out",)
    assert lib.op_sources == ("kernels/portable/cpu/op_add.cpp",)
    # op_add -> broadcast_util (broadcast_util.cpp + delinearize_index.cpp),
    # dtype_util, kernel_ops_util; broadcast_util.cpp calls repeat_tensor(),
    # so broadcast_util depends on repeat_util.
    util = "kernels/portable/cpu/util/"
    assert set(lib.util_sources) == {
        util + "broadcast_util.cpp",
        util + "delinearize_index.cpp",
        util + "dtype_util.cpp",
        util + "kernel_ops_util.cpp",
        util + "repeat_util.cpp",
    }
    assert sel.sources == lib.op_sources + lib.util_sources


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
    sel = etsources.select_kernel_sources(root, [op])
    assert sel["portable"].op_sources == ("kernels/portable/cpu/" + source,)


def test_quantized_selection(root):
    sel = etsources.select_kernel_sources(
        root,
        ["quantized_decomposed::dequantize_per_tensor.out", "aten::relu.out"],
    )
    assert [lib.name for lib in sel.libraries] == ["portable", "quantized"]
    q = sel["quantized"]
    assert q.op_sources == ("kernels/quantized/cpu/op_dequantize.cpp",)
    assert q.util_sources == ("kernels/portable/cpu/util/reduce_util.cpp",)
    assert len(sel.sources) == len(set(sel.sources))


def _manifest_models():
    out = []
    for manifest in (MODELS / "manifest.json", MODELS / "quantized" / "manifest.json"):
        if manifest.is_file():
            for name, model in json.loads(manifest.read_text()).items():
                out.append(pytest.param(model["operators"], id=name))
    return out or [pytest.param(None, id="no-models")]


@pytest.mark.parametrize("operators", _manifest_models())
def test_manifest_models_resolve(root, operators):
    if operators is None:
        pytest.skip("no model manifest in %s" % MODELS)
    sel = etsources.select_kernel_sources(root, operators)
    assert set(sel.ops) | set(sel.prim_ops) == set(operators)
    assert sel.op_sources
    exists_all(root, sel.sources)
    assert len(sel.sources) == len(set(sel.sources))


def test_unknown_op_raises(root):
    with pytest.raises(ETSourceError) as exc:
        etsources.select_kernel_sources(
            root, ["aten::add.out", "aten::foo.out", "bogus::bar.baz"]
        )
    msg = str(exc.value)
    assert "aten::foo.out" in msg and "bogus::bar.baz" in msg
    assert "aten::add.out" not in msg.split("(")[0]
    assert "portable: kernels/portable/functions.yaml" in msg
    assert "quantized: kernels/quantized/quantized.yaml" in msg


def test_library_restriction(root):
    op = "quantized_decomposed::quantize_per_tensor.out"
    with pytest.raises(ETSourceError, match="not searched: quantized"):
        etsources.select_kernel_sources(root, [op], libraries=["portable"])
    with pytest.raises(ETSourceError, match="Unknown kernel library"):
        etsources.select_kernel_sources(root, [op], libraries=["nosuchlib"])


def test_prim_ops_are_not_errors(root):
    sel = etsources.select_kernel_sources(
        root, ["aten::add.out", "executorch_prim::et_view.default"]
    )
    assert sel.prim_ops == ("executorch_prim::et_view.default",)
    assert sel.ops == ("aten::add.out",)


def test_all_is_cmake_portable_kernels(root):
    n_ops = expected(root, "portable_ops")
    sel = etsources.select_kernel_sources(root, "all")
    assert [lib.name for lib in sel.libraries] == ["portable"]
    lib = sel["portable"]
    assert len(lib.op_sources) == n_ops
    assert all(
        re.fullmatch(r"kernels/portable/cpu/op_\w+\.cpp", s) for s in lib.op_sources
    )
    assert all(
        re.match(r"kernels/portable/cpu/(util|pattern)/", s) for s in lib.util_sources
    )
    # Same files as kernels/portable/CMakeLists.txt's GLOB_RECURSE minus tests.
    cpu = Path(root) / "kernels/portable/cpu"
    globbed = {
        p.relative_to(root).as_posix()
        for p in cpu.rglob("*.cpp")
        if "test" not in p.relative_to(cpu).parts
    }
    assert set(lib.sources) == globbed
    assert set(lib.ops) == next(
        l.ops for l in etsources.kernel_libraries(root) if l.name == "portable"
    )


# --- cache --------------------------------------------------------------------------


def test_cache_warm_call_is_fast(root, tmp_path, monkeypatch):
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path / "cache"))
    etsources._clear_memo()
    cold = etsources.select_kernel_sources(root, ["aten::add.out"])
    assert list((tmp_path / "cache").glob("*.json"))
    etsources._clear_memo()  # as in a new SCons run
    t0 = time.perf_counter()
    etsources.core_sources(root)
    warm = etsources.select_kernel_sources(root, ["aten::add.out"])
    elapsed = time.perf_counter() - t0
    assert warm == cold
    assert elapsed < 0.1, "warm call took %.0f ms" % (elapsed * 1e3)


def test_corrupt_cache_is_rebuilt(root, tmp_path, monkeypatch):
    monkeypatch.setenv("COREV_ET_CACHE", str(tmp_path / "cache"))
    etsources._clear_memo()
    expected_core = etsources.core_sources(root)
    for f in (tmp_path / "cache").glob("*.json"):
        f.write_text("{not json")
    etsources._clear_memo()
    assert etsources.core_sources(root) == expected_core


def test_cache_disabled(root, tmp_path, monkeypatch):
    monkeypatch.setenv("COREV_ET_CACHE", "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    etsources._clear_memo()
    assert etsources.cache_dir() is None
    etsources.core_sources(root)
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
    etsources._clear_memo()
    before = etsources.select_kernel_sources(copy, ["aten::add.out"])["portable"]

    bzl = copy / "shim_et/xplat/executorch/kernels/portable/op_registration_util.bzl"
    text = bzl.read_text()
    edited = re.sub(r'op_target\(\s*name = "op_add",.*?\),\n', "", text, count=1, flags=re.S)
    assert edited != text
    bzl.write_text(edited)
    etsources._clear_memo()
    after = etsources.select_kernel_sources(copy, ["aten::add.out"])["portable"]
    notes = etsources._index(copy)["notes"]
    assert any("op_add.cpp: no Buck target" in n for n in notes)
    assert after.op_sources == before.op_sources
    assert set(after.util_sources) == set(before.util_sources)
