"""Facts of the machine a benchmark ran on, for the table each script prints first.

The scripts are run as `python benchmarks/X.py`, so this directory is sys.path[0] and
`import machine` finds this module.
"""

import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def tool_version(tool):
    """The first line of `tool --version`."""
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    except OSError:
        return "not found"
    return out.splitlines()[0] if out else "?"


def scons_version():
    try:
        import SCons
        return SCons.__version__
    except ImportError:
        return "not importable by this python (run it with .venv/bin/python)"


def host_rows(extra=()):
    """CPU, cores, the rows of `extra` (such as the load average), python."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return [
        ("CPU", cpu_model()),
        ("cores", "%s (usable %s)" % (os.cpu_count(), usable)),
        *extra,
        ("python", "%s %s" % (platform.python_implementation(), platform.python_version())),
    ]


def machine_rows(compiler, extra=()):
    """host_rows(extra), then SCons and the version of the compiler command."""
    return host_rows(extra) + [
        ("SCons", scons_version()),
        ("compiler", tool_version(compiler)),
    ]


def print_rows(rows):
    width = max(len(k) for k, _ in rows)
    for k, v in rows:
        print("%-*s  %s" % (width, k, v))


def median(values):
    return statistics.median(values) if values else float("nan")


def executorch_root():
    """The ExecuTorch tree the builds use, or None after saying what is missing: SCons
    importable by this Python (the project's .venv), a tree configured (EXECUTORCH_ROOT or
    the user settings). The scripts put site_scons/ on sys.path before importing this."""
    try:
        import SCons  # noqa: F401
    except ImportError:
        print("SCons is not importable: run this with the project's .venv/bin/python",
              file=sys.stderr)
        return None
    from etcorev.scons import settings
    root = os.environ.get("EXECUTORCH_ROOT") or settings.read().get("executorch")
    if not root or not os.path.isdir(root):
        print("no ExecuTorch tree: set EXECUTORCH_ROOT, or run ./setup.sh --executorch PATH",
              file=sys.stderr)
        return None
    return Path(root)
