"""`scons run`: run each firmware on the board's simulator, print its output and cycles,
check its outputs, and end with the program's exit status. With profile=1, a table of
the cycles per operator follows each run (etcorev.run.profile).

QEMU (board=qemu) and the CV32E40P Verilator testbench (board=cv32e40p, with
verilator_model= set) say how a program ended differently; the board module parses it.
A run is a failure when the program exits non-zero, runs longer than $RUN_TIMEOUT seconds,
prints fewer outputs than its method has, or prints outputs that differ from the
expected ones (expected=, NAME.expected.json; atol=/rtol= for floats). A bundled
program (.bpte) checks its own test cases on the target, at the rtol/atol compiled in;
its run fails when one fails or is missing (etcorev.run.bundled). With profile=etdump
the ETDump the firmware prints is decoded into executor_runner.etdp beside it, and
with the export extra installed the Inspector's table follows (etcorev.run.etdump).
With several models, a summary table ends the run and the status is non-zero when any
failed.
"""

import atexit
import os
import re
import signal
import sys
import tempfile

import SCons.Errors
from SCons.Action import Action

from etcorev import boards
from etcorev.scons import options as option_table  # (a tool module's `options` is SCons's hook)
from etcorev.scons import scons_internals, variables
from etcorev.scons.vocabulary import spoken
from etcorev.image import memory_usage
from etcorev.pte import model_io
from etcorev.run import bundled, etdump, failures, profile, simulator
from etcorev.run.runner_config import profile_mode

PHASES = ("startup", "program load", "method load", "execute", "output")
TIMEOUT_STATUS = 124          # what coreutils' timeout returns


class ProgramExit(SCons.Errors.BuildError):
    """A run failed; .status is the exit status scons ends with."""


def _run_one(firmware, env):
    """Run one firmware; returns (status, output text, cycles, note)."""
    board = boards.of(env)
    model = firmware.external_model
    # Simulators may leave files in their working directory: give them a scratch one,
    # beside the firmware: a scons killed outright leaves it where `scons -c` finds it.
    with tempfile.TemporaryDirectory(prefix="run-",
                                     dir=os.path.dirname(str(firmware.elf))) as workdir:
        argv = board.run_command(str(firmware.elf), str(firmware.hex), env, workdir,
                                 model=model)
        if argv is None:
            raise SCons.Errors.UserError(spoken(env, board.NO_RUNNER_MESSAGE))
        if env.get("VERBOSE"):
            print(" ".join(argv))
        try:
            finished = simulator.run(argv, workdir, env["RUN_TIMEOUT"])
        except OSError as error:           # not there, not executable, not a program
            _, variable = board.RUNNER_OPTION or (None, None)
            raise SCons.Errors.UserError(spoken(env, "Cannot start %s: %s." % (
                "$%s=%s" % (variable, env[variable]) if variable else argv[0],
                error.strerror)))
    if finished.stopped_by:
        name = signal.Signals(finished.stopped_by).name
        raise ProgramExit(errstr="%s: stopped the run (%s)" % (name, argv[0]),
                          status=128 + finished.stopped_by)
    if finished.timed_out:
        return (TIMEOUT_STATUS, finished.output, None,
                "stopped after $RUN_TIMEOUT=%g s" % env["RUN_TIMEOUT"])
    result = board.parse_run(finished.output, finished.returncode)
    return int(result.exit_status), finished.output, result.cycles, result.note


def _check_outputs(firmware, text, env):
    """None when the printed outputs are complete (and as expected), else why not."""
    model = firmware.model
    if model is None:
        return None
    printed = model_io.parse_outputs(text)
    wanted = len(model.program.method.outputs)
    if len(printed) < wanted:
        return "printed %d of the method's %d outputs" % (len(printed), wanted)
    if model.expected:
        expected = model_io.read_tensors(model.expected, "outputs", "MODEL_EXPECTED")
        difference = model_io.compare(printed, expected, env["RUN_ATOL"], env["RUN_RTOL"])
        if difference:
            return "%s (%s)" % (difference, os.path.basename(model.expected))
        return "ok"
    return None


def _bundle_cases(firmware):
    """How many test cases a bundled program's method has; None for a plain program."""
    model = firmware.model
    if model is None or model.program is None or not model.program.is_bundled:
        return None
    return len(model.program.bundle.test_suites.get(model.program.method.name, []))


def _run(target, source, env):
    rows, failed = [], None
    for firmware in env["RUN_FIRMWARES"]:
        if not firmware.built:                # a model of the set that was not built
            problem = spoken(env, "not built: " + firmware.unbuilt)
            failed = failed or (problem, 1)
            rows.append([firmware.model.name, "FAIL"] + ["-"] * (len(PHASES) + 1)
                        + [problem])
            continue
        status, text, cycles, note = _run_one(firmware, env)
        mode = profile_mode(env.get("PROFILE"))
        # printed in one write per firmware: other jobs may print meanwhile
        shown = etdump.without_payload(text, _etdump_path(firmware)) if mode == "etdump" else text
        said = [shown.rstrip("\n")] if shown else []
        if cycles is not None:
            said.append("Cycles: %d" % cycles)
        if mode == "1" and firmware.model is not None:
            said.append(_profile_table(firmware, text, env))
        elif mode == "etdump" and firmware.model is not None:
            said.append(_etdump_report(firmware, text, env))
        cases = _bundle_cases(firmware)
        problem = None
        if status:
            model = firmware.model
            problem = ((cases is not None and bundled.check(text, cases))
                       or failures.describe(text, str(firmware.elf), env.get("ET_ROOT"),
                                            model.program.operators if model else ()) or note
                       or "the program exited with status %d" % status)
        check = None
        if not status and cases is not None:
            check = bundled.summary(text, cases)
            why = bundled.check(text, cases)
            if why:
                problem, status = why, 1
        elif not status:
            check = _check_outputs(firmware, text, env)
            if check not in (None, "ok"):
                problem, status = "outputs: " + check, 1
        said.append("Exit status: %d" % status)
        if problem:
            problem = spoken(env, problem)
            said.append("Run failed: %s" % problem)
            failed = failed or (problem, status)
        sys.stdout.write("\n".join(said) + "\n")
        rows.append(_row(firmware, status, text, check, problem))
    if len(rows) > 1:
        sys.stdout.write(_table(rows) + "\n")
    if failed:
        # The atexit handler below makes scons itself end with the program's status.
        raise ProgramExit(node=target[0], errstr="%s (exit status %d)" % failed,
                          status=failed[1])
    return 0


def _etdump_path(firmware):
    return os.path.join(os.path.dirname(str(firmware.elf)), etdump.FILE_NAME)


def _etdump_report(firmware, text, env):
    """profile=etdump: the ETDump the firmware printed, decoded into executor_runner.etdp
    beside it; the Inspector's table of it where the export extra is installed."""
    path = _etdump_path(firmware)
    model = firmware.model
    return etdump.report(text, path, model.etrecord, model.name, boards.of(env).NAME)


def _profile_table(firmware, text, env):
    """profile=1: operators, calls, cycles (instructions on QEMU) and shares of execute."""
    board = boards.of(env)
    return "\nProfile of %s on %s\n%s\n" % (
        firmware.model.name, board.NAME,
        profile.table(profile.parse(text), board.COUNTER_UNIT))


def _row(firmware, status, text, check, problem):
    cycles = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^Cycles (%s): (\d+)$" % "|".join(PHASES), text, re.M)}
    sizes = memory_usage.memory_usage(str(firmware.elf), [])["totals"]
    name = firmware.model.name if firmware.model else os.path.basename(str(firmware.elf))
    return [name, "ok" if not status else "FAIL %d" % status] + \
        [str(cycles.get(p, "-")) for p in PHASES] + \
        ["%d/%d" % (sizes["text"], sizes["data"] + sizes["bss"]),
         check or ("-" if not problem else problem)]


def _table(rows):
    header = ["model", "status"] + list(PHASES) + ["text/data+bss", "outputs"]
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header) - 1)]
    lines = ["", "Summary (%d models; cycles per phase)" % len(rows)]
    for row in [header] + rows:
        lines.append("  ".join(cell.ljust(width) if i < 2 else cell.rjust(width)
                               for i, (cell, width) in enumerate(zip(row, widths)))
                     + "  " + row[-1])
    return "\n".join(lines)


def _exit_with_program_status():
    """SCons ends every failed build with status 2; `scons run` ends with the program's."""
    from SCons.Script import GetBuildFailures
    for failure in GetBuildFailures():
        if isinstance(failure, ProgramExit) and isinstance(failure.status, int):
            sys.stdout.flush()
            sys.stderr.flush()
            scons_internals.exit_now(failure.status)


_exit_registered = []


def RunFirmwares(env, firmwares, requested=False):
    """The `run` alias for these firmwares (etcorev.artifacts.Firmware, built or not).
    requested: `run` is among the targets: from here on, a stop signal stops the
    simulator of a running program (this must be called from the main thread)."""
    variables.check(env, "RUN_TIMEOUT", "RUN_MAX_CYCLES", "RUN_RTOL", "RUN_ATOL",
                    "VERILATOR_MODEL", "PROFILE")
    if requested:
        simulator.watch_signals()
    if not _exit_registered:
        atexit.register(_exit_with_program_status)
        _exit_registered.append(True)
    sources = [node for firmware in firmwares if firmware.built
               for node in firmware.simulation_inputs]
    if profile_mode(env.get("PROFILE")) == "etdump":
        for firmware in firmwares:     # `scons -c` removes the ETDump a run decoded
            if firmware.built:
                env.Clean(firmware.elf, _etdump_path(firmware))
    run = env.Alias("run", sources, Action(_run, "Running on $BOARD"),
                    RUN_FIRMWARES=firmwares)
    env.AlwaysBuild(run)
    return run


def generate(env):
    env.SetDefault(VERILATOR_MODEL="", **option_table.defaults(
        "RUN_TIMEOUT", "RUN_MAX_CYCLES", "RUN_RTOL", "RUN_ATOL", "PROFILE", "BOARD"))
    env.AddMethod(RunFirmwares)


def exists(env):
    return True
