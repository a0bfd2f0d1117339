"""The bare-metal RISC-V cross toolchain (etcorev.toolchain.riscv): compilers, ISA and
ABI, build types, section GC, LTO, the C++ library.

    env.Tool("riscv_toolchain")
    env["ISA"] = "rv32imfc"           # construction variables, defaults set if unset:
    env.RiscvToolchain()              # find, check and configure (once per environment)

Construction variables: $TOOLCHAIN (a compiler prefix, with or without a directory;
empty: riscv32-corev-elf- on PATH, else the CORE-V GCC ./setup.sh --corev-gcc built, else
Debian's riscv64-unknown-elf- with picolibc), $ISA (rv32imc, rv32imfc), $BUILD_TYPE
(Release, RelWithDebInfo, Debug), $LTO (auto: on for Release; 0; 1), $PIC. The compiler
is looked for, and its facts asked (once per compiler, cached), by RiscvToolchain(), not
when the tool is loaded: every pseudo-builder of the firmware tools calls it first.
Afterwards $TOOLCHAIN_PREFIX is the prefix found and $TOOLCHAIN_DESCRIPTION says which.
"""

from etcorev.scons import options as option_table  # (a tool module's `options` is SCons's hook)
from etcorev.scons.tools import require_tools
from etcorev.toolchain import riscv


def RiscvToolchain(env):
    """Configure env for its $TOOLCHAIN, $ISA, $BUILD_TYPE, $LTO and $PIC (once)."""
    if not env.get("TOOLCHAIN_PREFIX"):
        riscv.configure(env)
    return env["TOOLCHAIN_PREFIX"]


def generate(env):
    require_tools(env, "cc", "c++", "gnulink", "ar", "gas")
    env.SetDefault(**option_table.defaults("TOOLCHAIN", "ISA", "BUILD_TYPE", "LTO", "PIC"))
    env.AddMethod(RiscvToolchain)


def exists(env):
    return True
