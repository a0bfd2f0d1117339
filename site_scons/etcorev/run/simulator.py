"""Simulator processes (QEMU, the Verilator testbench) that never outlive the build that
started them.

- kill -9 of scons: a simulator is started with PR_SET_PDEATHSIG, so the kernel sends
  it SIGKILL when the thread that started it goes away, however that happens.
- SIGINT, SIGTERM, SIGHUP (Ctrl-C, `kill`, a CI job's time limit): SCons's own handlers
  only stop it from starting more work and wait for the running actions, so a
  simulator would run on until `timeout=`. `watch_signals()` (from the main thread, at
  read time) has Python write the number of every signal it receives to a pipe
  (`signal.set_wakeup_fd`, beside SCons's handlers), and `run()` waits for the
  simulator and for that pipe together: a stop request kills the simulator at once.
"""

import os
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Optional

STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)}
_signals_read = None       # the pipe's read end, once watch_signals() ran
_received = []             # stop signals seen so far (sticky: the pipe is read once)


def dies_with_parent(sig=signal.SIGKILL):
    """A preexec_fn: the child gets sig when the thread that started it ends."""
    def preexec():
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, sig)   # PR_SET_PDEATHSIG
        except Exception:
            pass
    return preexec


def watch_signals():
    """From the main thread: note stop signals in a pipe run() waits on. Returns False
    where that cannot be done (not the main thread, a platform without it)."""
    global _signals_read
    if _signals_read is not None:
        return True
    read_end, write_end = os.pipe()
    for fd in (read_end, write_end):
        os.set_blocking(fd, False)
    try:
        signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    except (ValueError, AttributeError):
        os.close(read_end)
        os.close(write_end)
        return False
    _signals_read = read_end
    return True


def stop_requested() -> Optional[int]:
    """The stop signal scons received, if any."""
    if _signals_read is not None:
        try:
            while True:
                data = os.read(_signals_read, 64)
                if not data:
                    break
                _received.extend(n for n in data if n in STOP_SIGNALS)
        except BlockingIOError:
            pass
    return _received[0] if _received else None


@dataclass
class Finished:
    returncode: Optional[int]   # None when stopped
    output: str
    timed_out: bool = False
    stopped_by: Optional[int] = None   # the signal that stopped the build


def run(argv, cwd, timeout) -> Finished:
    """Run a simulator to its end, for at most timeout seconds, or until scons is told
    to stop; its stdout and stderr together. Raises OSError when it cannot start."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, cwd=cwd, preexec_fn=dies_with_parent())
    chunks = []
    deadline = time.monotonic() + timeout
    waited = [proc.stdout.fileno()] + ([_signals_read] if _signals_read is not None else [])
    outcome = {}
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            outcome["timed_out"] = True
            break
        if stop_requested() is not None:
            outcome["stopped_by"] = stop_requested()
            break
        ready, _, _ = select.select(waited, [], [], min(remaining, 1.0))
        if proc.stdout.fileno() in ready:
            data = os.read(proc.stdout.fileno(), 65536)
            if not data:                   # the simulator closed its output: it ended
                break
            chunks.append(data)
    if outcome:
        proc.kill()
        rest = proc.stdout.read()
        chunks.append(rest or b"")
    proc.stdout.close()
    try:
        returncode = proc.wait(timeout=max(deadline - time.monotonic(), 1.0))
    except subprocess.TimeoutExpired:     # it closed its output but went on
        proc.kill()
        returncode, outcome = proc.wait(), {"timed_out": True}
    return Finished(None if outcome else returncode,
                    b"".join(chunks).decode(errors="replace"), **outcome)
