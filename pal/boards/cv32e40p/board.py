"""The CV32E40P core in core-v-verif's Verilator testbench (the application note's target).

4 MiB of RAM at 0 holds everything; the vector table is at 0 and the core boots at
0x80. A byte stored at 0x10000000 is printed; the exit value goes to 0x20000004, and
the testbench prints "EXIT SUCCESS" or "EXIT FAILURE" with the simulated time.
"""

import os
import re

from etcorev.boards import Region, RunResult

SIMULATOR = "the Verilator testbench"

DEFINES = [
    ("BOARD_CONSOLE_ADDR", "0x10000000"),
    ("BOARD_EXIT_ADDR", "0x20000004"),
    "BOARD_VECTORS_FIRST",
]

# The core's mcycle: what profile tables count.
COUNTER_UNIT = "cycles"

MiB = 1024 * 1024
# An external model sits in the top MiB, below the 16 KiB the debug unit maps onto.
MODEL_ORIGIN = 3 * MiB
MODEL_LENGTH = MiB - 16 * 1024


def regions(model_placement):
    if model_placement == "external":
        return [Region("ram", 0, MODEL_ORIGIN),
                Region("model", MODEL_ORIGIN, MODEL_LENGTH, kind="model")]
    return [Region("ram", 0, 4 * MiB)]


# The option that names the simulator and its construction variable, for errors about it.
RUNNER_OPTION = ("verilator_model", "VERILATOR_MODEL")

NO_RUNNER_MESSAGE = (
    "No Verilator model to run $BOARD=cv32e40p firmware on: set $CORE_V_VERIF_DIR and $CV32E40P_DIR "
    "to your checkouts of core-v-verif and cv32e40p (the build then builds the testbench "
    "the ISA needs), or $VERILATOR_MODEL to a Vtb_top_verilator (on the command line or in "
    "the user settings), or use $BOARD=qemu.")


def run_command(elf, hexfile, env, workdir, model=None):
    # verilator_model=, or the testbench SConstruct builds from core_v_verif= and
    # cv32e40p= in the variant the ISA needs (site_scons/site_tools/testbench.py).
    simulator = env.get("VERILATOR_MODEL", "")
    if not simulator:
        return None
    # The testbench reads +firmware= into a 128-character buffer and writes a 3 MiB
    # memory_dump.bin into its working directory: run it in workdir (a scratch
    # directory) on a copy with a short name. $readmemh takes several @address blocks,
    # so an external model's hex is appended to that copy.
    with open(os.path.join(workdir, "firmware.hex"), "w", newline="") as out:
        for part in [hexfile] + ([model[0]] if model else []):
            with open(part, newline="") as f:
                out.write(f.read())
    argv = [os.path.abspath(simulator), "+firmware=firmware.hex"]
    if env.get("RUN_MAX_CYCLES"):
        argv.append("+maxcycles=%d" % env["RUN_MAX_CYCLES"])
    return argv


# No debug_command: the testbench drives the core's debug request low and has no
# JTAG/DMI transport or gdb server.
NO_DEBUG_MESSAGE = (
    "$BOARD=cv32e40p: the Verilator testbench has no debug port (no JTAG or gdb server); "
    "use scons debug $BOARD=qemu.")


# "TOP.tb_top_verilator @ 1234560: EXIT SUCCESS" or, for non-zero values,
# "TOP.tb_top_verilator @ 3: EXIT FAILURE: 1234560" (value and time swapped).
_SUCCESS = re.compile(r"@ (\d+): EXIT SUCCESS")
_FAILURE = re.compile(r"@ (\d+): EXIT FAILURE:\s*(\d+)")
PS_PER_CYCLE = 10


def parse_run(output, returncode):
    match = _SUCCESS.search(output)
    if match:
        return RunResult(0, int(match.group(1)) // PS_PER_CYCLE)
    match = _FAILURE.search(output)
    if match:
        return RunResult(int(match.group(1)) or 1, int(match.group(2)) // PS_PER_CYCLE)
    return RunResult(returncode or 1, note="the testbench ended without the program's exit "
                     "(stopped at $RUN_MAX_CYCLES, or the firmware did not load)")
