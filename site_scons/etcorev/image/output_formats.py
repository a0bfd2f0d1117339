"""Images written beside every firmware ELF on request (`outputs=ihex,bin`). The Verilog
hex (the testbench's) and the size report are always made.

Adding a format is one entry here: a writer `(elf_path, out_path)` (etcorev.image.elfout), the
file suffix and the option name; the elf_outputs tool makes its builder, the firmware tool
its target, SConstruct its value of `outputs=`.
"""

from typing import Callable, NamedTuple

from etcorev.image import elfout


class OutputFormat(NamedTuple):
    builder: str                        # the SCons builder's name
    suffix: str
    writer: Callable[[str, str], None]
    about: str                          # for `scons -h`


FORMATS = {
    "ihex": OutputFormat("IntelHex", ".ihex", elfout.write_intel_hex, "Intel HEX"),
    "bin": OutputFormat("RawBinary", ".bin", elfout.write_binary, "raw binary"),
}
