"""The source index of an ExecuTorch tree: core and prim-op sources (build_variables.bzl),
the kernel libraries' operators and sources, and the Buck targets linking them.

Reading the tree takes about a second; the index is kept in memory for the run and on
disk in the per-user cache (etcorev.scons.usercache), keyed by the stamp (size, mtime) of every
file and directory read and of this code, so a warm run costs a few stats.
"""

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Dict, List, Optional

from etcorev.scons import usercache
from etcorev.executorch import buck, kernel_sources
from etcorev.executorch.et_tree import ETSourceError, TreeReader, check_tree, detect_version, stamp

PAL_DIR = "runtime/platform/default"
_CODE = [buck.__file__, kernel_sources.__file__, __file__,
         os.path.join(os.path.dirname(__file__), "et_tree.py")]
_MEMO: Dict[str, dict] = {}


def _code_stamp() -> list:
    """What invalidates cached indexes: this code and the library table."""
    return [stamp(path) for path in _CODE] + [repr(kernel_sources.TREE_LIBRARIES)]


def tree_index(root) -> dict:
    check_tree(root)
    path = os.path.abspath(os.path.expanduser(str(root)))
    real = os.path.realpath(path)
    idx = _MEMO.get(real)
    if idx is None:
        cache_file = _cache_file(real)
        idx = _load(cache_file, real) if cache_file else None
        if idx is None:
            idx = _build(Path(real))
            if cache_file:
                _store(cache_file, idx)
        _MEMO[real] = idx
    return dict(idx, root=path)


def forget() -> None:
    """Drop in-process results (tests; a new SCons run starts without them)."""
    _MEMO.clear()


def core_sources(root, pal: Optional[str] = "minimal") -> List[str]:
    """executorch_core: EXECUTORCH_CORE_SRCS plus one PAL file of runtime/platform/default
    (`minimal` defines the et_pal_* functions weak, so a board overrides them), last, as
    in ExecuTorch's CMakeLists.txt."""
    idx = tree_index(root)
    if pal is None:
        return list(idx["core"])
    if pal not in idx["pal_choices"]:
        raise ETSourceError("Unknown PAL %r: the ExecuTorch tree %s provides %s in %s/."
                            % (pal, idx["root"], ", ".join(idx["pal_choices"]) or "none", PAL_DIR))
    return idx["core"] + ["%s/%s.cpp" % (PAL_DIR, pal)]


def prim_ops_sources(root) -> List[str]:
    """EXECUTORCH_SRCS: the prim-op kernels, which register themselves."""
    return list(tree_index(root)["prim_ops_sources"])


def prim_ops(root) -> frozenset:
    """Operators the prim ops register, e.g. `aten::sym_size.int`."""
    return frozenset(tree_index(root)["prim_ops"])


# ---- building

def _build(root: Path) -> dict:
    reader = TreeReader(root)
    reader.note("version.txt")
    build_vars = buck.exec_build_variables(reader)
    core = [s for s in build_vars.get("EXECUTORCH_CORE_SRCS", [])
            if not re.search(r"runtime/platform/default/[^/]*\.cpp$", s)]
    if not core:
        raise ETSourceError("%s/%s defines no EXECUTORCH_CORE_SRCS; this ExecuTorch version "
                            "is not supported." % (root, buck.BUILD_VARIABLES))
    prim_sources = build_vars.get("EXECUTORCH_SRCS", [])
    prim = set()
    for src in prim_sources:
        if reader.exists(src):
            prim.update(re.findall(r'"([A-Za-z_]\w*::[\w.]+)"', reader.text(src)))

    evaluator = buck.BuckEvaluator(reader, build_vars)
    libraries = [lib for lib in kernel_sources.TREE_LIBRARIES
                 if not lib.optional or reader.exists(lib.yaml)]
    for lib in libraries:
        for package in lib.packages:
            evaluator.evaluate_package(package, required=True)
    evaluator.follow_deps(kernel_sources.KERNEL_PACKAGE_PREFIX)
    notes: List[str] = []
    library_index = {lib.name: kernel_sources.index_library(reader, lib, notes)
                     for lib in libraries}
    evaluator.add_include_targets(sorted({
        f for lib in library_index.values()
        for f in [s for files in lib["ops"].values() for s in files] + lib["all_op_sources"]}))
    file_targets: Dict[str, List[str]] = {}
    for label, target in sorted(evaluator.targets.items()):
        for src in target["srcs"]:
            file_targets.setdefault(src, []).append(label)
    return {
        "code": _code_stamp(),
        "real_root": str(root),
        "version": detect_version(root),
        "core": core,
        "prim_ops_sources": prim_sources,
        "pal_choices": [n[:-4] for n in reader.listdir(PAL_DIR) if n.endswith(".cpp")],
        "prim_ops": sorted(prim),
        "libraries": library_index,
        "targets": evaluator.targets,
        "file_targets": file_targets,
        "notes": notes + evaluator.notes,
        "inputs": dict(sorted(reader.inputs.items())),
    }


# ---- the disk cache

def _cache_file(real: str) -> Optional[Path]:
    root = usercache.cache_root()
    if root is None:
        return None
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:20]
    return root / ("et-%s.json" % digest)


def _load(cache_file: Path, real: str) -> Optional[dict]:
    try:
        with open(cache_file, encoding="utf-8") as f:
            idx = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(idx, dict) or idx.get("real_root") != real \
            or idx.get("code") != json.loads(json.dumps(_code_stamp())):
        return None
    if any(stamp(os.path.join(real, rel)) != st for rel, st in idx.get("inputs", {}).items()):
        return None
    return idx


def _store(cache_file: Path, idx: dict) -> None:
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=str(cache_file.parent), prefix=".et-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(idx, f, separators=(",", ":"), sort_keys=True)
        os.replace(tmp, str(cache_file))
    except OSError:
        pass      # a cache we cannot write only costs time
    _remove_entries_of_trees_gone(cache_file.parent, keep=cache_file)


def _remove_entries_of_trees_gone(directory: Path, keep: Path) -> None:
    """Entries whose tree no longer exists (copies made by tests and benchmarks, clones
    deleted), and unreadable ones: removed whenever an entry is written, so that the
    cache does not grow with every tree ever built."""
    for entry in directory.glob("et-*.json"):
        if entry == keep:
            continue
        try:
            with open(entry, encoding="utf-8") as f:
                real = json.load(f).get("real_root")
        except (OSError, ValueError, AttributeError):
            real = None
        if not (isinstance(real, str) and os.path.isdir(real)):
            try:
                entry.unlink()
            except OSError:
                pass
