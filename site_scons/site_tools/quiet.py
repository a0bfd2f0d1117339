"""One-line build messages with progress, full command lines with $VERBOSE (set it before
the tool is loaded):

    [ 42%] Compiling executorch/runtime/core/evalue.cpp

In the style of PlatformIO's builder: every *COMSTR gets a short message unless the
user asked for the commands themselves. The percentage is the share of the files this
build can make (the derived files under the targets asked for) that SCons has reached
so far; up-to-date files count as reached, so an incremental build that only relinks
prints "[100%] Linking ...". $PRINT_CMD_LINE_FUNC puts it in front of each message as
it is printed, so it shows in logs and pipes as well as on a terminal, and the lines of
parallel jobs rise in order. Other tools give their actions messages with
etcorev.scons.quiet_messages.set_message().

Paths in messages are short: relative to the top directory, the build directory, the
ExecuTorch tree's parent (`executorch/runtime/...`) or, for an installed package, the
directory of its sources (`pal/corev_pal.cpp`), when under one of them."""

import copy
import os
import sys
import threading

import SCons.Action
import SCons.Node
import SCons.Node.FS
import SCons.Script
import SCons.Util

from etcorev.scons.tools import add_progress, require_tools
from etcorev import locations
from etcorev.scons import scons_internals

MESSAGES = {
    "CCCOMSTR": "Compiling $QUIET_SOURCE",
    "CXXCOMSTR": "Compiling $QUIET_SOURCE",
    "SHCCCOMSTR": "Compiling $QUIET_SOURCE",
    "SHCXXCOMSTR": "Compiling $QUIET_SOURCE",
    "ASCOMSTR": "Assembling $QUIET_SOURCE",
    "ASPPCOMSTR": "Assembling $QUIET_SOURCE",
    "ARCOMSTR": "Archiving $QUIET_TARGET",
    "RANLIBCOMSTR": "Indexing $QUIET_TARGET",
    "LINKCOMSTR": "Linking $QUIET_TARGET",
    "TEXTFILECOMSTR": "Writing $QUIET_TARGET",
    "SUBSTFILECOMSTR": "Writing $QUIET_TARGET",
    "GENCOMSTR": "Generating $QUIET_TARGET",
    "INSTALLSTR": "Installing $QUIET_TARGET",
}


class BuildProgress:
    """SCons calls this (through Progress()) with every node it is about to build or
    find up to date, once each. The percentage is the share of all derived files under
    the build targets (counted at the first call, when the targets are final) that SCons
    has reached; up-to-date files count as reached. Messages take it when they are
    printed, so the percentages rise with the build and the last message says 100%."""

    def __init__(self):
        self.done = 0
        self.total = None
        self.shown = 0
        self.lock = threading.Lock()

    @staticmethod
    def _derived(node):
        # Targets of Install() are Entry nodes until SCons decides they are files.
        return (isinstance(node, (SCons.Node.FS.File, SCons.Node.FS.Entry))
                and not isinstance(node, SCons.Node.FS.Dir) and node.has_builder())

    @staticmethod
    def _top_nodes():
        fs = SCons.Node.FS.get_default_fs()
        for target in SCons.Script.BUILD_TARGETS:
            if isinstance(target, SCons.Node.Node):
                yield target
            else:
                yield scons_internals.alias_node(target) or fs.Entry(target)

    @staticmethod
    def _children(node):
        """Direct attributes, not children(): that would scan a node before SCons does.
        Libraries given to a link through $LIBS become children only when SCons scans
        it, so they are taken from the link's environment."""
        yield from scons_internals.direct_children(node)
        if node.has_builder():
            libs = node.get_build_env().get("LIBS", [])
            yield from (lib for lib in SCons.Util.flatten(libs) if isinstance(lib, SCons.Node.Node))

    def _count(self):
        seen, stack, total = set(), list(self._top_nodes()), 0
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            total += self._derived(node)
            stack.extend(self._children(node))
        return total

    def __call__(self, node):
        if self.total is None:
            self.total = self._count()
        if self._derived(node):
            self.done += 1

    def print_line(self, line, target, source, env):
        """SCons's $PRINT_CMD_LINE_FUNC: the message with the percentage, taken and
        printed under one lock, so that parallel jobs print them in rising order."""
        with self.lock:
            if self.total:
                self.shown = max(self.shown, min(100, 100 * self.done // self.total))
                line = "[%3d%%] %s" % (self.shown, line)
            sys.stdout.write(line + "\n")


def _short_path(env, node):
    path = node.get_abspath() if hasattr(node, "get_abspath") else str(node)
    top = env.Dir("#").abspath
    bases = [top]
    if env.get("BUILD_DIR"):
        bases.append(os.path.normpath(os.path.join(top, env["BUILD_DIR"])))
    if env.get("ET_ROOT"):
        bases.append(os.path.dirname(env["ET_ROOT"]))
    # The build's own sources (the PAL, kernels, runner) where an installed package keeps
    # them: pal/corev_pal.cpp, as in a checkout, not the site-packages path.
    bases.append(locations.source_dir())
    for base in bases:
        if path.startswith(base + os.sep):
            return os.path.relpath(path, base)
    return path


def _quiet_source(target, source, env, for_signature):
    return _short_path(env, source[0]) if source else ""


def _quiet_target(target, source, env, for_signature):
    return _short_path(env, target[0]) if target else ""


def _quiet_textfile(env):
    """Textfile says "Creating 'path'" whatever $TEXTFILECOMSTR says: give it an action
    that uses it (the same function and varlist, so the same signature)."""
    builder = env["BUILDERS"].get("Textfile")
    try:
        function, varlist = scons_internals.textfile_function(builder)
    except AttributeError:      # not SCons's textfile tool as we know it: leave it
        return
    action = SCons.Action.Action(function, "$TEXTFILECOMSTR", varlist=varlist)
    quiet = copy.copy(builder)
    quiet.action = action
    env["BUILDERS"]["Textfile"] = quiet


def generate(env):
    if env.get("VERBOSE"):
        return
    env["QUIET_SOURCE"] = _quiet_source
    env["QUIET_TARGET"] = _quiet_target
    progress = BuildProgress()
    env["PRINT_CMD_LINE_FUNC"] = progress.print_line
    for name, message in MESSAGES.items():
        env[name] = message
    # Those other tools asked for before this one was loaded (quiet_messages).
    for name, message in env.get("QUIET_MESSAGES", {}).items():
        env[name] = message
    require_tools(env, "textfile")
    _quiet_textfile(env)
    add_progress(progress)


def exists(env):
    return True
