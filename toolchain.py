#!/usr/bin/env python3
"""Which cross toolchain a build finds, and what the build knows of it.

    .venv/bin/python toolchain.py [PREFIX]

The toolchain itself is configured by the riscv_toolchain SCons tool
(site_scons/etcorev/toolchain/riscv.py); this prints the prefix it would use (PREFIX, or
riscv32-corev-elf- on PATH, else the CORE-V GCC ./setup.sh --corev-gcc built, else
Debian's riscv64-unknown-elf-), its version and C library, and per ISA its multilib, C++
library and C++11 <cmath>.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site_scons"))
sys.dont_write_bytecode = True

from etcorev.errors import BuildSetupError  # noqa: E402
from etcorev.toolchain import riscv  # noqa: E402


def main(argv):
    try:
        prefix = riscv.find_prefix(argv[0] if argv else "")
        facts = riscv._check(prefix, "rv32imc")
    except BuildSetupError as error:
        print("toolchain: %s" % error, file=sys.stderr)
        return 2
    print(json.dumps(dict(facts, prefix=prefix), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
