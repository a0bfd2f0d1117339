"""The bare-metal RISC-V toolchain, as the application note's riscv32-corev-elf.cmake
describes it: compiler prefix, ISA/ABI, language standards, build types, section GC,
LTO/PIC and our own startup code. SConstruct calls get_opts() and configure(env).

Two toolchains are supported:
- CORE-V GCC (`riscv32-corev-elf-`): newlib and libstdc++ come with it.
- Debian's `riscv64-unknown-elf-` with picolibc: it has no C++ library, so a
  no-exceptions libstdc++ is built once from Debian's gcc-12-source into a per-user
  cache (site_scons/etcorev/libstdcxx.py) and reused by every later build.
"""

import os
import shutil

from SCons.Script import BoolVariable, EnumVariable

from etcorev.errors import BuildSetupError

COREV_PREFIX = "riscv32-corev-elf-"
DEBIAN_PREFIX = "riscv64-unknown-elf-"

# ISA -> (march, mabi, multilib directory of Debian's GCC). GCC 12 defaults to ISA spec 20191213, where rv32imc lacks the
# CSR instructions that startup code and cycle counters need; -misa-spec=2.2 keeps
# them and still maps onto the rv32im/ilp32 multilib.
ISAS = {
    "rv32imc": ("rv32imc", "ilp32", "rv32im/ilp32"),
    "rv32imfc": ("rv32imfc", "ilp32f", "rv32imf/ilp32f"),
}

# Build type -> (compile flags, defines). Release and RelWithDebInfo assert nothing:
# without NDEBUG flatbuffers' asserts pull in __assert_fail and its printf. Release is
# for size: -msave-restore shares register save/restore code between functions (about
# 4 KiB less for add.pte), and LTO is on by default (lto=auto).
BUILD_TYPES = {
    "Release": (["-Os", "-msave-restore"], ["NDEBUG"]),
    "RelWithDebInfo": (["-O2", "-g"], ["NDEBUG"]),
    "Debug": (["-Og", "-g3"], []),
}


def get_opts():
    return [
        ("toolchain", "compiler prefix (default: riscv32-corev-elf- if on PATH, "
         "else riscv64-unknown-elf- with picolibc)", ""),
        EnumVariable("isa", "RISC-V ISA and ABI", "rv32imc", allowed_values=tuple(ISAS)),
        EnumVariable("build_type", "optimisation and debug information", "Release",
                     allowed_values=tuple(BUILD_TYPES)),
        BoolVariable("debug", "shorthand for build_type=Debug", False),
        EnumVariable("lto", "link-time optimisation (auto: on for Release)", "auto",
                     allowed_values=("auto", "0", "1")),
        BoolVariable("pic", "position-independent code", False),
    ]


def build_type(env):
    return "Debug" if env["debug"] else env["build_type"]


def lto_enabled(env):
    if env["lto"] == "auto":
        return build_type(env) == "Release"
    return env["lto"] == "1"


def variant_flags(env):
    """Name parts for what differs from the build type's defaults."""
    parts = []
    if lto_enabled(env) != (build_type(env) == "Release"):
        parts.append("lto" if lto_enabled(env) else "nolto")
    if env["pic"]:
        parts.append("pic")
    return parts


def find_prefix(requested):
    """The compiler prefix to use: the one asked for, else CORE-V GCC, else Debian's."""
    candidates = [requested] if requested else [COREV_PREFIX, DEBIAN_PREFIX]
    for prefix in candidates:
        if shutil.which(prefix + "gcc"):
            return prefix
    raise BuildSetupError(
        "No RISC-V cross compiler found: searched PATH for %s. Install CORE-V GCC "
        "(riscv32-corev-elf-) and put its bin directory on PATH, or on Debian run "
        "`apt-get install gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf` "
        "(./setup.sh does this), or name another prefix with toolchain=PREFIX."
        % " and ".join("'%sgcc'" % p for p in candidates))


def uses_picolibc(prefix):
    return prefix.startswith("riscv64-unknown-elf")


def configure(env):
    """Set compilers and flags on env for the options in env (isa, build_type, ...)."""
    prefix = find_prefix(env["toolchain"])
    march, mabi, multilib = ISAS[env["isa"]]
    kind = build_type(env)
    opt_flags, opt_defines = BUILD_TYPES[kind]

    env.Replace(
        TOOLCHAIN_PREFIX=prefix,
        CC=prefix + "gcc",
        CXX=prefix + "g++",
        AS=prefix + "gcc",
        LINK=prefix + "g++",
        AR=prefix + ("gcc-ar" if lto_enabled(env) else "ar"),
        RANLIB=prefix + ("gcc-ranlib" if lto_enabled(env) else "ranlib"),
        OBJCOPY=prefix + "objcopy",
        SIZE=prefix + "size",
        # Deterministic archives: no timestamps, uids or modes (reproducible builds).
        ARFLAGS=["rcsD"],
        RANLIBFLAGS=["-D"],
        BUILD_TYPE=kind,
    )
    target_flags = ["-misa-spec=2.2", "-march=" + march, "-mabi=" + mabi]
    if uses_picolibc(prefix):
        target_flags.append("--specs=picolibc.specs")
    else:
        target_flags.append("--specs=nano.specs")

    common = target_flags + opt_flags + [
        "-ffunction-sections", "-fdata-sections",
        "-Wall",
    ]
    if lto_enabled(env):
        common.append("-flto")
    if env["pic"]:
        common.append("-fPIC")
    env.Append(
        CCFLAGS=common,
        ASFLAGS=target_flags + ["-x", "assembler-with-cpp"],
        CFLAGS=["-std=c11"],
        CXXFLAGS=["-std=c++17", "-fno-exceptions", "-fno-rtti",
                  "-fno-asynchronous-unwind-tables", "-fno-unwind-tables",
                  "-fno-threadsafe-statics"],
        CPPDEFINES=opt_defines,
        LINKFLAGS=target_flags + opt_flags + ["-nostartfiles", "-static"]
        # auto: LTRANS jobs in parallel, without lto-wrapper's warning on each link.
        + (["-flto=auto"] if lto_enabled(env) else []),
        LIBS=["stdc++", "m"],
    )
    # Section GC always except Debug (picolibc.specs asks for it: undo it there).
    env.Append(LINKFLAGS=["-Wl,--no-gc-sections" if kind == "Debug" else "-Wl,--gc-sections",
                          # One RAM region holds code and data on these boards.
                          "-Wl,--no-warn-rwx-segments"])

    if uses_picolibc(prefix):
        from etcorev import libstdcxx
        root = libstdcxx.ensure_libstdcxx(prefix=prefix, multilibs=(multilib,),
                                          log=lambda msg: print(msg, flush=True))
        flags = libstdcxx.flags(root, multilib)
        # -I, not -isystem: picolibc.specs puts its own -isystem first and <cstdlib>'s
        # #include_next <stdlib.h> must find picolibc's header after these.
        env.Append(CXXFLAGS=flags["CPPFLAGS"], LIBPATH=flags["LIBPATH"])
    return prefix

