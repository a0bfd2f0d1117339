"""profile=etdump: the ETDump a firmware prints, for `scons run`.

The runner (examples/corev/executor_runner/etdump_tracer.cpp) prints ExecuTorch's
ETDump as base64 lines between the markers of ExecuTorch's Arm runner, as a shell
script that decodes it:

    ETDump: 2712 bytes (buffer 133120)
    #[RUN THIS]
    # Writing etdump.bin [base64]
    base64 -d >etdump.bin <<'EOF'
    AAAAAEVEMDAAAAAA...
    EOF
    ...
    #[END]

extract() decodes it; report() writes it beside the firmware (executor_runner.etdp)
and, where ExecuTorch's Python package is installed (the export extra), prints the
Inspector's table of it, cycles as the time scale, with NAME.etrecord beside the model
when there is one. The Inspector runs in a child process (this file run as a script):
importing torch costs seconds and prints warnings that do not belong in the build's
output.
"""

import base64
import binascii
import os
import re
import subprocess
import sys

FILE_NAME = "executor_runner.etdp"
_BLOCK = re.compile(r"^#\[RUN THIS\]\n(.*?)^#\[END\]$", re.M | re.S)
_PAYLOAD = re.compile(r"^base64 -d >\S+ <<'EOF'\n(.*?)^EOF$", re.M | re.S)
INSPECTOR_TIMEOUT = 300     # seconds: importing torch, reading the ETRecord


class ETDumpError(Exception):
    pass


def extract(text):
    """The ETDump's bytes from a run's output, or None when it printed none."""
    block = _BLOCK.search(text)
    if not block:
        return None
    payload = _PAYLOAD.search(block.group(1))
    if not payload:
        raise ETDumpError("the ETDump block has no base64 payload")
    try:
        return base64.b64decode("".join(payload.group(1).split()), validate=True)
    except (binascii.Error, ValueError) as error:
        raise ETDumpError("the ETDump's base64 is damaged (%s)" % error)


def without_payload(text, path):
    """The run's output with the base64 lines replaced by one line saying where they
    went (the markers and the decoding script stay)."""
    def shorten(match):
        lines = match.group(1).count("\n")
        return "base64 -d >%s <<'EOF'\n(%d lines of base64: decoded into %s)\nEOF" % (
            FILE_NAME, lines, path)
    return _PAYLOAD.sub(shorten, text)


def report(text, path, etrecord=None, model="", board=""):
    """Decode the ETDump into path; returns what `scons run` prints about it."""
    try:
        data = extract(text)
    except ETDumpError as error:
        return "ETDump: %s; nothing written." % error
    if data is None:
        return "ETDump: the firmware printed none (built without $PROFILE=etdump?)."
    with open(path, "wb") as f:
        f.write(data)
    lines = ["", "ETDump of %s on %s: %s (%d bytes)" % (model, board, path, len(data))]
    table, note = inspector_table(path, etrecord)
    if table:
        lines += ["Inspector (ExecuTorch devtools; %s):" % (
            "with " + os.path.basename(etrecord) if etrecord else "no ETRecord beside the model"),
            table]
    if note:
        lines.append(note)
    return "\n".join(lines) + "\n"


def inspector_table(path, etrecord=None, timeout=INSPECTOR_TIMEOUT):
    """(the Inspector's table of the ETDump at path, or None; a note, or None)."""
    argv = [sys.executable, os.path.abspath(__file__), path] + ([etrecord] if etrecord else [])
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, "The Inspector did not run: %s." % error
    if done.returncode == 3:
        return None, ("Open it with ExecuTorch's Inspector (the export extra: "
                      "./setup.sh --export), e.g. python -m "
                      "executorch.devtools.inspector.inspector_cli --etdump_path %s "
                      "--source_time_scale cycles --target_time_scale cycles." % path)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["exit status %d" % done.returncode])[-1]
        return None, "The Inspector could not read it: %s" % last
    return done.stdout.rstrip("\n"), None


def _inspect(path, etrecord=None):
    """The child process: the Inspector's table on stdout (exit status 3: no
    ExecuTorch Python package)."""
    import warnings
    warnings.simplefilter("ignore")
    try:
        from executorch.devtools import Inspector
        from executorch.devtools.inspector import TimeScale
    except ImportError:
        return 3
    inspector = Inspector(etdump_path=path, etrecord=etrecord,
                          source_time_scale=TimeScale.CYCLES,
                          target_time_scale=TimeScale.CYCLES)
    inspector.print_data_tabular(include_units=True)
    return 0


if __name__ == "__main__":
    # Run as a script, this file's directory comes first on the path, and its profile.py
    # would stand in for the standard library's (which torch imports).
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.exit(_inspect(*sys.argv[1:3]))
