"""The checkout the benchmarks measure: its root, and its scons run as a user runs it.

Imported as `checkout` by the scripts beside it (python benchmarks/X.py puts this
directory first on sys.path).
"""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


class Failed(Exception):
    """A step of a benchmark failed; the script prints the message and exits with 1."""


def scons(build_dir, *args):
    """`scons -Q build_dir=... ARGS` in the checkout; its output (stdout and stderr
    merged), or Failed with the command and the output's last lines."""
    argv = [sys.executable, "-m", "SCons", "-Q", "build_dir=%s" % build_dir] + list(args)
    proc = subprocess.run(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if proc.returncode:
        raise Failed("scons failed (exit %d): %s\n%s" % (
            proc.returncode, " ".join(argv), "\n".join(proc.stdout.splitlines()[-25:])))
    return proc.stdout
