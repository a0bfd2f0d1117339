"""`scons run`: run the firmware on the board's simulator, print its output and cycles,
and end with the program's exit status.

QEMU (board=qemu) and the CV32E40P Verilator testbench (board=cv32e40p, with
verilator_model= set) say how a program ended differently; the board module parses it.
"""

import atexit
import os
import subprocess
import sys
import tempfile

import SCons.Errors
from SCons.Action import Action


def _run(target, source, env):
    board = env["BOARD_MODULE"]
    elf, hexfile = str(source[0]), str(source[1])
    model = [str(node) for node in source[2:]] or None   # external model: hex, bin
    # Simulators may leave files in their working directory: give them a scratch one.
    with tempfile.TemporaryDirectory(prefix="corev-run-") as workdir:
        argv = board.run_command(elf, hexfile, env, workdir, model=model)
        if argv is None:
            raise SCons.Errors.UserError(board.NO_RUNNER_MESSAGE)
        if env.get("verbose"):
            print(" ".join(argv))
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, text=True, errors="replace",
                              cwd=workdir)
    sys.stdout.write(proc.stdout)
    result = board.parse_run(proc.stdout, proc.returncode)
    if result.cycles is not None:
        print("Cycles: %d" % result.cycles)
    print("Exit status: %d" % result.exit_status)
    if result.exit_status:
        # ExplicitExit makes scons itself end with the program's status.
        raise ProgramExit(node=target[0], status=result.exit_status,
                          errstr="the program exited with status %d" % result.exit_status)
    return 0


class ProgramExit(SCons.Errors.BuildError):
    """The program ended with a non-zero status (kept in .status)."""


def _exit_with_program_status():
    """SCons ends every failed build with status 2; `scons run` ends with the program's."""
    from SCons.Script import GetBuildFailures
    for failure in GetBuildFailures():
        if isinstance(failure, ProgramExit):
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(failure.status)


RUN_ACTION = Action(_run, "Running $SOURCE on $board")


def RunFirmware(env, firmware):
    sources = [firmware["elf"], firmware["hex"]]
    if firmware.get("model_hex"):
        sources += [firmware["model_hex"], firmware["model_bin"]]
    run = env.Alias("run", sources, RUN_ACTION)
    env.AlwaysBuild(run)
    return run


def generate(env):
    env.AddMethod(RunFirmware)
    atexit.register(_exit_with_program_status)


def exists(env):
    return True
