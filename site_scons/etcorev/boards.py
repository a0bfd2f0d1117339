"""Boards: one module each under pal/boards/<name>/board.py with a small contract.

A board module defines:
    DESCRIPTION        one line for `scons -h`
    SIMULATOR          (optional) what runs its firmware, for messages ("QEMU")
    DEFINES            CPPDEFINES for the shared startup code and console (board.c)
    regions(model_placement) -> [Region]   memory regions; the first holds the image,
                       a region named "model" holds an external model
    run_command(elf, hexfile, env, workdir, model) -> [argv] or None
                       how `scons run` runs firmware; None: NO_RUNNER_MESSAGE says why
    RUNNER_OPTION      (optional) the option naming the simulator, for errors about it
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


def load(name):
    path = os.path.join(BOARDS_DIR, name, "board.py")
    if not os.path.isfile(path):
        raise BuildSetupError("Unknown board '%s'. Valid boards: %s."
                              % (name, ", ".join(names())))
    module = load_module(path, "board_" + name)
    module.NAME = name
    module.DIR = os.path.dirname(os.path.abspath(path))
    return module


def built(firmwares):
    """The firmwares that are built: a model of a set that could not be (a corrupt
    .pte, say) is a dict with "model" and "unbuilt" (why) and nothing to run."""
    return [firmware for firmware in firmwares if not firmware.get("unbuilt")]


def external_model(firmware):
    """[model hex, model binary] of a firmware built with model_placement=external (the
    `model` argument of run_command and debug_command), else None."""
    if not firmware.get("model_hex"):
        return None
    return [str(firmware["model_hex"]), str(firmware["model_bin"])]


def simulation_inputs(firmware):
    """What `scons run` and `scons debug` hand a simulator for one firmware (a dict of
    nodes): the ELF, its hex, and an external model's hex and binary when it has one."""
    return [firmware["elf"], firmware["hex"]] + \
        [firmware[k] for k in ("model_hex", "model_bin") if firmware.get(k)]
