"""CMSIS-NN, the library ExecuTorch's Cortex-M kernels (backends/cortex_m/ops) call: a
source tree the user clones (cmsis_nn=PATH), of which the build compiles only the files
the selected kernels reach.

- Which files: the `arm_*` functions the selected kernel sources call, then every
  function those files call, until no new file is reached; a function's file is the
  one of Source/ that defines it (the same test as for ExecuTorch's kernels:
  kernel_sources.defines_function).
- Which paths: its portable C ones. The DSP and MVE code is behind `__ARM_FEATURE_*`
  and ARM_MATH_* macros, which a RISC-V compiler does not define.
- Which version: the commit the ExecuTorch tree pins (`CMSIS_NN_VERSION` in
  backends/cortex_m/CMakeLists.txt), compared with the tree's git HEAD, or, for a tree
  without git metadata (an archive, a CMSIS pack), with its files (tree_digest); another
  commit builds with a warning.
"""

import hashlib
import json
import os
import re
import tempfile
from typing import Dict, Iterable, List, Optional, Tuple

from etcorev.scons import usercache
from etcorev.executorch.kernel_sources import defines_function

PIN_FILE = "backends/cortex_m/CMakeLists.txt"
HEADER = os.path.join("Include", "arm_nnfunctions.h")
URL = "https://github.com/ARM-software/CMSIS-NN"
_CALL = re.compile(r"\b(arm_\w+)\s*\(")
_MEMO: Dict[str, dict] = {}


class CmsisNNError(Exception):
    """A tree that is not CMSIS-NN, or cannot be read: one sentence for the user."""


def pinned_commit(et_root) -> Optional[str]:
    """The CMSIS-NN commit the ExecuTorch tree's Cortex-M backend builds with."""
    try:
        with open(os.path.join(et_root, PIN_FILE)) as f:
            match = re.search(r'CMSIS_NN_VERSION\s+"([0-9a-f]{40})"', f.read())
    except OSError:
        return None
    return match.group(1) if match else None


def tree_commit(root) -> Optional[str]:
    """The commit a git checkout of CMSIS-NN has checked out (read from .git, no git
    process); None for a tree without git metadata."""
    git = os.path.join(root, ".git")
    if os.path.isfile(git):                   # a worktree or submodule: "gitdir: PATH"
        with open(git) as f:
            line = f.read().strip()
        if not line.startswith("gitdir:"):
            return None
        git = os.path.join(root, line[len("gitdir:"):].strip())
    try:
        with open(os.path.join(git, "HEAD")) as f:
            head = f.read().strip()
    except OSError:
        return None
    if not head.startswith("ref:"):
        return head if re.fullmatch(r"[0-9a-f]{40}", head) else None
    ref = head[len("ref:"):].strip()
    try:
        with open(os.path.join(git, ref)) as f:
            return f.read().strip()
    except OSError:
        pass
    try:
        with open(os.path.join(git, "packed-refs")) as f:
            for line in f:
                sha, _, name = line.strip().partition(" ")
                if name == ref:
                    return sha
    except OSError:
        pass
    return None


# A tree without git metadata (a downloaded archive of a commit, as ExecuTorch's CMake
# fetches it, or a CMSIS pack) is recognised by its files: the digest of its sources and
# headers (tree_digest) at each commit an ExecuTorch version pins.
KNOWN_DIGESTS = {
    # ExecuTorch v1.4.1's pin (v7.0.0-34-gdbf45dbf).
    "dbf45dbfcc515421dd6099037d3e2637b90748c8":
        "749ef2e5c0cb83b885a1182d92acae6eae5907078f61d423e23ffc09c781e4bf",
}


def _digested_files(real):
    """The files tree_digest covers: Include/ and Source/ (C sources and headers), sorted
    by their path relative to the tree."""
    files = []
    for top in ("Include", "Source"):
        for directory, dirs, names in os.walk(os.path.join(real, top)):
            dirs[:] = sorted(d for d in dirs if d != "Bindings")
            files += [os.path.join(directory, n) for n in names if n.endswith((".c", ".h"))]
    return sorted(files, key=lambda p: os.path.relpath(p, real))


def tree_digest(root) -> str:
    """A SHA-256 over the relative path and the bytes of every C source and header of
    Include/ and Source/ (the Python bindings left out): the same for every copy of one
    commit, git checkout, archive or pack alike. Kept in memory and the per-user cache,
    keyed by each file's size and modification time."""
    real = os.path.realpath(root)
    files = _digested_files(real)
    stamp = json.loads(json.dumps([(p, os.stat(p).st_size, os.stat(p).st_mtime_ns)
                                   for p in files]))
    key = real + "#digest"
    cached = _MEMO.get(key) or _load(key)
    if cached is not None and cached.get("stamp") == stamp:
        _MEMO[key] = cached
        return cached["digest"]
    digest = hashlib.sha256()
    for path in files:
        digest.update(os.path.relpath(path, real).replace(os.sep, "/").encode() + b"\0")
        with open(path, "rb") as f:
            data = f.read()
        digest.update(b"%d\0" % len(data) + data)
    _MEMO[key] = {"stamp": stamp, "digest": digest.hexdigest()}
    _store(key, _MEMO[key], tree=real)
    return _MEMO[key]["digest"]


def pack_release(root) -> Optional[str]:
    """The release ARM.CMSIS-NN.pdsc names first (a CMSIS pack's version; "0.0.0" between
    releases), or None."""
    try:
        with open(os.path.join(root, "ARM.CMSIS-NN.pdsc")) as f:
            match = re.search(r'<release\s+version="([^"]+)"', f.read())
    except OSError:
        return None
    return match.group(1) if match else None


def identify(root, pin) -> Tuple[bool, str]:
    """(is the tree the pinned commit, what it is in words): by its git HEAD when it has
    git metadata, else by its files' digest."""
    commit = tree_commit(root)
    if commit:
        return commit == pin, "is at commit %s" % commit[:12]
    if KNOWN_DIGESTS.get(pin) == tree_digest(root):
        return True, "has the files of commit %s" % pin[:12]
    release = pack_release(root)
    return False, ("has no git metadata, and its files are not those of the commit below "
                   "(its ARM.CMSIS-NN.pdsc names release %s)" % release if release else
                   "has no git metadata, and its files are not those of the commit below")


_warned = set()


def check_version(root, et_root) -> Optional[str]:
    """The warning to print, once per run, when the tree is not the commit ExecuTorch
    pins (its kernels were written against that CMSIS-NN), else None."""
    check_tree(root)
    pin = pinned_commit(et_root)
    if pin is None or root in _warned:
        return None
    pinned, what = identify(root, pin)
    if pinned:
        return None
    _warned.add(root)
    return ("the CMSIS-NN tree %s ($CMSIS_NN_ROOT) %s, not at %s, the commit the "
            "ExecuTorch tree's Cortex-M kernels are written for (%s); building anyway. "
            "`git -C %s checkout %s` gives that one." % (root, what, pin[:12], PIN_FILE, root, pin))


def check_tree(root) -> None:
    if not os.path.isdir(root):
        raise CmsisNNError("The CMSIS-NN tree '%s' ($CMSIS_NN_ROOT) does not exist." % root)
    if not os.path.isfile(os.path.join(root, HEADER)):
        raise CmsisNNError("'%s' ($CMSIS_NN_ROOT) is not a CMSIS-NN source tree: it has no %s. "
                           "Clone %s there." % (root, HEADER, URL))


def _index(root) -> dict:
    """{"defines": {function: file}, "calls": {file: [functions]}} over Source/, files
    relative to root; the Python bindings and the float (f16, f32) kernels left out."""
    real = os.path.realpath(root)
    stamp = []
    files = []
    for directory, dirs, names in os.walk(os.path.join(real, "Source")):
        dirs[:] = sorted(d for d in dirs if d != "Bindings")
        for name in sorted(names):
            if name.endswith(".c") and not re.search(r"_f(16|32)\.c$", name):
                path = os.path.join(directory, name)
                files.append(path)
                st = os.stat(path)
                stamp.append((path, st.st_size, st.st_mtime_ns))
    stamp = json.loads(json.dumps(stamp))      # as it reads back from the disk cache
    cached = _MEMO.get(real) or _load(real)
    if cached is not None and cached["stamp"] == stamp:
        _MEMO[real] = cached
        return cached
    defines, calls = {}, {}
    for path in files:
        with open(path, errors="replace") as f:
            text = f.read()
        rel = os.path.relpath(path, real)
        named = set(_CALL.findall(text))
        own = {fn for fn in named if defines_function(text, fn)}
        for fn in own:
            defines.setdefault(fn, rel)
        calls[rel] = sorted(named - own)
    _MEMO[real] = {"stamp": stamp, "defines": defines, "calls": calls}
    _store(real, _MEMO[real])
    return _MEMO[real]


# Reading the files for their functions takes a quarter of a second: the answer is kept
# in the per-user cache, keyed by every file's size and modification time (a warm run
# costs the stats).
def _cache_file(real):
    root = usercache.cache_root()
    if root is None:
        return None
    digest = hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:20]
    return root / ("cmsis-nn-%s.json" % digest)


def _load(real):
    path = _cache_file(real)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError, TypeError):
        return None
    return data if isinstance(data, dict) and data.get("code") == _code_stamp() else None


def _store(real, data, tree=None):
    """Keeps data for the key `real` (a tree, or a tree and what of it); tree: the tree
    it is of, when the key is not that (entries of trees that are gone are removed)."""
    path = _cache_file(real)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=str(path.parent), prefix=".cmsis-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(dict(data, code=_code_stamp(), real_root=tree or real), f)
        os.replace(tmp, str(path))
    except OSError:
        return          # a cache we cannot write only costs time
    # Entries of trees that are gone (copies tests and benchmarks made, clones deleted)
    # go, so that the cache does not grow with every tree ever built.
    for entry in path.parent.glob("cmsis-nn-*.json"):
        if entry == path:
            continue
        try:
            with open(entry, encoding="utf-8") as f:
                gone = not os.path.isdir(json.load(f).get("real_root") or "")
        except (OSError, ValueError, AttributeError):
            gone = True
        if gone:
            try:
                entry.unlink()
            except OSError:
                pass


def _code_stamp():
    st = os.stat(__file__)
    return [st.st_size, st.st_mtime_ns]


def called_functions(texts: Iterable[str]) -> List[str]:
    """The arm_* functions these sources call."""
    return sorted({fn for text in texts for fn in _CALL.findall(text)})


def sources_for(root, functions: Iterable[str], replacements=()) -> List[str]:
    """The files of Source/ that define these functions and what they call,
    transitively, as absolute paths. Functions defined nowhere (inline ones of the
    headers) need no file. replacements: files of the same name as one of Source/ that
    define its functions for this core (kernels/corev/cmsis_nn): taken in its place,
    with what they call."""
    idx = _index(root)
    replacing = {os.path.basename(str(path)): path for path in replacements}
    todo = [idx["defines"][fn] for fn in functions if fn in idx["defines"]]
    seen, chosen = set(), []
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        seen.add(rel)
        replacement = replacing.get(os.path.basename(rel))
        if replacement:
            chosen.append(str(replacement))
            with open(replacement) as f:
                calls = set(_CALL.findall(f.read()))
        else:
            chosen.append(os.path.join(root, rel))
            calls = idx["calls"][rel]
        todo.extend(idx["defines"][fn] for fn in calls if fn in idx["defines"])
    return sorted(chosen)


def functions_defined(path) -> List[str]:
    """The arm_* functions a C file defines."""
    with open(path) as f:
        text = f.read()
    return sorted(fn for fn in set(_CALL.findall(text)) if defines_function(text, fn))
