"""QEMU's RISC-V `virt` machine, so that firmware runs on any development machine.

RAM at 0x80000000, where QEMU jumps with -bios none. The 16550 UART at 0x10000000 prints
a byte stored to it without set-up, and the sifive_test device at 0x100000 ends QEMU
with the program's exit status.
"""

import os
import shutil

from etcorev.boards import Region, RunResult

SIMULATOR = "QEMU"
# QEMU 7.2 has none of the CV32E40P's CORE-V extensions (isa=..._xcv).
COREV_EXTENSIONS = False

DEFINES = [
    ("BOARD_CONSOLE_ADDR", "0x10000000"),
    ("BOARD_EXIT_ADDR", "0x100000"),
    "BOARD_EXIT_SIFIVE_TEST",
]

# With -icount shift=0 mcycle counts instructions: what profile tables count.
COUNTER_UNIT = "instructions"

MiB = 1024 * 1024
RAM_ORIGIN = 0x80000000
RAM_MIB = 64
MODEL_ORIGIN = RAM_ORIGIN + 48 * MiB


def regions(model_placement):
    if model_placement == "external":
        return [Region("ram", RAM_ORIGIN, 48 * MiB),
                Region("model", MODEL_ORIGIN, 16 * MiB, kind="model")]
    return [Region("ram", RAM_ORIGIN, RAM_MIB * MiB)]


NO_RUNNER_MESSAGE = (
    "qemu-system-riscv32 is not installed: `apt-get install qemu-system-misc` "
    "(./setup.sh does this).")


def run_command(elf, hexfile, env, workdir, model=None):
    qemu = shutil.which("qemu-system-riscv32")
    if not qemu:
        return None
    argv = [qemu, "-M", "virt", "-bios", "none", "-nographic", "-m", "%dM" % RAM_MIB,
            "-icount", "shift=0", "-kernel", os.path.abspath(elf)]
    if model:
        # The external model's raw image goes to the model region by QEMU's loader.
        argv += ["-device", "loader,file=%s,addr=0x%x,force-raw=on" % (os.path.abspath(model[1]), MODEL_ORIGIN)]
    return argv


def debug_command(elf, hexfile, env, workdir, port, model=None):
    """`scons debug`: QEMU halted at the first instruction, its gdb server on 127.0.0.1."""
    argv = run_command(elf, hexfile, env, workdir, model)
    if argv is None:
        return None
    return argv + ["-S", "-gdb", "tcp:127.0.0.1:%d" % port]


def parse_run(output, returncode):
    # With -icount shift=0 one instruction is one cycle; the runner prints its own
    # mcycle figures, the board reports none of its own.
    return RunResult(returncode)
