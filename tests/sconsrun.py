"""Running this repository's SCons build from tests."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODELS = REPO.parent / "shared" / "models"


def scons(*args, build_dir, cwd=REPO, timeout=1800, env=None):
    """Run scons with the given options into build_dir; returns CompletedProcess (text).
    stdout and stderr are merged, as a user would see them."""
    argv = [sys.executable, "-m", "SCons", "-Q", "build_dir=%s" % build_dir] + list(args)
    return subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout, env=env)


def variant(build_dir, prefix):
    """The one variant directory of build_dir whose name starts with prefix (the
    toolchain's part of the name comes after board, build type, log level and ISA)."""
    found = [p for p in Path(build_dir).iterdir() if p.is_dir() and p.name.startswith(prefix)]
    assert len(found) == 1, (prefix, [p.name for p in Path(build_dir).iterdir()])
    return found[0]
