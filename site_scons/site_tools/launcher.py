"""Compiler launchers: ccache, distcc, icecc or any command put in front of each compile.

    scons launcher=ccache          ccache riscv64-unknown-elf-g++ ... -c main.cpp
    scons launcher=distcc          hosts from DISTCC_HOSTS (or ~/.distcc/hosts)
    scons launcher="ccache -s"     any command, with its arguments

C, C++ and preprocessed assembler (.S) compiles get the launcher, as CMake's
<LANG>_COMPILER_LAUNCHER does; links and archives do not. The launcher stands between
$( and $), so it is not part of any build signature: switching launchers, or dropping
one, rebuilds nothing. compile_commands.json keeps the plain compiler commands (clangd
and other tools expect the compiler first).

SCons runs commands with the environment it is given, not the user's: with a launcher,
the compile commands also see HOME, XDG_CACHE_HOME and XDG_CONFIG_HOME (where ccache and
distcc keep their settings) and every DISTCC_*, CCACHE_* and ICECC_* variable.
A launcher that is not installed is a BuildSetupError, before anything is built.

$LAUNCHER is the command as typed (a string). The tool loads the compiler tools (cc,
c++, gas) first: it replaces their compile actions.
"""

import os
import shlex
import shutil

from SCons.Action import Action

from etcorev.scons.tools import require_tools
from etcorev.scons import scons_internals
from etcorev.errors import BuildSetupError

PASSED_VARIABLES = ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
PASSED_PREFIXES = ("DISTCC_", "CCACHE_", "ICECC_")
KNOWN = ("ccache", "distcc", "icecc")       # Debian packages of these names (setup.sh)


def launcher_command(value, path):
    """The launcher's words, its program found on path; a BuildSetupError if it is not."""
    try:
        words = shlex.split(value)
    except ValueError as error:
        raise BuildSetupError("$LAUNCHER=%s: cannot split it into words (%s)." % (value, error))
    if not words or shutil.which(words[0], path=path):
        return words
    program = words[0]
    where = ("does not exist or is not executable" if os.sep in program
             else "is not installed (not found on PATH)")
    if os.path.basename(program) in KNOWN:
        remedy = ("Install it (Debian: apt-get install %s; ./setup.sh installs ccache, distcc "
                  "and icecc)" % os.path.basename(program))
    else:
        remedy = "Name an installed command"
    raise BuildSetupError("$LAUNCHER=%s: %s %s. %s, or build without $LAUNCHER."
                          % (value, program, where, remedy))


def passed_environment(environ):
    """The variables of the user's environment that launchers read."""
    return {name: value for name, value in environ.items()
            if name in PASSED_VARIABLES or name.startswith(PASSED_PREFIXES)}


def generate(env):
    require_tools(env, "cc", "c++", "gas")
    words = launcher_command(env.get("LAUNCHER", ""), env["ENV"].get("PATH"))
    if not words:
        return
    env["COMPILER_LAUNCHER"] = words
    env["ENV"].update(passed_environment(os.environ))
    for name in ("StaticObject", "SharedObject"):
        builder = env["BUILDERS"].get(name)
        if builder is None:
            continue
        for suffix, command in scons_internals.compile_actions(builder):
            scons_internals.set_compile_action(builder, suffix, Action(
                "$( $COMPILER_LAUNCHER $) $%sCOM" % command, "$%sCOMSTR" % command))


def exists(env):
    try:
        return bool(launcher_command(env.get("LAUNCHER", ""), env["ENV"].get("PATH")))
    except BuildSetupError:
        return False
