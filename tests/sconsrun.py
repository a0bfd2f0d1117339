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
