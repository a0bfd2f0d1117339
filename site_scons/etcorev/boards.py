"""Boards: a directory each, pal/boards/<name>/ (or a directory of the user's own, named
by its path), holding board.py with a small contract and, optionally, the board's own
startup sources (crt0.S, board.c, ...: each stands in for the common one of the same name
in pal/boards/common, and others are added) and its own sections.ld.

The contract is CONTRACT below, written once: the parts a board module must define and
those it may, each with what it is. load() checks a board.py against it when it first
loads it (and gives each optional part it leaves out its default), checked_regions() the
regions it gives for a model placement: a board.py that breaks the contract is refused
in one line naming the file and the part, before anything is built. A board module
defines:
"""

import difflib
import inspect
import os
import re
import textwrap
import traceback
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

from etcorev import load_module, locations
from etcorev.errors import BuildSetupError
from etcorev.scons import variables

BOARDS_DIR = locations.source_dir("pal", "boards")


@dataclass(frozen=True)
class Region:
    name: str
    origin: int
    length: int
    kind: str = "all"            # one of REGION_KINDS

    @property
    def end(self):
        return self.origin + self.length

    def as_dict(self):
        return {"name": self.name, "origin": self.origin, "length": self.length}


# What a region holds: code and data (a board with one memory), code (flash: code,
# read-only data, the load image of .data), data (RAM: .data copied there by crt0, .bss,
# pools, stack, heap), or an external model.
REGION_KINDS = ("all", "code", "data", "model")
# crt0 copies .data and clears .bss a word at a time, from region-relative symbols.
REGION_ALIGNMENT = 4
ADDRESS_SPACE = 2**32            # what a 32-bit core addresses


@dataclass
class RunResult:
    exit_status: int
    cycles: Optional[int] = None
    note: Optional[str] = None      # why the run failed, when the simulator says


# ---------------------------------------------------------------- the contract

def _kind_of(value):
    return "%r (%s %s)" % (value, "an" if type(value).__name__[0] in "aeiou" else "a",
                           type(value).__name__)


def _text(value):
    return None if isinstance(value, str) else "must be text (a str), not %s" % _kind_of(value)


def _true_or_false(value):
    return None if isinstance(value, bool) else "must be True or False, not %s" % _kind_of(value)


def _defines(value):
    wanted = "must be a list of NAME or (NAME, VALUE), the names str, the values str or int"
    if not isinstance(value, (list, tuple)):
        return "%s, not %s" % (wanted, _kind_of(value))
    for number, item in enumerate(value, 1):
        if isinstance(item, str):
            continue
        if isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str) \
                and isinstance(item[1], (str, int)) and not isinstance(item[1], bool):
            continue
        return "%s; item %d is %r" % (wanted, number, item)
    return None


def _option_and_variable(value):
    if value is None or (isinstance(value, tuple) and len(value) == 2
                         and all(isinstance(v, str) for v in value)):
        return None
    return "must be a pair of str, (option, construction variable), not %s" % _kind_of(value)


@dataclass(frozen=True)
class Part:
    """A part of the board contract: a function, when it has parameters (those the build
    passes it; "model=None": by keyword), else a module attribute."""
    name: str
    about: str
    required: bool = True
    parameters: Optional[Tuple[str, ...]] = None
    check: Optional[Callable] = None     # an attribute's value -> what is wrong, or None
    default: Optional[Callable] = None   # the board module -> an optional part's default

    @property
    def is_function(self):
        return self.parameters is not None

    @property
    def shown(self):
        return "%s(%s)" % (self.name, ", ".join(self.parameters)) if self.is_function \
            else self.name


CONTRACT = (
    Part("DEFINES", "CPPDEFINES for the shared startup code and console (board.c): NAME or "
         "(NAME, VALUE) each", check=_defines),
    Part("regions", "the memory regions (Region) for a model placement (embedded, "
         "external): one of kind all (code and data, as on the testbench), or one of kind "
         "code and one of kind data (flash and RAM); for external, one of kind model too; "
         "none overlapping, each a multiple of 4 bytes at a multiple of 4",
         parameters=("model_placement",)),
    Part("run_command", "how `scons run` runs firmware: [argv], or None when it cannot "
         "here (NO_RUNNER_MESSAGE says why)",
         parameters=("elf", "hexfile", "env", "workdir", "model=None")),
    Part("parse_run", "the exit status and cycles of a run: a RunResult",
         parameters=("output", "returncode")),
    Part("SIMULATOR", "what runs its firmware, for messages (\"QEMU\"; default: the "
         "board's name)", required=False, check=_text, default=lambda board: board.NAME),
    Part("COREV_EXTENSIONS", "False: its core cannot run code that uses the CORE-V "
         "extensions (isa=..._xcv), which is refused (default True)", required=False,
         check=_true_or_false, default=lambda board: True),
    Part("RUNNER_OPTION", "(option, construction variable) naming the simulator, for "
         "errors about it", required=False, check=_option_and_variable,
         default=lambda board: None),
    Part("NO_RUNNER_MESSAGE", "why run_command() gave no command", required=False,
         check=_text, default=lambda board: "Board %s cannot run firmware here: its "
         "run_command() gave no command." % board.NAME),
    Part("debug_command", "the simulator halted with a gdb server on 127.0.0.1:port, for "
         "`scons debug`: [argv], or None when it cannot here",
         required=False, parameters=("elf", "hexfile", "env", "workdir", "port",
                                     "model=None"), default=lambda board: None),
    Part("NO_DEBUG_MESSAGE", "why a board without debug_command() cannot be debugged",
         required=False, check=_text, default=lambda board: "$BOARD=%s has no debugger "
         "support: use $BOARD=qemu." % board.NAME),
    Part("COUNTER_UNIT", "what board_cycles() counts there (default: \"cycles\")",
         required=False, check=_text, default=lambda board: "cycles"),
)
CONTRACT_NAMES = {part.name for part in CONTRACT}


def contract_text():
    """The contract as the module's docstring lists it: each part, then what it is."""
    lines = []
    for part in CONTRACT:
        about = ("" if part.required else "(optional) ") + part.about
        if len(part.shown) <= 18:
            lines += textwrap.wrap(about, 88, initial_indent="    %-18s " % part.shown,
                                   subsequent_indent=" " * 23)
        else:
            lines += ["    " + part.shown] + textwrap.wrap(
                about, 88, initial_indent=" " * 23, subsequent_indent=" " * 23)
    return "\n".join(lines) + "\n"


__doc__ += contract_text()


# ---------------------------------------------------------------- loading and checking

def names():
    return sorted(d for d in os.listdir(BOARDS_DIR)
                  if os.path.isfile(os.path.join(BOARDS_DIR, d, "board.py")))


_LOADED = {}
_REGIONS = {}


def load(name):
    """The board module of a board name (pal/boards/<name>) or board directory, checked
    against CONTRACT."""
    directory = name if os.sep in name else os.path.join(BOARDS_DIR, name)
    path = os.path.join(directory, "board.py")
    if path not in _LOADED:
        if not os.path.isfile(path):
            if os.sep in name:
                raise BuildSetupError(
                    "$BOARD names %s, which has no board.py: a board directory holds one "
                    "(examples/own_project/board/ is one)." % name)
            raise BuildSetupError(
                "Unknown board '%s' ($BOARD). Valid boards: %s, or the path of a directory "
                "with a board.py." % (name, ", ".join(names())))
        module = _import(path, "board_" + os.path.basename(os.path.normpath(directory)))
        module.NAME = os.path.basename(os.path.normpath(directory))
        module.DIR = os.path.dirname(os.path.abspath(path))
        _check_contract(module, path)
        _LOADED[path] = module
    return _LOADED[path]


def _line_in(path, trace):
    """The line of path where an exception (its traceback) was raised, or None."""
    lines = [frame.lineno for frame in traceback.extract_tb(trace)
             if os.path.abspath(frame.filename) == os.path.abspath(path)]
    return lines[-1] if lines else None


def _error_in(path, error):
    """'line N: Type: message' of an exception raised by code of path."""
    if isinstance(error, SyntaxError) and error.filename \
            and os.path.abspath(error.filename) == os.path.abspath(path):
        text = (error.text or "").strip()
        return "line %s: SyntaxError: %s%s" % (error.lineno, error.msg,
                                               " (`%s`)" % text if text else "")
    line = _line_in(path, error.__traceback__)
    return "%s%s: %s" % ("line %d: " % line if line else "", type(error).__name__, error)


def _import(path, module_name):
    try:
        return load_module(path, module_name)
    except (Exception, SystemExit) as error:    # whatever the file does, one line
        raise BuildSetupError("The board file %s does not import: %s. Fix it (it is "
                              "Python, run when the board is loaded)."
                              % (path, _error_in(path, error)))


def _misspelling(module, name, of_kind):
    """A name the module defines itself (not one it imports: Region, os) that looks like
    name (regionz for regions), or None."""
    def its_own(value):
        return not inspect.ismodule(value) and getattr(value, "__module__", module.__name__) \
            in (module.__name__, "builtins")
    own = {n.lower(): n for n, value in vars(module).items()
           if not n.startswith("_") and n not in CONTRACT_NAMES and its_own(value)
           and of_kind(value)}
    close = difflib.get_close_matches(name.lower(), list(own), n=1, cutoff=0.8)
    return own[close[0]] if close else None


def _accepts(function, parameters):
    """Whether function can be called with parameters, as the build calls it."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):              # a builtin: cannot tell
        return True
    positional = [p for p in parameters if "=" not in p]
    keywords = {p.split("=")[0]: None for p in parameters if "=" in p}
    try:
        signature.bind(*positional, **keywords)
    except TypeError:
        return False
    return True


def _check_contract(module, path):
    """Refuse a board module that breaks CONTRACT; give the optional parts it leaves out
    their defaults."""
    where = "The board file %s" % path
    defined = vars(module)
    for part in CONTRACT:
        if part.name not in defined:
            similar = _misspelling(module, part.name,
                                   callable if part.is_function else (lambda v: True))
            if similar:
                raise BuildSetupError(
                    "%s defines %s, which is not a part of a board; %s is: rename it."
                    % (where, similar, part.shown))
            if part.required:
                raise BuildSetupError("%s has no %s, which every board defines: %s. Add it "
                                      "(the contract: etcorev/boards.py)."
                                      % (where, part.shown, part.about))
            setattr(module, part.name, part.default(module))
            continue
        value = defined[part.name]
        if part.is_function:
            if value is None and not part.required:
                continue
            if not callable(value):
                raise BuildSetupError("%s: %s is %s, not a function; define %s: %s."
                                      % (where, part.name, _kind_of(value), part.shown,
                                         part.about))
            if not _accepts(value, part.parameters):
                raise BuildSetupError(
                    "%s: %s%s cannot be called as %s, as the build calls it; give it those "
                    "parameters." % (where, part.name, inspect.signature(value), part.shown))
        elif part.check:
            wrong = part.check(value)
            if wrong:
                raise BuildSetupError("%s: %s %s." % (where, part.name, wrong))


def checked_regions(board, model_placement):
    """board.regions(model_placement), checked: Regions of known kinds, named for the
    linker script, aligned, inside the address space, none overlapping, one for code
    and one for data (the same or two), one for the model when it is external."""
    key = (board.DIR, model_placement)
    if key not in _REGIONS:
        _REGIONS[key] = _checked_regions(board, model_placement)
    return _REGIONS[key]


def _checked_regions(board, model_placement):
    path = os.path.join(board.DIR, "board.py")
    call = "regions(%r)" % model_placement
    where = "The board file %s: %s" % (path, call)
    try:
        regions = board.regions(model_placement)
    except (Exception, SystemExit) as error:
        raise BuildSetupError("%s failed: %s. Fix it." % (where, _error_in(path, error)))
    if not isinstance(regions, (list, tuple)):
        raise BuildSetupError("%s must return a list of Region, not %s."
                              % (where, _kind_of(regions)))
    for region in regions:
        if not isinstance(region, Region):
            raise BuildSetupError("%s gives %s, which is not a Region (from etcorev.boards "
                                  "import Region; Region(name, origin, length, kind))."
                                  % (where, _kind_of(region)))
        _check_region(region, where)
    seen = {}
    for region in regions:
        if region.name in seen:
            raise BuildSetupError("%s gives two regions named %s: the linker script needs "
                                  "a name for each." % (where, region.name))
        seen[region.name] = region
    for index, first in enumerate(regions):
        for second in regions[index + 1:]:
            if first.origin < second.end and second.origin < first.end:
                raise BuildSetupError(
                    "%s gives regions %s and %s that overlap: a board's regions must not "
                    "share an address. Move or shorten one of them." % (
                        where, _span(first), _span(second)))
    memory = [r for r in regions if r.kind != "model"]
    kinds = sorted(r.kind for r in memory)
    if kinds not in (["all"], ["code", "data"]):
        raise BuildSetupError(
            "%s gives %s: a board has one region of kind all (code and data), or one of "
            "kind code (flash) and one of kind data (RAM), besides a model region."
            % (where, ", ".join("%s (%s)" % (r.name, r.kind) for r in memory) or "none"))
    models = [r for r in regions if r.kind == "model"]
    if len(models) > 1:
        raise BuildSetupError("%s gives %d regions of kind model (%s): a board has one at "
                              "most." % (where, len(models), ", ".join(r.name for r in models)))
    if model_placement == "external" and not models:
        raise BuildSetupError(
            "%s gives no region of kind model, where $MODEL_PLACEMENT=external puts the "
            "model: give regions() one for external, or build with "
            "$MODEL_PLACEMENT=embedded." % where)
    return list(regions)


LINKER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ARTICLE = {"origin": "an", "length": "a"}


def _check_region(region, where):
    if not isinstance(region.name, str) or not LINKER_NAME.match(region.name):
        raise BuildSetupError("%s gives a region named %r, not a name the linker script can "
                              "use (letters, digits and _, not first a digit)."
                              % (where, region.name))
    this = "region %s" % region.name
    for field in ("origin", "length"):
        value = getattr(region, field)
        if not isinstance(value, int) or isinstance(value, bool):
            raise BuildSetupError("%s gives %s %s %s of %s, not a whole number of bytes."
                                  % (where, this, _ARTICLE[field], field, _kind_of(value)))
    if region.kind not in REGION_KINDS:
        raise BuildSetupError("%s gives %s of kind %r; the kinds: %s."
                              % (where, this, region.kind, ", ".join(REGION_KINDS)))
    if region.length <= 0:
        raise BuildSetupError("%s gives %s, which is empty (length %d): give it its size."
                              % (where, this, region.length))
    if region.origin < 0:
        raise BuildSetupError("%s gives %s a negative origin (%d)." % (where, this,
                                                                       region.origin))
    for field in ("origin", "length"):
        value = getattr(region, field)
        if value % REGION_ALIGNMENT:
            raise BuildSetupError(
                "%s gives %s %s %s of 0x%x, not a multiple of %d (a word: the startup code "
                "copies and clears whole words)." % (where, this, _ARTICLE[field], field,
                                                    value, REGION_ALIGNMENT))
    if region.end > ADDRESS_SPACE:
        raise BuildSetupError("%s gives %s, which ends at 0x%x, beyond the 4 GiB a 32-bit "
                              "core addresses." % (where, _span(region), region.end))


def _span(region):
    return "%s (0x%08x-0x%08x)" % (region.name, region.origin, region.end - 1)


def check(name, model_placement):
    """The board module of name, its contract and its regions for model_placement
    checked (what a build checks first, before it makes anything)."""
    board = load(name)
    checked_regions(board, model_placement)
    return board


def of(env):
    """The board module of an environment's $BOARD."""
    return load(variables.value(env, "BOARD"))


def regions_of(env):
    """The memory regions of $BOARD for $MODEL_PLACEMENT, checked."""
    return checked_regions(of(env), variables.value(env, "MODEL_PLACEMENT", "embedded"))


def region(regions, kind):
    """The region that holds code ("code") or data ("data"): its own, or the one that
    holds both."""
    return next(r for r in regions if r.kind in (kind, "all"))
