"""`scons debug`: build, start the firmware halted in the board's simulator with a gdb
server, and debug it with gdb-multiarch; the simulator is stopped when gdb ends.

    scons debug board=qemu debug=1              # interactive gdb, a breakpoint at main
    scons debug board=qemu debug_commands=FILE  # gdb -batch with that command file

QEMU starts with `-S -gdb tcp:127.0.0.1:PORT` on a free local port (never another
interface). gdb gets the ELF and an init file that maps the paths -ffile-prefix-map
wrote into the debug information back to the files (`set substitute-path`: `.` is the
checkout, `build` the build directory, `executorch` the ExecuTorch tree) and connects.
The interactive gdb owns the terminal: Ctrl-C interrupts the target and goes neither to
scons nor to the simulator, whose console output goes to the same terminal. Build
with debug=1 (or build_type=RelWithDebInfo) for source lines; a Release build has
symbols only.

A board supports this with debug_command(elf, hexfile, env, workdir, port, model) ->
argv; a board without it (the CV32E40P testbench: no debug port) is a one-line error.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading

import SCons.Errors
from SCons.Action import Action

from etcorev import boards
from etcorev.scons import options as option_table  # (a tool module's `options` is SCons's hook)
from etcorev.scons import builddir
from etcorev.run import simulator
from etcorev.errors import BuildSetupError

GDB = "gdb-multiarch"
NO_GDB_MESSAGE = "gdb-multiarch is not installed: `apt-get install gdb-multiarch` (./setup.sh does this)."


def free_port():
    """A TCP port on 127.0.0.1 that nobody listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def source_maps(env):
    """(prefix in the debug information, directory) pairs: what -ffile-prefix-map
    replaced (SConstruct and the executorch tool), most specific first."""
    maps = [(builddir.debug_name(prefix), directory)
            for directory, prefix in reversed(env["PATH_PREFIXES"]) if os.path.isabs(directory)]
    if env.get("ET_ROOT"):
        maps.insert(0, (builddir.debug_name("executorch"), env["ET_ROOT"]))
    return maps


def init_commands(env, port, interactive):
    lines = ["set pagination off" if not interactive else "set pagination on",
             "set confirm off" if not interactive else "set confirm on"]
    for prefix, directory in source_maps(env):
        lines.append("set substitute-path %s %s" % (prefix, directory))
    # Relative names ("pal/corev_pal.cpp") are found below the checkout too.
    lines.append("directory %s" % env.Dir("#").abspath)
    lines += ["set tcp connect-timeout 20",
              "target remote 127.0.0.1:%d" % port]
    if interactive:
        lines += ["break main",
                  "echo \\nHalted before the firmware's first instruction (QEMU's reset "
                  "code); a breakpoint is set at main: type continue (c).\\n"]
    return lines


def _copy_output(stream, out):
    for line in iter(stream.readline, ""):
        out.write(line)
        out.flush()


def _start_simulator(argv):
    """The simulator in a session of its own (Ctrl-C at gdb's prompt does not reach it),
    killed with us if we die."""
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace",
                            start_new_session=True, preexec_fn=simulator.dies_with_parent(signal.SIGKILL))


def _stop(process):
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()


def _run_gdb_interactive(argv):
    """gdb in the foreground of the terminal, in a process group of its own: Ctrl-C goes
    to gdb alone. Without a terminal, it simply runs."""
    try:
        tty = os.open("/dev/tty", os.O_RDWR)
    except OSError:
        return subprocess.call(argv, preexec_fn=simulator.dies_with_parent(signal.SIGTERM))
    own_group = os.getpgrp()
    gdb = None
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU, signal.SIGTTIN})
    try:
        gdb = subprocess.Popen(argv, process_group=0,
                               preexec_fn=simulator.dies_with_parent(signal.SIGTERM))
        try:
            os.tcsetpgrp(tty, gdb.pid)
        except OSError:
            pass
        return gdb.wait()
    finally:
        if gdb is not None and gdb.poll() is None:
            gdb.kill()
            gdb.wait()
        try:
            os.tcsetpgrp(tty, own_group)
        except OSError:
            pass
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.close(tty)


def _debug(target, source, env):
    firmware = env["DEBUG_FIRMWARE"]
    board = boards.of(env)
    gdb = shutil.which(GDB)
    if not gdb:
        raise SCons.Errors.UserError(NO_GDB_MESSAGE)
    commands = env.get("DEBUG_COMMANDS", "")
    model = firmware.external_model
    elf = str(firmware.elf)
    with tempfile.TemporaryDirectory(prefix="corev-debug-") as workdir:
        port = free_port()
        argv = board.debug_command(elf, str(firmware.hex), env, workdir, port, model=model)
        if argv is None:
            raise SCons.Errors.UserError(board.NO_RUNNER_MESSAGE)
        init = os.path.join(workdir, "init.gdb")
        with open(init, "w") as f:
            f.write("\n".join(init_commands(env, port, not commands)) + "\n")
        if commands:
            gdb_argv = [gdb, "-nx", "-q", "-batch", "-x", init, "-x", commands, elf]
        else:
            gdb_argv = [gdb, "-q", "-x", init, elf]
        if env.get("VERBOSE"):
            print(" ".join(argv))
            print(" ".join(gdb_argv))
        if env["BUILD_TYPE"] == "Release":
            # Optimised, no line information: breakpoints in inlined functions are
            # passed by, variables are gone. Said before gdb starts, not after.
            print("This is a Release image (-Os, symbols only): breakpoints in inlined "
                  "functions are not hit and there are no source lines; debug=1 builds a "
                  "debuggable image (or build_type=RelWithDebInfo).")
        print("%s gdb server on 127.0.0.1:%d (halted)"
              % (board.SIMULATOR, port))
        process = _start_simulator(argv)
        reader = threading.Thread(target=_copy_output, args=(process.stdout, sys.stdout),
                                  daemon=True)
        reader.start()
        try:
            if commands:
                status = subprocess.call(gdb_argv, stdin=subprocess.DEVNULL, cwd=workdir,
                                         preexec_fn=simulator.dies_with_parent(signal.SIGTERM))
            else:
                status = _run_gdb_interactive(gdb_argv)
        finally:
            _stop(process)
            reader.join(timeout=5)
    if status:
        raise SCons.Errors.BuildError(node=target[0], errstr="gdb exited with status %d" % status)
    return 0


def _check_request(env):
    """`scons debug` asked for: what makes it impossible, as one line, before building."""
    board = boards.of(env)
    if board.debug_command is None:
        raise BuildSetupError(board.NO_DEBUG_MESSAGE)
    if env.get("DEBUG_COMMANDS") and not os.path.isfile(env["DEBUG_COMMANDS"]):
        raise BuildSetupError("$DEBUG_COMMANDS=%s: no such file." % env["DEBUG_COMMANDS"])
    if not shutil.which(GDB):
        raise BuildSetupError(NO_GDB_MESSAGE)


def DebugFirmwares(env, firmwares, requested=False):
    """The `debug` alias for the one firmware of this build. requested: `debug` is among
    the targets: what makes it impossible is said now, before building."""
    if requested:
        _check_request(env)
    if requested and len(firmwares) != 1:
        raise BuildSetupError("scons debug debugs one firmware: give one $MODEL (this build "
                              "has %d)." % len(firmwares))
    if not firmwares:
        return []
    firmware = firmwares[0]
    debug = env.Alias("debug", firmware.simulation_inputs,
                      Action(_debug, "Debugging on $board"),
                      DEBUG_FIRMWARE=firmware)
    env.AlwaysBuild(debug)
    return debug


def generate(env):
    env.SetDefault(DEBUG_COMMANDS="", **option_table.defaults("BOARD"))
    env.AddMethod(DebugFirmwares)


def exists(env):
    return bool(shutil.which(GDB))
