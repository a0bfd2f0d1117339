"""An ExecuTorch source tree: is it one, which version, and reading its files while
remembering what was read (the source index is cached on those files' stamps).

All paths handed out are relative to the tree's root and use `/`.
"""

import os
import re
from pathlib import Path
from typing import Dict, List, Optional

BUILD_VARIABLES = "shim_et/xplat/executorch/build/build_variables.bzl"
PROGRAM_H = "runtime/executor/program.h"


class ETSourceError(Exception):
    """A problem with the ExecuTorch tree or the requested operators: one paragraph
    meant for the person running the build."""


def detect_version(root) -> Optional[str]:
    """The tree's version from version.txt, as ExecuTorch's setup.py reads it
    (pre-release suffixes dropped: v1.0.0 says 1.0.0a0), or None."""
    try:
        text = (Path(root) / "version.txt").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
    return "%s.%s.%s" % (m.group(1), m.group(2), m.group(3) or "0") if m else None


def check_tree(root) -> Optional[str]:
    """Check that root is a usable ExecuTorch source tree; return its version."""
    if root is None or str(root) == "":
        raise ETSourceError(
            "No ExecuTorch source tree given: set $ET_ROOT to the directory that holds "
            "ExecuTorch's runtime/, kernels/ and shim_et/ (a checkout or extracted release "
            "of pytorch/executorch).")
    path = Path(os.path.abspath(os.path.expanduser(str(root))))
    if not path.is_dir():
        raise ETSourceError(
            "The ExecuTorch source tree %s does not exist or is not a directory: set "
            "$ET_ROOT to the directory that holds ExecuTorch's runtime/, kernels/ and "
            "shim_et/." % path)
    missing = [p for p in (BUILD_VARIABLES, PROGRAM_H) if not (path / p).is_file()]
    if missing:
        raise ETSourceError(
            "%s does not look like an ExecuTorch source tree: %s %s missing. Set "
            "$ET_ROOT to the top directory of a checkout or extracted release of "
            "pytorch/executorch (the one that holds runtime/, kernels/ and shim_et/; git "
            "submodules are not needed)."
            % (path, " and ".join(missing), "is" if len(missing) == 1 else "are"))
    if path.name != "executorch":
        raise ETSourceError(
            "The ExecuTorch source tree %s is in a directory named %r, but it must be named "
            "'executorch': ExecuTorch sources include their own headers as "
            "<executorch/runtime/...>, so the build puts the parent directory (%s) on the "
            "include path. Rename the directory, or create a symlink named executorch that "
            "points to it and use that." % (path, path.name, path.parent))
    return detect_version(path)


def stamp(path: str) -> Optional[list]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


class TreeReader:
    """Reads files of the tree and remembers the stamp of everything it looked at."""

    def __init__(self, root: Path):
        self.root = root
        self.inputs: Dict[str, Optional[list]] = {}

    def abspath(self, rel: str) -> str:
        return os.path.join(str(self.root), rel)

    def note(self, rel: str) -> None:
        if rel not in self.inputs:
            self.inputs[rel] = stamp(self.abspath(rel))

    def exists(self, rel: str) -> bool:
        self.note(rel)
        return self.inputs[rel] is not None and os.path.isfile(self.abspath(rel))

    def text(self, rel: str) -> str:
        self.note(rel)
        with open(self.abspath(rel), "r", encoding="utf-8", errors="replace") as f:
            return f.read()

    def listdir(self, rel: str) -> List[str]:
        """Entries of a directory (its mtime is part of the stamps)."""
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
