"""A board of this project's own, the layout of a real MCU: code and read-only data (the
model among them) in a flash region, data and the stack in RAM, .data copied from flash to
RAM by the startup code. It runs on QEMU's virt machine, whose memory at 0x80000000 stands
in for both (QEMU does not enforce read-only flash)."""

import os
import shutil

from etcorev.boards import Region, RunResult

SIMULATOR = "QEMU"
DEFINES = [("BOARD_CONSOLE_ADDR", "0x10000000"), ("BOARD_EXIT_ADDR", "0x100000"),
           "BOARD_EXIT_SIFIVE_TEST"]
COUNTER_UNIT = "instructions"

FLASH = Region("flash", 0x80000000, 2 * 1024 * 1024, kind="code")
RAM = Region("ram", 0x80400000, 1024 * 1024, kind="data")


def regions(model_placement):
    return [FLASH, RAM]


NO_RUNNER_MESSAGE = "qemu-system-riscv32 is not installed (Debian: qemu-system-misc)."


def run_command(elf, hexfile, env, workdir, model=None):
    qemu = shutil.which("qemu-system-riscv32")
    if not qemu:
        return None
    return [qemu, "-M", "virt", "-bios", "none", "-nographic", "-m", "64M",
            "-icount", "shift=0", "-kernel", os.path.abspath(elf)]


def parse_run(output, returncode):
    return RunResult(returncode)
