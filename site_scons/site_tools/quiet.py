"""One-line build messages with progress, full command lines with verbose=1:

    [ 42%] Compiling executorch/runtime/core/evalue.cpp

In the style of PlatformIO's builder: every *COMSTR gets a short message unless the
user asked for the commands themselves. The percentage is the share of the files this
build can make (the derived files under the targets asked for) that SCons has reached
so far; up-to-date files count as reached, so an incremental build that only relinks
prints "[100%] Linking ...". It is part of the message, so it shows in logs and pipes
as well as on a terminal.

Paths in messages are short: relative to the top directory, the build directory or
the ExecuTorch tree's parent (`executorch/runtime/...`), when under one of them."""

import copy
import os

import SCons.Action
import SCons.Node
import SCons.Node.Alias
import SCons.Node.FS
import SCons.Script

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
    # elf_outputs' builders (it only sets these when they are unset).
    "VERILOGHEXCOMSTR": "Writing $QUIET_TARGET",
    "INTELHEXCOMSTR": "Writing $QUIET_TARGET",
    "RAWBINARYCOMSTR": "Writing $QUIET_TARGET",
    "SIZEREPORTCOMSTR": "Checking size of $QUIET_SOURCE",
    # inspect_firmware's report and picture.
    "INSPECTCOMSTR": "Inspecting $QUIET_SOURCE",
}


class BuildProgress:
    """SCons calls this (through Progress()) with every node it is about to build or
    find up to date, once each; it counts the derived files among them against all
    derived files under the build targets (counted at the first call, when the
    targets are final). Implicit dependencies are not scanned for the count; a
    generated file reached only through an #include counts when reached, and the
    percentage stops at 100."""

    def __init__(self):
        self.done = 0
        self.total = None
        self.reached = {}     # node -> the percentage when SCons reached it

    @staticmethod
    def _derived(node):
        return isinstance(node, SCons.Node.FS.File) and node.has_builder()

    @staticmethod
    def _top_nodes():
        fs = SCons.Node.FS.get_default_fs()
        for target in SCons.Script.BUILD_TARGETS:
            if isinstance(target, SCons.Node.Node):
                yield target
            else:
                yield SCons.Node.Alias.default_ans.lookup(target) or fs.Entry(target)

    def _count(self):
        seen, stack, total = set(), list(self._top_nodes()), 0
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            total += self._derived(node)
            # Direct attributes, not children(): that would scan, or memoise a child
            # list before SCons scans the node.
            for children in (node.sources, node.depends, node.implicit):
                stack.extend(children or ())
        return total

    def __call__(self, node):
        if self.total is None:
            self.total = self._count()
        if self._derived(node):
            self.done += 1
            self.reached[node] = self.percent()

    def percent(self):
        return min(100, 100 * self.done // self.total) if self.total else None

    def prefix(self, node):
        """For the message of the task building node: where the build was when SCons
        reached it (messages of parallel jobs can still interleave)."""
        percent = self.reached.get(node, self.percent())
        return "" if percent is None else "[%3d%%] " % percent


def _short_path(env, node):
    path = node.get_abspath() if hasattr(node, "get_abspath") else str(node)
    top = env.Dir("#").abspath
    bases = [top]
    if env.get("build_dir"):
        bases.append(os.path.normpath(os.path.join(top, env["build_dir"])))
    if env.get("ET_ROOT"):
        bases.append(os.path.dirname(env["ET_ROOT"]))
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
        action = SCons.Action.Action(builder.action.execfunction, "$TEXTFILECOMSTR",
                                     varlist=builder.action.varlist)
    except AttributeError:      # not SCons's textfile tool as we know it: leave it
        return
    quiet = copy.copy(builder)
    quiet.action = action
    env["BUILDERS"]["Textfile"] = quiet


def generate(env):
    if env.get("verbose"):
        return
    env["QUIET_SOURCE"] = _quiet_source
    env["QUIET_TARGET"] = _quiet_target
    progress = BuildProgress()
    env["QUIET_PROGRESS"] = lambda target, source, env, for_signature: (
        progress.prefix(target[0]) if target else "")
    for name, message in MESSAGES.items():
        env[name] = "${QUIET_PROGRESS}" + message
    _quiet_textfile(env)
    SCons.Script.Progress(progress)


def exists(env):
    return True
