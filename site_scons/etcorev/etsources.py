"""Choose ExecuTorch source files the way ExecuTorch's own build does.

Nothing here lists ExecuTorch files: every list is read from the ExecuTorch
tree the build is pointed at.  The rules are:

* Core runtime and prim ops: ``shim_et/xplat/executorch/build/build_variables.bzl``
  is valid Python, and ExecuTorch's CMake ``exec()``s it
  (``executorch_append_filelist`` in ``tools/cmake/Codegen.cmake``).  We do the
  same.  ``EXECUTORCH_CORE_SRCS`` minus ``runtime/platform/default/*.cpp`` plus
  one PAL file from ``runtime/platform/default/`` is the ``executorch_core``
  library; ``EXECUTORCH_SRCS`` are the prim ops (registered by static
  initializers, so they must be linked whole).

* Kernel libraries (``portable``, ``quantized``): the operators a library
  provides are the entries of its kernel YAML files.  An operator's source file
  is ``op_<base>.cpp`` if that file defines the YAML ``kernel_name`` function,
  otherwise whichever ``.cpp`` in the library directory defines it.

* Helper sources an operator needs (``kernels/portable/cpu/util/*.cpp``,
  ``pattern/*.cpp``, ``kernels/quantized/cpu/embeddingxb.cpp``...): the Buck
  files (``targets.bzl``, ``op_registration_util.bzl``) are executed with stub
  ``runtime``/``select``/``load`` so that every ``runtime.cxx_library(...)`` call
  is recorded; an operator's sources are the ``srcs`` of the transitive
  ``deps``/``exported_deps`` of the target that builds its file.  Dependencies
  outside the kernel directories (runtime core, headers-only, threadpool...)
  are dropped and listed in ``Selection.dropped_deps``.  ``select()`` takes
  its DEFAULT branch.  An op file that no Buck target builds gets the targets
  that export the headers it ``#include``s.

* ``ops="all"`` mirrors CMake's ``portable_kernels``: every ``.cpp`` under
  ``kernels/portable/cpu`` (recursively, minus tests).

Parsed results are cached per tree in a JSON file keyed by the size and mtime
of every file and directory read (``$COREV_ET_CACHE``, else
``$XDG_CACHE_HOME/corev-et``, else ``~/.cache/corev-et``; ``COREV_ET_CACHE=off``
disables the disk cache).  All returned paths are relative to the ExecuTorch
root and use ``/``.

Pure Python: standard library, plus PyYAML when (re)building the cache.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple, Union

__all__ = [
    "ETSourceError",
    "KernelLibrary",
    "LibrarySelection",
    "Selection",
    "build_variables",
    "cache_dir",
    "check_tree",
    "core_sources",
    "detect_version",
    "kernel_libraries",
    "kernels_util_all_deps_sources",
    "pal_choices",
    "prim_ops",
    "prim_ops_sources",
    "select_kernel_sources",
]

# Bump when the layout of the cached index or the rules below change.
_CACHE_FORMAT = 1

_BUILD_VARIABLES = "shim_et/xplat/executorch/build/build_variables.bzl"
_SHIM_ROOT = "shim_et/xplat/executorch"
_PROGRAM_H = "runtime/executor/program.h"
_PAL_DIR = "runtime/platform/default"
_PRIM_OPS_REGISTRATION = "kernels/prim_ops/register_prim_ops.cpp"


class ETSourceError(Exception):
    """A problem with the ExecuTorch tree or the requested operators.

    The message is one paragraph meant for the person running the build.
    """


# --------------------------------------------------------------------------
# Kernel library rules (which YAML, which directory); the files come from the
# tree.


@dataclass(frozen=True)
class _LibraryRule:
    name: str
    functions_yaml: Optional[str]
    custom_ops_yaml: Optional[str]
    src_dir: str
    # Packages whose targets.bzl define the library's op and helper targets.
    packages: Tuple[str, ...]
    # For ops="all": directories whose .cpp files (recursively, CMake-style
    # test filter) are all compiled, like CMake's portable_kernels glob.
    all_globs: Tuple[str, ...] = ()
    # Left out (instead of an error) when the tree lacks its YAML.
    optional: bool = False


_LIBRARY_RULES: Tuple[_LibraryRule, ...] = (
    _LibraryRule(
        name="portable",
        functions_yaml="kernels/portable/functions.yaml",
        custom_ops_yaml="kernels/portable/custom_ops.yaml",
        src_dir="kernels/portable/cpu",
        packages=(
            "kernels/portable/cpu",
            "kernels/portable/cpu/util",
            "kernels/portable/cpu/pattern",
        ),
        all_globs=("kernels/portable/cpu",),
    ),
    _LibraryRule(
        name="quantized",
        functions_yaml=None,
        custom_ops_yaml="kernels/quantized/quantized.yaml",
        src_dir="kernels/quantized/cpu",
        packages=("kernels/quantized/cpu",),
        optional=True,
    ),
)

# Dependencies are followed (and their targets.bzl evaluated) only inside this
# part of the tree; anything else is core runtime, headers or optional
# extensions and is dropped.
_KERNEL_PACKAGE_PREFIX = "kernels/"


@dataclass(frozen=True)
class KernelLibrary:
    """A kernel library of the tree (``portable`` or ``quantized``)."""

    name: str
    #: ``(functions_yaml, custom_ops_yaml)``, relative to the root; either may
    #: be None.  Pass them to ExecuTorch's codegen as FUNCTIONS_YAML /
    #: CUSTOM_OPS_YAML.
    yaml_paths: Tuple[Optional[str], Optional[str]]
    #: Directory of the library's op_*.cpp files, relative to the root.
    src_dir: str
    #: Operators as a model spells them, e.g. ``aten::add.out``.
    ops: FrozenSet[str]

    @property
    def functions_yaml(self) -> Optional[str]:
        return self.yaml_paths[0]

    @property
    def custom_ops_yaml(self) -> Optional[str]:
        return self.yaml_paths[1]

    def describe(self) -> str:
        return "%s: %s" % (self.name, ", ".join(p for p in self.yaml_paths if p))


@dataclass(frozen=True)
class LibrarySelection:
    """What one kernel library contributes to a selection."""

    name: str
    yaml_paths: Tuple[Optional[str], Optional[str]]
    #: Operators of this library that were selected (sorted).
    ops: Tuple[str, ...]
    #: The op_*.cpp files implementing them.
    op_sources: Tuple[str, ...]
    #: Helper sources they need (util/, pattern/, ...).  Two libraries may
    #: need the same helper (quantized dequantize uses portable reduce_util);
    #: use ``Selection.sources`` to get each file once.
    util_sources: Tuple[str, ...]

    @property
    def sources(self) -> Tuple[str, ...]:
        return self.op_sources + self.util_sources


@dataclass(frozen=True)
class Selection:
    """Result of :func:`select_kernel_sources`."""

    root: str
    version: Optional[str]
    #: Libraries that provide at least one selected operator, in search order.
    libraries: Tuple[LibrarySelection, ...]
    #: Requested operators that the prim ops (always linked) provide.
    prim_ops: Tuple[str, ...] = ()
    #: Dependencies that were not followed (outside the kernel directories:
    #: core runtime, header-only libraries, threadpool ...), for debugging.
    dropped_deps: Tuple[str, ...] = ()

    def library(self, name: str) -> LibrarySelection:
        for lib in self.libraries:
            if lib.name == name:
                return lib
        raise KeyError(name)

    def __getitem__(self, name: str) -> LibrarySelection:
        return self.library(name)

    @property
    def ops(self) -> Tuple[str, ...]:
        return tuple(sorted({op for lib in self.libraries for op in lib.ops}))

    @property
    def op_sources(self) -> Tuple[str, ...]:
        return _unique(s for lib in self.libraries for s in lib.op_sources)

    @property
    def util_sources(self) -> Tuple[str, ...]:
        ops = set(self.op_sources)
        return _unique(
            s for lib in self.libraries for s in lib.util_sources if s not in ops
        )

    @property
    def sources(self) -> Tuple[str, ...]:
        """Every kernel source of the selection, each once."""
        return self.op_sources + self.util_sources


def _unique(items: Iterable[str]) -> Tuple[str, ...]:
    seen: Dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(seen)


# --------------------------------------------------------------------------
# Tree checks


def detect_version(root) -> Optional[str]:
    """Return the ExecuTorch version of the tree, e.g. ``"1.4.1"``, or None.

    Read from ``version.txt`` at the root, as ExecuTorch's setup.py and CMake
    do.  Pre-release suffixes are dropped (the v1.0.0 tag says ``1.0.0a0``).
    """
    try:
        text = (Path(root) / "version.txt").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        return None
    return "%s.%s.%s" % (m.group(1), m.group(2), m.group(3) or "0")


def check_tree(root) -> Optional[str]:
    """Check that *root* is a usable ExecuTorch source tree; return its version.

    Raises :class:`ETSourceError` if the directory is missing, does not look
    like an ExecuTorch tree, or is not named ``executorch``.
    """
    if root is None or str(root) == "":
        raise ETSourceError(
            "No ExecuTorch source tree given: set executorch= to the directory "
            "that holds ExecuTorch's runtime/, kernels/ and shim_et/ "
            "(a checkout or extracted release of pytorch/executorch)."
        )
    path = Path(os.path.abspath(os.path.expanduser(str(root))))
    if not path.is_dir():
        raise ETSourceError(
            "The ExecuTorch source tree %s does not exist or is not a "
            "directory: set executorch= to the directory that holds "
            "ExecuTorch's runtime/, kernels/ and shim_et/." % path
        )
    missing = [p for p in (_BUILD_VARIABLES, _PROGRAM_H) if not (path / p).is_file()]
    if missing:
        raise ETSourceError(
            "%s does not look like an ExecuTorch source tree: %s %s missing. "
            "Set executorch= to the top directory of a checkout or extracted "
            "release of pytorch/executorch (the one that holds runtime/, "
            "kernels/ and shim_et/; git submodules are not needed)."
            % (path, " and ".join(missing), "is" if len(missing) == 1 else "are")
        )
    if path.name != "executorch":
        raise ETSourceError(
            "The ExecuTorch source tree %s is in a directory named %r, but it "
            "must be named 'executorch': ExecuTorch sources include their own "
            "headers as <executorch/runtime/...>, so the build puts the parent "
            "directory (%s) on the include path. Rename the directory, or "
            "create a symlink named executorch that points to it and use that."
            % (path, path.name, path.parent)
        )
    return detect_version(path)


# --------------------------------------------------------------------------
# Public accessors


def build_variables(root) -> Dict[str, List[str]]:
    """All file lists (``NAME_SRCS = [...]``) of build_variables.bzl."""
    return {k: list(v) for k, v in _index(root)["build_variables"].items()}


def pal_choices(root) -> List[str]:
    """PAL implementations in runtime/platform/default (``posix``, ``minimal``...)."""
    return list(_index(root)["pal_choices"])


def core_sources(root, pal: Optional[str] = "minimal") -> List[str]:
    """Sources of ``executorch_core``: EXECUTORCH_CORE_SRCS plus one PAL file.

    *pal* names a file of ``runtime/platform/default/`` without ``.cpp``
    (``minimal`` defines the ``et_pal_*`` functions weak, so a board can
    override them; ``posix`` needs a hosted C library).  ``None`` leaves the
    PAL out.  The PAL file comes last, as in ExecuTorch's CMakeLists.txt.
    """
    idx = _index(root)
    core = [
        s
        for s in idx["build_variables"].get("EXECUTORCH_CORE_SRCS", [])
        if not re.search(r"runtime/platform/default/[^/]*\.cpp$", s)
    ]
    if not core:
        raise ETSourceError(
            "%s defines no EXECUTORCH_CORE_SRCS; this ExecuTorch version is not "
            "supported." % _BUILD_VARIABLES
        )
    if pal:
        if pal not in idx["pal_choices"]:
            raise ETSourceError(
                "Unknown PAL %r: the ExecuTorch tree %s provides %s in %s/ "
                "(a board can also override the weak et_pal_* functions of "
                "'minimal')."
                % (pal, idx["root"], ", ".join(idx["pal_choices"]) or "none", _PAL_DIR)
            )
        core.append("%s/%s.cpp" % (_PAL_DIR, pal))
    return core


def prim_ops_sources(root) -> List[str]:
    """EXECUTORCH_SRCS: the prim-op kernels (link them whole: they register
    themselves from static initializers)."""
    return list(_index(root)["build_variables"].get("EXECUTORCH_SRCS", []))


def kernels_util_all_deps_sources(root) -> List[str]:
    """KERNELS_UTIL_ALL_DEPS_SRCS (CMake's kernels_util_all_deps library)."""
    return list(_index(root)["build_variables"].get("KERNELS_UTIL_ALL_DEPS_SRCS", []))


def prim_ops(root) -> FrozenSet[str]:
    """Operator names registered by the prim ops, e.g. ``aten::sym_size.int``."""
    return frozenset(_index(root)["prim_ops"])


def kernel_libraries(root) -> List[KernelLibrary]:
    """Kernel libraries of the tree in search order (portable, quantized)."""
    idx = _index(root)
    return [_make_library(name, data) for name, data in idx["libraries"].items()]


def _make_library(name: str, data: dict) -> KernelLibrary:
    return KernelLibrary(
        name=name,
        yaml_paths=(data["yaml_paths"][0], data["yaml_paths"][1]),
        src_dir=data["src_dir"],
        ops=frozenset(data["ops"]),
    )


def select_kernel_sources(
    root,
    ops: Union[str, Iterable[str]],
    libraries: Optional[Sequence[Union[str, KernelLibrary]]] = None,
) -> Selection:
    """Choose the kernel sources that implement *ops*.

    *ops* are operator names as a model spells them (``aten::add.out``,
    ``quantized_decomposed::quantize_per_tensor.out``; a name without a
    namespace means ``aten::``), or ``"all"`` for every source of the portable
    library (or of each library in *libraries*).  *libraries* restricts and
    orders the libraries searched (names or :class:`KernelLibrary`); by default
    all of them, portable first.  An operator is taken from the first library
    that has it.  Operators provided by the prim ops are reported in
    ``Selection.prim_ops``.  Raises :class:`ETSourceError` naming every
    operator that no searched library provides.
    """
    idx = _index(root)
    all_libs = idx["libraries"]
    if libraries is None:
        names = list(all_libs) if ops != "all" else ["portable"]
    else:
        names = []
        for lib in libraries:
            name = lib.name if isinstance(lib, KernelLibrary) else str(lib)
            if name not in all_libs:
                raise ETSourceError(
                    "Unknown kernel library %r: the ExecuTorch tree %s has %s."
                    % (name, idx["root"], ", ".join(all_libs))
                )
            if name not in names:
                names.append(name)
    dropped: set = set()

    if isinstance(ops, str):
        if ops != "all":
            raise ETSourceError(
                "ops must be a list of operator names or the string 'all', not %r."
                % ops
            )
        selected = []
        for name in names:
            data = all_libs[name]
            op_srcs = list(data["all_op_sources"])
            utils = _closure_sources(
                idx, [s for f in op_srcs for s in _targets_for(idx, f)], dropped
            )
            utils.update(data["all_glob_sources"])
            utils.difference_update(op_srcs)
            selected.append(
                LibrarySelection(
                    name=name,
                    yaml_paths=tuple(data["yaml_paths"]),
                    ops=tuple(sorted(data["ops"])),
                    op_sources=tuple(sorted(op_srcs)),
                    util_sources=tuple(sorted(utils)),
                )
            )
        return Selection(
            root=idx["root"],
            version=idx["version"],
            libraries=tuple(selected),
            dropped_deps=tuple(sorted(dropped)),
        )

    wanted = _unique(_normalize_op(op) for op in ops)
    prim = set(idx["prim_ops"])
    per_lib: Dict[str, List[str]] = {name: [] for name in names}
    unknown = []
    prim_found = []
    for op in wanted:
        for name in names:
            if op in all_libs[name]["ops"]:
                per_lib[name].append(op)
                break
        else:
            if op in prim:
                prim_found.append(op)
            else:
                unknown.append(op)
    if unknown:
        raise ETSourceError(_unknown_ops_message(idx, unknown, names))

    selected = []
    unresolved = []
    for name in names:
        lib_ops = sorted(per_lib[name])
        if not lib_ops:
            continue
        data = all_libs[name]
        op_srcs: List[str] = []
        for op in lib_ops:
            files = data["ops"][op]
            if not files:
                unresolved.append((op, name, data["kernel_names"].get(op, [])))
            op_srcs.extend(files)
        op_srcs = sorted(set(op_srcs))
        starts = [t for f in op_srcs for t in _targets_for(idx, f)]
        utils = _closure_sources(idx, starts, dropped)
        utils.difference_update(op_srcs)
        selected.append(
            LibrarySelection(
                name=name,
                yaml_paths=tuple(data["yaml_paths"]),
                ops=tuple(lib_ops),
                op_sources=tuple(op_srcs),
                util_sources=tuple(sorted(utils)),
            )
        )
    if unresolved:
        raise ETSourceError(
            "No source file in the ExecuTorch tree %s defines the kernel of %s; "
            "the kernel YAML names a function that no .cpp of the library "
            "defines, so this ExecuTorch version is not supported by these "
            "build rules."
            % (
                idx["root"],
                "; ".join(
                    "%s (%s library, kernel %s)" % (op, lib, ", ".join(k) or "none")
                    for op, lib, k in unresolved
                ),
            )
        )
    return Selection(
        root=idx["root"],
        version=idx["version"],
        libraries=tuple(selected),
        prim_ops=tuple(sorted(prim_found)),
        dropped_deps=tuple(sorted(dropped)),
    )


def _normalize_op(op: str) -> str:
    op = str(op).strip()
    return op if "::" in op else "aten::" + op


def _unknown_ops_message(idx: dict, unknown: List[str], names: List[str]) -> str:
    import difflib

    libs = "; ".join(
        "%s: %s" % (n, ", ".join(p for p in idx["libraries"][n]["yaml_paths"] if p))
        for n in names
    )
    known = [op for n in idx["libraries"] for op in idx["libraries"][n]["ops"]]
    hints = []
    for op in unknown:
        close = difflib.get_close_matches(op, known, n=3, cutoff=0.75)
        if close:
            hints.append("%s (did you mean %s?)" % (op, " or ".join(close)))
        else:
            hints.append(op)
    where = [n for n in idx["libraries"] if n not in names]
    other = ""
    if where:
        found_elsewhere = [
            op for op in unknown for n in where if op in idx["libraries"][n]["ops"]
        ]
        if found_elsewhere:
            other = " (%s %s in a library that was not searched: %s)" % (
                ", ".join(found_elsewhere),
                "is" if len(found_elsewhere) == 1 else "are",
                ", ".join(where),
            )
    return (
        "Operator%s %s %s not in any kernel library searched (%s) of the "
        "ExecuTorch %s tree at %s%s. Check the operator names (as the model "
        "lists them, e.g. aten::add.out), or build with a kernel library that "
        "provides them."
        % (
            "s" if len(unknown) > 1 else "",
            ", ".join(hints),
            "are" if len(unknown) > 1 else "is",
            libs,
            idx["version"] or "(unknown version)",
            idx["root"],
            other,
        )
    )


def _targets_for(idx: dict, src: str) -> List[str]:
    t = idx["file_targets"].get(src)
    return list(t) if t else []


def _closure_sources(idx: dict, starts: Iterable[str], dropped: set) -> set:
    """Sources of the transitive dependencies of *starts* (without their own)."""
    targets = idx["targets"]
    seen = set()
    todo = []
    for start in starts:
        t = targets.get(start)
        if t is None:
            dropped.add(start)
            continue
        seen.add(start)
        todo.extend(t["deps"])
    out = set()
    while todo:
        label = todo.pop()
        if label in seen:
            continue
        seen.add(label)
        t = targets.get(label)
        if t is None:
            dropped.add(label)
            continue
        out.update(t["srcs"])
        todo.extend(t["deps"])
    return out


# --------------------------------------------------------------------------
# Caching


def cache_dir() -> Optional[Path]:
    """Directory of the on-disk cache, or None if disabled (COREV_ET_CACHE=off)."""
    env = os.environ.get("COREV_ET_CACHE")
    if env is not None and env.strip().lower() in ("off", "0", "no", "none", "false"):
        return None
    if env:
        return Path(os.path.expanduser(env))
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path(os.path.expanduser("~")) / ".cache"
    return base / "corev-et"


_MEMO: Dict[str, dict] = {}


def _index(root) -> dict:
    check_tree(root)
    path = os.path.abspath(os.path.expanduser(str(root)))
    real = os.path.realpath(path)
    memo = _MEMO.get(real)
    if memo is not None:
        return memo if memo["root"] == path else dict(memo, root=path)
    cdir = cache_dir()
    cfile = None
    if cdir is not None:
        digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()
        cfile = cdir / ("et-%s.json" % digest[:20])
        idx = _load_cache(cfile, real)
        if idx is not None:
            idx["root"] = path
            _MEMO[real] = idx
            return idx
    idx = _build_index(Path(real))
    if cfile is not None:
        _store_cache(cfile, idx)
    idx["root"] = path
    _MEMO[real] = idx
    return idx


def _clear_memo() -> None:
    """Forget in-process results (tests)."""
    _MEMO.clear()


def _self_stamp() -> list:
    try:
        st = os.stat(__file__)
        return [st.st_size, st.st_mtime_ns]
    except OSError:
        return [0, 0]


def _stamp(path: str) -> Optional[list]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _load_cache(cfile: Path, real: str) -> Optional[dict]:
    try:
        with open(cfile, "r", encoding="utf-8") as f:
            idx = json.load(f)
    except (OSError, ValueError):
        return None
    if (
        not isinstance(idx, dict)
        or idx.get("format") != _CACHE_FORMAT
        or idx.get("real_root") != real
        or idx.get("module") != _self_stamp()
    ):
        return None
    for rel, stamp in idx.get("inputs", {}).items():
        if _stamp(os.path.join(real, rel)) != stamp:
            return None
    return idx


def _store_cache(cfile: Path, idx: dict) -> None:
    import tempfile

    try:
        cfile.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=str(cfile.parent), prefix=".et-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(idx, f, separators=(",", ":"), sort_keys=True)
            os.replace(tmp, str(cfile))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass  # A cache we cannot write only costs time.


# --------------------------------------------------------------------------
# Building the index (cold path)


class _Reader:
    """Reads files of the tree and remembers what it read, for the cache key."""

    def __init__(self, root: Path):
        self.root = root
        self.inputs: Dict[str, Optional[list]] = {}

    def abspath(self, rel: str) -> str:
        return os.path.join(str(self.root), rel)

    def note(self, rel: str) -> None:
        if rel not in self.inputs:
            self.inputs[rel] = _stamp(self.abspath(rel))

    def exists(self, rel: str) -> bool:
        self.note(rel)
        return self.inputs[rel] is not None and os.path.isfile(self.abspath(rel))

    def text(self, rel: str) -> str:
        self.note(rel)
        with open(self.abspath(rel), "r", encoding="utf-8", errors="replace") as f:
            return f.read()

    def listdir(self, rel: str) -> List[str]:
        """Entries of a directory (its mtime is part of the cache key)."""
        self.note(rel)
        try:
            return sorted(os.listdir(self.abspath(rel)))
        except OSError:
            return []

    def glob_cpp(self, rel: str, recursive: bool) -> List[str]:
        out = []
        for name in self.listdir(rel):
            sub = rel + "/" + name
            if os.path.isdir(self.abspath(sub)):
                if recursive:
                    out.extend(self.glob_cpp(sub, True))
            elif name.endswith(".cpp"):
                out.append(sub)
        return out


def _cmake_excluded(rel: str) -> bool:
    # kernels/portable/CMakeLists.txt: list(FILTER ... EXCLUDE REGEX "test/*.cpp")
    # and EXCLUDE REGEX "codegen".
    return bool(re.search(r"test/*.cpp", rel)) or "codegen" in rel


def _build_index(root: Path) -> dict:
    reader = _Reader(root)
    idx: dict = {
        "format": _CACHE_FORMAT,
        "real_root": str(root),
        "module": _self_stamp(),
        "version": detect_version(root),
    }
    reader.note("version.txt")

    bv = _exec_build_variables(reader)
    idx["build_variables"] = {
        k: list(v)
        for k, v in bv.items()
        if k.isupper()
        and isinstance(v, (list, tuple))
        and all(isinstance(x, str) for x in v)
    }
    idx["pal_choices"] = [
        n[:-4] for n in reader.listdir(_PAL_DIR) if n.endswith(".cpp")
    ]

    prim = set()
    for src in idx["build_variables"].get("EXECUTORCH_SRCS", []):
        if reader.exists(src):
            prim.update(
                re.findall(r'"([A-Za-z_][\w]*::[\w.]+)"', reader.text(src))
            )
    idx["prim_ops"] = sorted(prim)

    evaluator = _BuckEvaluator(reader, bv)
    rules = [
        rule
        for rule in _LIBRARY_RULES
        if not rule.optional
        or all(reader.exists(y) for y in (rule.functions_yaml, rule.custom_ops_yaml) if y)
    ]
    for rule in rules:
        for pkg in rule.packages:
            evaluator.evaluate_package(pkg, required=True)
    evaluator.follow_kernel_deps()

    libraries = {}
    for rule in rules:
        libraries[rule.name] = _index_library(reader, rule, evaluator)
    # Op files that no Buck target builds: derive deps from their #includes.
    evaluator.add_include_targets(
        sorted(
            {
                f
                for lib in libraries.values()
                for files in list(lib["ops"].values()) + [lib["all_op_sources"]]
                for f in files
            }
        )
    )
    idx["libraries"] = libraries
    idx["targets"] = evaluator.targets
    file_targets: Dict[str, List[str]] = {}
    for label, t in sorted(evaluator.targets.items()):
        for s in t["srcs"]:
            file_targets.setdefault(s, []).append(label)
    idx["file_targets"] = file_targets
    idx["notes"] = evaluator.notes
    idx["inputs"] = {k: v for k, v in sorted(reader.inputs.items())}
    return idx


def _exec_build_variables(reader: _Reader) -> dict:
    ns: dict = {"__builtins__": builtins}
    try:
        code = compile(reader.text(_BUILD_VARIABLES), _BUILD_VARIABLES, "exec")
        exec(code, ns)  # noqa: S102 - exactly what ExecuTorch's CMake does
    except Exception as e:  # pragma: no cover - depends on the tree
        raise ETSourceError(
            "Could not evaluate %s/%s as Python the way ExecuTorch's CMake does "
            "(%s: %s); this ExecuTorch version is not supported by these build "
            "rules." % (reader.root, _BUILD_VARIABLES, type(e).__name__, e)
        ) from e
    ns.pop("__builtins__", None)
    return ns


# --- YAML / kernel function lookup -----------------------------------------


def _yaml_entries(reader: _Reader, rel: str) -> list:
    import yaml  # only needed on the cold path

    try:
        loader = yaml.CSafeLoader  # type: ignore[attr-defined]
    except AttributeError:  # pragma: no cover
        loader = yaml.SafeLoader
    try:
        data = yaml.load(reader.text(rel), Loader=loader)
    except (OSError, yaml.YAMLError) as e:
        raise ETSourceError(
            "Could not read the kernel YAML %s/%s (%s); this ExecuTorch tree "
            "is damaged or not supported." % (reader.root, rel, e)
        ) from e
    return data or []


def _entry_op_name(entry: dict) -> Optional[str]:
    name = entry.get("op")
    if not name and entry.get("func"):
        name = str(entry["func"]).split("(", 1)[0].strip()
    if not name:
        return None
    return _normalize_op(name)


def _find_matching_paren(text: str, i: int) -> int:
    depth = 1
    n = len(text)
    while i < n and depth:
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        i += 1
    return i


_AFTER_PARAMS = re.compile(r"\s*(?:const\b\s*)?(?:noexcept\b\s*)?(?:override\b\s*)?\{")


def _defines(text: str, fn: str) -> bool:
    """Does this C++ source define function *fn* (or define it via a macro)?"""
    if fn not in text:
        return False
    name = re.escape(fn)
    # A definition: fn(...) followed by a body.
    for m in re.finditer(r"(?<![\w.>:])" + name + r"\s*\(", text):
        end = _find_matching_paren(text, m.end())
        if _AFTER_PARAMS.match(text, end):
            return True
    # A macro that defines it: DEFINE_UNARY_UFUNC_...(acos_out, std::acos)
    return bool(re.search(r"\b[A-Z][A-Z0-9_]*\s*\(\s*" + name + r"\s*[,)]", text))


def _index_library(reader: _Reader, rule: _LibraryRule, evaluator) -> dict:
    src_files = reader.glob_cpp(rule.src_dir, recursive=False)
    texts: Dict[str, str] = {}

    def text(rel: str) -> str:
        if rel not in texts:
            texts[rel] = reader.text(rel)
        return texts[rel]

    ops: Dict[str, List[str]] = {}
    kernel_names: Dict[str, List[str]] = {}
    for yaml_rel in (rule.functions_yaml, rule.custom_ops_yaml):
        if not yaml_rel:
            continue
        if not reader.exists(yaml_rel):
            raise ETSourceError(
                "The ExecuTorch tree %s has no %s, which the %s kernel library "
                "needs; this ExecuTorch version is not supported by these build "
                "rules." % (reader.root, yaml_rel, rule.name)
            )
        for entry in _yaml_entries(reader, yaml_rel):
            if not isinstance(entry, dict):
                continue
            op = _entry_op_name(entry)
            if not op or op in ops:
                continue
            fns = []
            for k in entry.get("kernels") or []:
                kn = (k or {}).get("kernel_name")
                if kn:
                    fns.append(str(kn).split("::")[-1])
            kernel_names[op] = fns
            files: List[str] = []
            base = op.split("::")[-1].split(".")[0]
            for fn in fns:
                cand = "%s/op_%s.cpp" % (rule.src_dir, base)
                if cand in src_files and _defines(text(cand), fn):
                    found = cand
                else:
                    # Search op_*.cpp first, then any other .cpp of the dir.
                    order = sorted(
                        src_files,
                        key=lambda p: (not os.path.basename(p).startswith("op_"), p),
                    )
                    found = next((p for p in order if _defines(text(p), fn)), None)
                    if found is not None and found != cand:
                        evaluator.notes.append(
                            "%s: kernel %s found in %s" % (op, fn, found)
                        )
                if found is None:
                    evaluator.notes.append(
                        "%s: no source defines kernel %s" % (op, fn)
                    )
                elif found not in files:
                    files.append(found)
            ops[op] = files

    op_files = sorted({f for fs in ops.values() for f in fs})
    all_op_sources = sorted(
        set(op_files)
        | {f for f in src_files if os.path.basename(f).startswith("op_")}
    )
    all_glob = set()
    for g in rule.all_globs:
        all_glob.update(
            f for f in reader.glob_cpp(g, recursive=True) if not _cmake_excluded(f)
        )
    return {
        "yaml_paths": [rule.functions_yaml, rule.custom_ops_yaml],
        "src_dir": rule.src_dir,
        "ops": ops,
        "kernel_names": kernel_names,
        "all_op_sources": all_op_sources,
        "all_glob_sources": sorted(all_glob - set(all_op_sources)),
    }


# --- Buck (Starlark) evaluation with stubs ----------------------------------


class _Anything:
    """Permissive stand-in: any attribute, call, iteration or addition works."""

    def __init__(self, name: str = "?", calls: Optional[list] = None):
        self._name = name
        self._calls = calls if calls is not None else []

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything("%s.%s" % (self._name, attr), self._calls)

    def __call__(self, *args, **kwargs):
        self._calls.append((self._name, args, kwargs))
        return _Anything(self._name + "()", self._calls)

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __bool__(self):
        return False

    def __add__(self, other):
        return other

    __radd__ = __add__

    def __contains__(self, item):
        return False

    def __getitem__(self, key):
        return _Anything("%s[]" % self._name, self._calls)

    def __repr__(self):
        return "<stub %s>" % self._name


class _Runtime(_Anything):
    """Stub for runtime_wrapper.bzl's ``runtime``: records target definitions."""

    def __init__(self, evaluator):
        super().__init__("runtime", [])
        self.__dict__["_evaluator"] = evaluator
        self.__dict__["is_oss"] = True

    def __getattr__(self, attr: str):
        if attr.startswith("__"):
            raise AttributeError(attr)
        ev = self.__dict__["_evaluator"]
        if attr in ("cxx_library", "cxx_binary", "filegroup", "export_file"):
            return lambda *a, **kw: ev.record(attr, kw)
        return _Anything("runtime." + attr, self._calls)


class _Selects:
    def apply(self, obj=None, function=None, **kw):
        return obj

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Anything("selects." + attr)


def _select(choices):
    """Starlark select(): the DEFAULT branch if any, else the union of all."""
    if not isinstance(choices, dict):
        return choices
    if "DEFAULT" in choices:
        return choices["DEFAULT"]
    vals = list(choices.values())
    if vals and all(isinstance(v, (list, tuple)) for v in vals):
        out = []
        for v in vals:
            for x in v:
                if x not in out:
                    out.append(x)
        return out
    return vals[0] if vals else []


class _BzlFail(Exception):
    pass


def _fail(*args, **kwargs):
    raise _BzlFail(" ".join(str(a) for a in args))


class _Struct:
    def __init__(self, **kw):
        self.__dict__.update(kw)


# Buck helper files that are replaced by stubs instead of being executed.
_STUBBED_BZL = {
    "runtime_wrapper.bzl",
    "selects.bzl",
    "env_interface.bzl",
    "type_defs.bzl",
    "codegen.bzl",
}


class _Globals(dict):
    """Module globals in which unknown names are permissive stubs."""

    def __missing__(self, key):
        if hasattr(builtins, key):
            return getattr(builtins, key)
        if key.startswith("__"):
            raise KeyError(key)
        return _Anything(key)


class _BuckEvaluator:
    def __init__(self, reader: _Reader, build_vars: dict):
        self.reader = reader
        self.build_vars = build_vars
        self.targets: Dict[str, dict] = {}
        self.notes: List[str] = []
        self.modules: Dict[str, dict] = {}
        self.evaluated: Dict[str, bool] = {}
        self.package: Optional[str] = None
        self.runtime = _Runtime(self)

    # ---- stubs ----
    def stub(self, name: str):
        return {
            "runtime": self.runtime,
            "selects": _Selects(),
            "get_aten_mode_options": lambda: [False],
            "is_xplat": lambda: False,
            "is_fbcode": lambda: False,
            "get_default_executorch_platforms": lambda: [],
            "select": _select,
            "native": _Anything("native"),
            "struct": _Struct,
        }.get(name, _Anything(name))

    def base_env(self, origin: str) -> dict:
        env = _Globals()
        env.update(
            {
                "__builtins__": builtins,
                "__name__": "bzl:" + origin,
                "select": _select,
                "fail": _fail,
                "struct": _Struct,
                "native": _Anything("native"),
                "read_config": lambda *a, **kw: (a[2] if len(a) > 2 else kw.get("default")),
                "load": lambda label, *names, **aliases: self.load(env, label, names, aliases),
            }
        )
        return env

    def load(self, env: dict, label: str, names, aliases) -> None:
        module = self.resolve_module(label)
        for n in names:
            env[n] = module.get(n, self.stub(n)) if module is not None else self.stub(n)
        for alias, n in aliases.items():
            env[alias] = module.get(n, self.stub(n)) if module is not None else self.stub(n)

    def resolve_module(self, label: str) -> Optional[dict]:
        m = re.match(r"^@?[\w-]*//(.*?):([^:]+)$", label)
        if not m:
            return None
        pkg, fname = m.group(1), m.group(2)
        for prefix in ("xplat/executorch/", "executorch/"):
            if pkg.startswith(prefix):
                pkg = pkg[len(prefix):]
                break
        if fname == "build_variables.bzl":
            return self.build_vars
        if fname in _STUBBED_BZL:
            return None
        for rel in ("%s/%s/%s" % (_SHIM_ROOT, pkg, fname), "%s/%s" % (pkg, fname)):
            rel = rel.replace("//", "/")
            if self.reader.exists(rel):
                return self.exec_module(rel)
        self.notes.append("load(%s): not found, stubbed" % label)
        return None

    def exec_module(self, rel: str) -> dict:
        if rel in self.modules:
            return self.modules[rel]
        env = self.base_env(rel)
        self.modules[rel] = env
        try:
            exec(compile(self.reader.text(rel), rel, "exec"), env)  # noqa: S102
        except Exception as e:
            raise ETSourceError(
                "Could not evaluate the Buck file %s/%s with this build's stubs "
                "(%s: %s); this ExecuTorch version is not supported by these "
                "build rules." % (self.reader.root, rel, type(e).__name__, e)
            ) from e
        return env

    # ---- targets ----
    def evaluate_package(self, pkg: str, required: bool) -> bool:
        if pkg in self.evaluated:
            return self.evaluated[pkg]
        rel = pkg + "/targets.bzl"
        if not self.reader.exists(rel):
            self.evaluated[pkg] = False
            if required:
                raise ETSourceError(
                    "The ExecuTorch tree %s has no %s, which says how its kernel "
                    "sources depend on each other; this ExecuTorch version is not "
                    "supported by these build rules." % (self.reader.root, rel)
                )
            return False
        self.evaluated[pkg] = True
        env = self.exec_module(rel)
        define = env.get("define_common_targets")
        if not callable(define):
            self.notes.append("%s: no define_common_targets()" % rel)
            return True
        saved, self.package = self.package, pkg
        try:
            define()
        except Exception as e:
            raise ETSourceError(
                "Could not evaluate define_common_targets() of %s/%s with this "
                "build's stubs (%s: %s); this ExecuTorch version is not "
                "supported by these build rules."
                % (self.reader.root, rel, type(e).__name__, e)
            ) from e
        finally:
            self.package = saved
        return True

    def record(self, kind: str, kw: dict) -> None:
        pkg = self.package
        name = kw.get("name")
        if pkg is None or not isinstance(name, str):
            return
        label = "//%s:%s" % (pkg, name)
        srcs = []
        for s in _flatten(kw.get("srcs")):
            if isinstance(s, (tuple, list)) and s:
                s = s[0]
            if isinstance(s, str) and s.endswith((".cpp", ".cc", ".c")):
                srcs.append("%s/%s" % (pkg, s))
        headers = []
        for key in ("exported_headers", "headers"):
            h = kw.get(key)
            if isinstance(h, dict):
                h = list(h.values())
            for x in _flatten(h):
                if isinstance(x, str):
                    headers.append("%s/%s" % (pkg, x))
        deps = []
        for key in ("deps", "exported_deps"):
            for d in _flatten(kw.get(key)):
                if isinstance(d, str):
                    deps.append(_norm_label(d, pkg))
        if kind in ("filegroup", "export_file"):
            return  # not code that gets linked
        self.targets[label] = {
            "srcs": srcs,
            "headers": headers,
            "deps": _unique_list(deps),
        }

    def follow_kernel_deps(self) -> None:
        """Evaluate targets.bzl of other kernel packages that deps point into."""
        while True:
            pending = set()
            for t in list(self.targets.values()):
                for d in t["deps"]:
                    if d in self.targets or not d.startswith("//"):
                        continue
                    pkg = d[2:].split(":", 1)[0]
                    if pkg.startswith(_KERNEL_PACKAGE_PREFIX) and pkg not in self.evaluated:
                        pending.add(pkg)
            if not pending:
                return
            for pkg in sorted(pending):
                self.evaluate_package(pkg, required=False)

    def add_include_targets(self, files: List[str]) -> None:
        built = {s for t in self.targets.values() for s in t["srcs"]}
        header_targets: Dict[str, List[str]] = {}
        for label, t in self.targets.items():
            for h in t["headers"]:
                header_targets.setdefault(h, []).append(label)
        for f in files:
            if f in built:
                continue
            deps = []
            for inc in re.findall(
                r'^\s*#\s*include\s*[<"]executorch/([^>"]+)[>"]',
                self.reader.text(f),
                re.M,
            ):
                deps.extend(header_targets.get(inc, []))
            label = "//%s:%s#includes" % tuple(f.rsplit("/", 1))
            self.targets[label] = {"srcs": [f], "headers": [], "deps": _unique_list(deps)}
            self.notes.append("%s: no Buck target; deps from #includes" % f)


def _flatten(x) -> list:
    if x is None or isinstance(x, _Anything):
        return []
    if isinstance(x, (list, tuple)):
        out = []
        for y in x:
            if isinstance(y, list):
                out.extend(_flatten(y))
            else:
                out.append(y)
        return out
    return [x]


def _unique_list(items: Iterable[str]) -> List[str]:
    return list(_unique(items))


def _norm_label(dep: str, pkg: str) -> str:
    """``:foo`` / ``//executorch/a/b:c`` -> ``//a/b:c`` (root-relative)."""
    if dep.startswith(":"):
        return "//%s:%s" % (pkg, dep[1:])
    m = re.match(r"^@?(fbsource|fbcode|xplat)?//(.*)$", dep)
    if not m:
        return dep  # external (third-party repository)
    path = m.group(2)
    for prefix in ("xplat/executorch/", "executorch/"):
        if path.startswith(prefix):
            path = path[len(prefix):]
            break
    else:
        return dep
    if ":" in path:
        p, n = path.split(":", 1)
    else:
        p, n = path, path.rsplit("/", 1)[-1]
    return "//%s:%s" % (p, n)
