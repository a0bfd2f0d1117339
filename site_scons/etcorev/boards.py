"""Boards: a directory each, pal/boards/<name>/ (or a directory of the user's own, named
by its path), holding board.py with a small contract and, optionally, the board's own
startup sources (crt0.S, board.c, ...: each stands in for the common one of the same name
in pal/boards/common, and others are added) and its own sections.ld.

A board module defines:
    SIMULATOR          (optional) what runs its firmware, for messages ("QEMU")
    COREV_EXTENSIONS   (optional, default True) False: its core cannot run code that uses
                       the CORE-V extensions (isa=..._xcv), which is refused
    DEFINES            CPPDEFINES for the shared startup code and console (board.c)
    regions(model_placement) -> [Region]   memory regions: one of kind "all" (code and
                       data, as on the testbench), or one of kind "code" (flash: code,
                       read-only data, the load image of .data) and one of kind "data"
                       (RAM: .data copied there by crt0, .bss, pools, stack, heap); a
                       region of kind "model" holds an external model
    run_command(elf, hexfile, env, workdir, model) -> [argv] or None
                       how `scons run` runs firmware; None: NO_RUNNER_MESSAGE says why
    RUNNER_OPTION      (optional) (option, construction variable) naming the simulator,
                       for errors about it
    parse_run(output, returncode) -> RunResult         exit status and cycles
    debug_command(elf, hexfile, env, workdir, port, model) -> [argv] or None
                       (optional) the simulator halted with a gdb server on 127.0.0.1:port,
                       for `scons debug`; boards without one say why in NO_DEBUG_MESSAGE
    COUNTER_UNIT       (optional) what board_cycles() counts there: "cycles" (default)
"""

import os
from dataclasses import dataclass
from typing import Optional

from etcorev import load_module, locations
from etcorev.errors import BuildSetupError

BOARDS_DIR = locations.source_dir("pal", "boards")


@dataclass(frozen=True)
class Region:
    name: str
    origin: int
    length: int
    kind: str = "all"            # "all", "code", "data" or "model"

    @property
    def end(self):
        return self.origin + self.length

    def as_dict(self):
        return {"name": self.name, "origin": self.origin, "length": self.length}


@dataclass
class RunResult:
    exit_status: int
    cycles: Optional[int] = None
    note: Optional[str] = None      # why the run failed, when the simulator says


def names():
    return sorted(d for d in os.listdir(BOARDS_DIR)
                  if os.path.isfile(os.path.join(BOARDS_DIR, d, "board.py")))


_LOADED = {}


def load(name):
    """The board module of a board name (pal/boards/<name>) or board directory."""
    directory = name if os.sep in name else os.path.join(BOARDS_DIR, name)
    path = os.path.join(directory, "board.py")
    if path not in _LOADED:
        if not os.path.isfile(path):
            raise BuildSetupError(
                "Unknown board '%s'. Valid boards: %s, or the path of a directory with a "
                "board.py." % (name, ", ".join(names())))
        module = load_module(path, "board_" + os.path.basename(os.path.normpath(directory)))
        module.NAME = os.path.basename(os.path.normpath(directory))
        module.DIR = os.path.dirname(os.path.abspath(path))
        _LOADED[path] = module
    return _LOADED[path]


def of(env):
    """The board module of an environment's $BOARD."""
    return load(env["BOARD"])


def regions_of(env):
    """The memory regions of $BOARD for $MODEL_PLACEMENT."""
    return of(env).regions(env.get("MODEL_PLACEMENT", "embedded"))


def region(regions, kind):
    """The region that holds code ("code") or data ("data"): its own, or the one that
    holds both."""
    return next(r for r in regions if r.kind in (kind, "all"))
