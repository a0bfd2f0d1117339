"""Traps as the firmware reports them (pal/boards/common/board.c, crt0.S), read back
by `scons run` to say where the program stopped:

    trap: mcause 0x00000002 (illegal instruction) mepc 0x80000128 mtval 0xc0001073 ra ... sp ...
    trap: a trap in the trap handler
"""

import re
from typing import Optional

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

_TRAP = re.compile(r"^trap: mcause 0x([0-9a-f]{8}) \(([^)]*)\) mepc 0x([0-9a-f]{8}) "
                   r"mtval 0x([0-9a-f]{8})(?: ra 0x([0-9a-f]{8}))?", re.M)
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


def describe(text: str, elf_path: Optional[str] = None) -> Optional[str]:
    """Why the run failed, when the program reported a trap; else None."""
    if _NESTED in text:
        return "the program trapped, and trapped again in the trap handler"
    match = _TRAP.search(text)
    if not match:
        return None
    cause, mepc = match.group(2), int(match.group(3), 16)
    ra = int(match.group(5), 16) if match.group(5) else None
    if mepc == 0 and ra is not None:
        mcause = int(match.group(1), 16)
        return "the program jumped to address 0 (a null function pointer?) from %s%s" % (
            _where(elf_path, ra), ": %s" % cause if mcause else "")
    return "the program trapped: %s at %s" % (cause, _where(elf_path, mepc))
