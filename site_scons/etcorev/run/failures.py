"""Why a program failed, from what it printed, for `scons run`: a trap (as
pal/boards/common/board.c and crt0.S report it) or an ExecuTorch error (as the runner
reports it):

    trap: mcause 0x00000002 mepc 0x80000128 mtval 0xc0001073 ra 0x... sp 0x...
    trap: a trap in the trap handler
    Error: load_method failed: 0x21: method pool too small: raise method_pool=

The firmware prints numbers only (names cost bytes in a 48 KiB image); this names them:
exception causes from the RISC-V privileged specification, error codes from the
ExecuTorch tree's own runtime/core/error.h, functions from the ELF's symbols.
"""

import os
import re
from typing import Optional

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

_TRAP = re.compile(r"^trap: mcause 0x([0-9a-f]{8}) mepc 0x([0-9a-f]{8}) "
                   r"mtval 0x([0-9a-f]{8})(?: ra 0x([0-9a-f]{8}))?", re.M)
# The RISC-V privileged specification's exception codes (mcause with bit 31 clear).
EXCEPTIONS = ("instruction address misaligned", "instruction access fault",
              "illegal instruction", "breakpoint", "load address misaligned",
              "load access fault", "store address misaligned", "store access fault",
              "ecall from U-mode", "ecall from S-mode", None, "ecall from M-mode",
              "instruction page fault", "load page fault", None, "store page fault")


def cause_name(mcause: int) -> str:
    if mcause & 0x80000000:
        return "interrupt %d" % (mcause & 0x7fffffff)
    if mcause < len(EXCEPTIONS) and EXCEPTIONS[mcause]:
        return EXCEPTIONS[mcause]
    return "exception %d" % mcause
_NESTED = "trap: a trap in the trap handler"


def function_at(elf_path: str, address: int) -> Optional[str]:
    """The name of the function symbol containing address, if any."""
    try:
        with open(elf_path, "rb") as f:
            for section in ELFFile(f).iter_sections():
                if not isinstance(section, SymbolTableSection):
                    continue
                for symbol in section.iter_symbols():
                    start, size = symbol["st_value"], symbol["st_size"]
                    if (symbol["st_info"]["type"] == "STT_FUNC"
                            and start <= address < start + max(size, 1)):
                        return symbol.name
    except (OSError, ValueError):
        return None
    return None


def _where(elf_path, address):
    name = function_at(elf_path, address) if elf_path else None
    return "0x%08x%s" % (address, " (%s)" % name if name else "")


_ERROR = re.compile(r"^Error: (.+?) failed: 0x([0-9a-f]{2})(?:: (.*))?$", re.M)
# The external model region's check (examples/corev/executor_runner/model_check.h).
_MODEL_CHECK = re.compile(r"^Model check failed: 0x([0-9a-f]{2})(?: operator (\d+))?$", re.M)
MODEL_CHECKS = {
    1: "the model region holds no model: program the model hex (executor_runner.model.hex) "
       "into it",
    2: "the model region's header gives sizes beyond the region: it holds no model of this "
       "build's format, or a damaged one",
    3: "the model region's checksum does not match: it holds a damaged model, or not the "
       "one its header was written for; program the model hex again",
    4: "the model in the model region uses an operator this firmware does not have",
}


def model_check(text: str, operators=()) -> Optional[str]:
    """Why the runner refused the model in the model region, if it did."""
    match = _MODEL_CHECK.search(text)
    if not match:
        return None
    code = int(match.group(1), 16)
    why = MODEL_CHECKS.get(code, "model check 0x%02x" % code)
    if code == 4 and match.group(2) is not None:
        index = int(match.group(2))
        name = operators[index] if index < len(operators) else None
        why += " (operator %d of the model's list%s): it is another model than the firmware " \
               "was built for; build the firmware for it" % (index, ", " + name if name else "")
    return why


# ExecuTorch's own log lines ("E 12 op_mul.cpp:31] ..."), printed by logging builds.
_LOGGED = re.compile(r"^[DIEF] \d+ \S+:\d+\] ", re.M)
# pal/corev_pal.cpp's et_pal_abort (ET_CHECK, a dtype the build did not select, ...).
_ABORT = "ExecuTorch abort\n"
LOGGING_HINT = ("a build with logging=Info (a variant beside this one) prints which kernel "
                "call failed and why")


def error_names(et_root) -> dict:
    """ExecuTorch's error codes by value, from the tree's enum class Error."""
    try:
        with open(os.path.join(et_root, "runtime", "core", "error.h")) as f:
            text = f.read()
    except (OSError, TypeError):
        return {}
    body = text[text.find("enum class Error"):]
    body = body[:body.find("};")]
    return {int(value, 16): name for name, value in re.findall(r"\b(\w+) = 0x([0-9a-fA-F]+)", body)}


def describe(text: str, elf_path: Optional[str] = None, et_root=None,
             operators=()) -> Optional[str]:
    """Why the run failed, when the program reported a trap or an error; else None.
    operators: those of the model in the model region, to name a missing one."""
    checked = model_check(text, operators)
    if checked:
        return checked
    error = _ERROR.search(text)
    if error:
        what, code, hint = error.group(1), int(error.group(2), 16), error.group(3)
        name = error_names(et_root).get(code, "error")
        if not hint and not _LOGGED.search(text):
            hint = LOGGING_HINT
        return "%s failed with %s (0x%02x)%s" % (what, name, code, ": " + hint if hint else "")
    if _ABORT in text:
        return "ExecuTorch aborted%s" % ("" if _LOGGED.search(text) else ": " + LOGGING_HINT)
    if _NESTED in text:
        return "the program trapped, and trapped again in the trap handler"
    match = _TRAP.search(text)
    if not match:
        return None
    mcause, mepc = int(match.group(1), 16), int(match.group(2), 16)
    cause = cause_name(mcause)
    ra = int(match.group(4), 16) if match.group(4) else None
    if mepc == 0 and ra is not None:
        return "the program jumped to address 0 (a null function pointer?) from %s%s" % (
            _where(elf_path, ra), ": %s" % cause if mcause else "")
    return "the program trapped: %s at %s" % (cause, _where(elf_path, mepc))
