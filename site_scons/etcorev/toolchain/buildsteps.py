"""Long builds of toolchain parts (libstdc++, CORE-V GCC) outside SCons: one lock per
install, every command's output in one log file, a one-paragraph error with the log's
tail when a step fails, and markers that make a finished step or install recognisable.

An install is complete only when its marker exists; the marker is written last, so an
interrupted build never looks complete. Stdlib only.
"""

import contextlib
import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

LOG_TAIL_LINES = 25
HEARTBEAT_SECONDS = 60


class StepError(RuntimeError):
    """A build step failed; the message names the step and shows the log's tail."""


@contextlib.contextmanager
def locked(lock_path: Path, log, what: str):
    """Hold an exclusive lock on lock_path; say so when waiting for another build."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log("%s: waiting for another build to finish (lock %s)" % (what, lock_path))
            fcntl.flock(fh, fcntl.LOCK_EX)
        # Released when the file is closed and no child holding it is left (no explicit
        # LOCK_UN: that would release it for the children too).
        yield fh.fileno()


def tail(path: Path, n: int = LOG_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 64 * 1024))
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return "(log file unreadable)"
    return "\n".join("    " + line for line in lines[-n:])


def write_marker(path: Path, **facts) -> None:
    """Atomically write a completion marker holding facts as JSON."""
    tmp = path.with_name(path.name + ".tmp")
    facts.setdefault("built", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    tmp.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def read_marker(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


class Runner:
    """Runs build commands with all their output appended to one log file.

    ``lock_fd`` is handed down to the commands, so the build lock stays held until the
    last of them exits, even if this Python process is killed. ``what`` starts every
    error message (``libstdc++``, ``CORE-V GCC``)."""

    def __init__(self, log_path: Path, what: str, lock_fd=None, heartbeat=None):
        self.log_path = log_path
        self.what = what
        self.pass_fds = () if lock_fd is None else (lock_fd,)
        # heartbeat(step, seconds) is called every HEARTBEAT_SECONDS of a long command.
        self.heartbeat = heartbeat

    def note(self, text: str) -> None:
        with open(self.log_path, "a") as fh:
            fh.write(text.rstrip("\n") + "\n")

    def run(self, step: str, argv, cwd, env=None) -> None:
        self.note("\n===== %s\n$ cd %s\n$ %s" % (step, cwd, " ".join(map(str, argv))))
        with open(self.log_path, "a") as fh:
            try:
                proc = subprocess.Popen([str(a) for a in argv], cwd=str(cwd), env=env,
                                        stdin=subprocess.DEVNULL, pass_fds=self.pass_fds,
                                        stdout=fh, stderr=subprocess.STDOUT)
                started = time.monotonic()
                while True:
                    try:
                        rc = proc.wait(timeout=HEARTBEAT_SECONDS)
                        break
                    except subprocess.TimeoutExpired:
                        if self.heartbeat:
                            self.heartbeat(step, time.monotonic() - started)
            except OSError as exc:
                fh.write("could not run: %s\n" % exc)
                rc = None
        if rc != 0:
            raise StepError(
                "%s: %s failed (%s). The full output is in %s; its last lines are:\n%s"
                % (self.what, step, "could not start" if rc is None else "exit status %d" % rc,
                   self.log_path, tail(self.log_path)))


def clean_build_env(extra=None) -> dict:
    """os.environ without what an outer make, scons or shell could leak into a
    configure-and-make build (jobserver, flags, search paths), plus extra."""
    env = dict(os.environ)
    for var in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "CFLAGS", "CXXFLAGS",
                "CPPFLAGS", "LDFLAGS", "LIBS", "CPATH", "C_INCLUDE_PATH",
                "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "GCC_EXEC_PREFIX", "CONFIG_SITE",
                "CC", "CXX"):
        env.pop(var, None)
    env["LC_ALL"] = "C"
    env.update(extra or {})
    return env


def jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return os.cpu_count() or 1
