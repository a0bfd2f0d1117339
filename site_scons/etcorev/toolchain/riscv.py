"""The bare-metal RISC-V toolchain, as the application note's riscv32-corev-elf.cmake
describes it: compiler prefix, ISA/ABI, language standards, build types, section GC,
LTO/PIC and our own startup code. The riscv_toolchain tool calls configure(env), which
reads the construction variables TOOLCHAIN (a prefix, or empty for the default), ISA,
BUILD_TYPE, LTO (auto, 0, 1) and PIC.

Two toolchains are supported:
- CORE-V GCC (`riscv32-corev-elf-`, newlib and libstdc++ come with it): the one on PATH
  (Embecosm's binaries), else the one `./setup.sh --corev-gcc` builds into the per-user
  cache from Debian's sources (site_scons/etcorev/toolchain/corev_gcc.py).
- Debian's `riscv64-unknown-elf-` with picolibc. It has no C++ library: set-up builds a
  no-exceptions libstdc++ once from Debian's gcc-12-source (site_scons/etcorev/toolchain/libstdcxx.py).

By default the first of them that is there. The C library each one brings is handled in
one place: pal/boards/common/libc_<picolibc|newlib>.c (system calls, console, exit).
"""

import os
import shutil

from etcorev.toolchain import compiler_facts, corev_gcc, libstdcxx
from etcorev.errors import BuildSetupError
from etcorev.scons import variables

COREV_PREFIX = corev_gcc.PREFIX                   # riscv32-corev-elf-
DEBIAN_PREFIX = "riscv64-unknown-elf-"
SHORT_NAMES = {COREV_PREFIX: "corev", DEBIAN_PREFIX: "picolibc"}

# ISA -> (march, mabi). GCC 12 defaults to ISA spec 20191213, where rv32imc lacks the CSR
# instructions that startup code and cycle counters need; -misa-spec=2.2 keeps them (and
# Debian's multilibs rv32im/ilp32, rv32imf/ilp32f still match).
ISAS = {
    "rv32imc": ("rv32imc", "ilp32"),
    "rv32imfc": ("rv32imfc", "ilp32f"),
    # The CV32E40P's CORE-V extensions (COREV_PULP: SIMD dot products, hardware loops,
    # post-increment loads): the same -march (GCC 12 knows none of the mnemonics; the
    # kernels encode them with .insn) and COREV_XCV defined, which selects the kernels
    # that use them. Only a core built with them runs such firmware.
    "rv32imc_xcv": ("rv32imc", "ilp32"),
    "rv32imfc_xcv": ("rv32imfc", "ilp32f"),
}
# What an ISA defines for the sources: the extensions their code may use.
ISA_DEFINES = {"rv32imc_xcv": [("COREV_XCV", 1)], "rv32imfc_xcv": [("COREV_XCV", 1)]}


def has_corev_extensions(isa):
    return isa.endswith("_xcv")

# Build type -> (compile flags, defines). Release and RelWithDebInfo assert nothing:
# without NDEBUG flatbuffers' asserts pull in __assert_fail and its printf. Release is
# for size: -msave-restore shares register save/restore code between functions (about
# 4 KiB less for add.pte), and LTO is on by default (lto=auto).
BUILD_TYPES = {
    "Release": (["-Os", "-msave-restore"], ["NDEBUG"]),
    "RelWithDebInfo": (["-O2", "-g"], ["NDEBUG"]),
    "Debug": (["-Og", "-g3"], []),
}


def lto_enabled(env):
    if env["LTO"] in ("auto", None, ""):
        return env["BUILD_TYPE"] == "Release"
    return str(env["LTO"]) in ("1", "True", "true")


def lto_part(env):
    """The variant's name part when LTO differs from the build type's default."""
    if lto_enabled(env) != (env["BUILD_TYPE"] == "Release"):
        return "lto" if lto_enabled(env) else "nolto"
    return None


def short_name(env):
    """The toolchain's part of the variant name: objects of two toolchains never mix."""
    base = os.path.basename(env["TOOLCHAIN_PREFIX"])
    return SHORT_NAMES.get(base, base.rstrip("-").replace("-", "_"))


def _isa_flags(isa):
    march, mabi = ISAS[isa]
    return ["-misa-spec=2.2", "-march=" + march, "-mabi=" + mabi]


def find_prefix(requested):
    """The compiler prefix to use, with its directory when it is not on PATH."""
    if requested:
        candidates = [requested]
    else:
        candidates = [COREV_PREFIX, DEBIAN_PREFIX]
    for prefix in candidates:
        if shutil.which(prefix + "gcc"):
            return prefix
        if os.path.basename(prefix) == COREV_PREFIX and os.path.dirname(prefix) == "":
            cached = corev_gcc.installed_prefix()
            if cached:
                return cached
    raise BuildSetupError(
        "No RISC-V cross compiler found: searched PATH for %s%s. Install CORE-V GCC "
        "(riscv32-corev-elf-) and put its bin directory on PATH, or build it with "
        "`./setup.sh --corev-gcc`; or on Debian run `./setup.sh` (it installs "
        "gcc-riscv64-unknown-elf with picolibc); or name another prefix with $TOOLCHAIN=PREFIX."
        % (" and ".join("'%sgcc'" % p for p in candidates),
           " and the per-user cache" if COREV_PREFIX in candidates else ""))


def _check(prefix, isa):
    """The compiler's facts, or a one-line error: not a RISC-V compiler, no libraries
    for the ISA's ABI, no C++ library."""
    gcc = shutil.which(prefix + "gcc") or prefix + "gcc"
    facts = compiler_facts.facts(gcc, {name: _isa_flags(name) for name in ISAS})
    machine = facts.get("machine")
    if not machine or not machine.startswith("riscv"):
        raise BuildSetupError(
            "$TOOLCHAIN=%s: %sgcc is not a RISC-V compiler (%s). Name the prefix of a RISC-V "
            "bare-metal toolchain, e.g. riscv32-corev-elf- or riscv64-unknown-elf-."
            % (prefix, prefix, "it targets %s" % machine if machine else
               "it does not run: %s" % (facts.get("error") or "unknown error")))
    march, mabi = ISAS[isa]
    isa_facts = facts["isas"][isa]
    if not compiler_facts.multilib_matches(isa_facts["multilib"], mabi, facts["default_abi"]):
        raise BuildSetupError(
            "$TOOLCHAIN=%s has no libraries for $ISA=%s (-march=%s -mabi=%s): it would link "
            "%s libraries of another ABI. Use a toolchain built with that multilib (CORE-V "
            "GCC: rv32imc/ilp32 and rv32imfc/ilp32f), or another $ISA."
            % (prefix, isa, march, mabi, isa_facts["multilib"] or "no"))
    return facts


def configure(env):
    """Set compilers and flags on env for TOOLCHAIN, ISA, BUILD_TYPE, LTO and PIC."""
    variables.check(env, "TOOLCHAIN", "ISA", "BUILD_TYPE", "LTO", "PIC")
    prefix = find_prefix(env["TOOLCHAIN"])
    facts = _check(prefix, env["ISA"])
    kind = env["BUILD_TYPE"]
    opt_flags, opt_defines = BUILD_TYPES[kind]
    picolibc = facts["libc"] == "picolibc"

    env.Replace(
        TOOLCHAIN_PREFIX=prefix,
        TOOLCHAIN_LIBC=facts["libc"],
        TOOLCHAIN_DESCRIPTION="%sgcc %s, %s" % (os.path.basename(prefix), facts["version"],
                                                facts["libc"]),
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
        # printf with floating point for programs in general (newlib-nano leaves it out
        # unless asked), without it for programs that print numbers themselves (the
        # runner: picolibc's integer-only variant, newlib-nano's default).
        PRINTF_LINKFLAGS=[] if picolibc else ["-u", "_printf_float"],
        INTEGER_PRINTF_LINKFLAGS=["-DPICOLIBC_INTEGER_PRINTF_SCANF"] if picolibc else [],
        # Our sources; the ExecuTorch tree's compile without (site_tools/executorch.py).
        WARNING_FLAGS=["-Wall"],
    )
    target_flags = _isa_flags(env["ISA"]) + [
        "--specs=picolibc.specs" if picolibc else "--specs=nano.specs"]
    common = target_flags + opt_flags + ["-ffunction-sections", "-fdata-sections",
                                         "$WARNING_FLAGS"]
    if lto_enabled(env):
        common.append("-flto")
    if env["PIC"]:
        common.append("-fPIC")
    env.Append(
        CCFLAGS=common,
        ASFLAGS=target_flags + ["-x", "assembler-with-cpp"],
        CFLAGS=["-std=c11"],
        CXXFLAGS=["-std=c++17", "-fno-exceptions", "-fno-rtti",
                  "-fno-asynchronous-unwind-tables", "-fno-unwind-tables",
                  "-fno-threadsafe-statics"],
        CPPDEFINES=opt_defines + ISA_DEFINES.get(env["ISA"], []),
        LINKFLAGS=target_flags + opt_flags + ["-nostartfiles", "-static", "$PRINTF_LINKFLAGS"]
        # auto: LTRANS jobs in parallel, without lto-wrapper's warning on each link.
        + (["-flto=auto"] if lto_enabled(env) else []),
        LIBS=["stdc++", "m"],
    )
    # Section GC always except Debug (picolibc.specs asks for it: undo it there).
    env.Append(LINKFLAGS=["-Wl,--no-gc-sections" if kind == "Debug" else "-Wl,--gc-sections",
                          # One RAM region holds code and data on these boards.
                          "-Wl,--no-warn-rwx-segments"])
    if picolibc:
        _use_built_libstdcxx(env, prefix, facts)
    elif not facts["isas"][env["ISA"]]["libstdcxx"]:
        raise BuildSetupError(
            "$TOOLCHAIN=%s has no C++ library (libstdc++.a) for $ISA=%s: ExecuTorch is C++ and "
            "needs one. Use a toolchain built with C++ (CORE-V GCC is; `./setup.sh "
            "--corev-gcc` builds one)." % (prefix, env["ISA"]))
    else:
        _cxx11_math(env, prefix, facts["isas"][env["ISA"]].get("cxx11_math", "yes"))
    return prefix


def _cxx11_math(env, prefix, answer):
    """A libstdc++ on newlib built the standard way lacks the C++11 <cmath> functions
    ExecuTorch uses: the compat header provides them (force-included for such a
    compiler only), or the toolchain is refused, saying what is missing."""
    if answer == "with the compat header":
        env.Append(CXXFLAGS=["-include", env.File(compiler_facts.CMATH_COMPAT_HEADER)])
    elif answer != "yes":
        raise BuildSetupError(
            "$TOOLCHAIN=%s: its C++ library's <cmath> lacks the C++11 functions ExecuTorch "
            "uses (std::lgamma(float), std::trunc, std::nextafter, ...: libstdc++ built on "
            "newlib for RV32 without _GLIBCXX_USE_C99_MATH_TR1), and the compatibility "
            "header pal/toolchain_compat/cmath_cxx11.h cannot supply them (%s). Use a "
            "toolchain whose libstdc++ has them: `./setup.sh --corev-gcc` builds one."
            % (prefix, answer[len("no: "):] if answer.startswith("no: ") else answer))


def _use_built_libstdcxx(env, prefix, facts):
    """Debian's picolibc toolchain: the libstdc++ set-up built (only looked up here)."""
    multilib = facts["isas"][env["ISA"]]["multilib"]
    try:
        root = libstdcxx.installed(prefix, multilib)
    except libstdcxx.LibstdcxxError as error:
        raise BuildSetupError(str(error))
    if root is None:
        raise BuildSetupError(
            "libstdc++ for %s (%s) is not built yet: run ./setup.sh, which builds it once "
            "from Debian's gcc-12-source into the per-user cache (about 100 s)."
            % (prefix, multilib))
    flags = libstdcxx.flags(root, multilib)
    # -I, not -isystem: picolibc.specs puts its own -isystem first and <cstdlib>'s
    # #include_next <stdlib.h> must find picolibc's header after these.
    env.Append(CXXFLAGS=flags["CPPFLAGS"], LIBPATH=flags["LIBPATH"])
