"""Board support: startup code, console/exit, the linker script and the map file.

    env.Tool("board")
    env["BOARD"] = "qemu"                        # a board name, or a board directory
    startup = env.BoardStartup(variant_dir)      # crt0 + board objects
    script = env.BoardLinkerScript(variant_dir + "/link.ld")

Construction variables (defaults set if unset): $BOARD (qemu), $MODEL_PLACEMENT
(embedded; external gives the board's model region), $STACK_SIZE (16 KiB). A board is a
directory (etcorev.boards): its board.py gives the memory regions and the defines of the
startup code; sources of its own (crt0.S, board.c, ...) stand in for the common ones of
the same name (pal/boards/common) and others are added; a sections.ld of its own stands
in for the common section layout.

The MEMORY block is generated from the board's regions, so the memory map has one
source. One region for code and data (the testbench): the region given to the linker is
larger than the board's, its real size goes into __image_length and the size report
checks it after linking, so an overflow gets the build's own message instead of a linker
error. A flash and a RAM region: code, read-only data and the load image of .data in the
flash, .data (copied there by crt0), .bss, the pools and the stack in the RAM.
"""

import os

from etcorev import boards, locations
from etcorev.scons import options as option_table  # (a tool module's `options` is SCons's hook)
from etcorev.scons import variables
from etcorev.scons.tools import require_tools
from etcorev.errors import BuildSetupError

COMMON_DIR = locations.source_dir("pal", "boards", "common")
LINKER_SLACK = 0x40000000   # room the linker may use beyond the region; checked afterwards
COMMON_SOURCES = ("crt0.S", "board.c")


def _linker_script_lines(env):
    board = boards.of(env)
    regions = boards.regions_of(env)
    code, data = boards.region(regions, "code"), boards.region(regions, "data")
    lines = ["/* Generated for board %s: memory from its board.py. */" % board.NAME,
             "MEMORY", "{"]
    if code is data:
        lines.append("  %s (rwx) : ORIGIN = 0x%08x, LENGTH = 0x%08x"
                     % (code.name, code.origin, LINKER_SLACK))
    else:
        lines += ["  %s (rx) : ORIGIN = 0x%08x, LENGTH = 0x%08x" % (code.name, code.origin,
                                                                   code.length),
                  "  %s (rw) : ORIGIN = 0x%08x, LENGTH = 0x%08x" % (data.name, data.origin,
                                                                   data.length)]
    lines += ["}",
              'REGION_ALIAS("REGION_CODE", %s);' % code.name,
              'REGION_ALIAS("REGION_DATA", %s);' % data.name,
              # The heap ends where the data region does.
              "__image_origin = 0x%08x;" % data.origin,
              "__image_length = 0x%08x;" % data.length,
              "__stack_size = 0x%x;" % variables.value(env, "STACK_SIZE")]
    for region in regions:
        if region.kind == "model":
            lines.append("__%s_origin = 0x%08x;" % (region.name, region.origin))
            lines.append("__%s_length = 0x%08x;" % (region.name, region.length))
    # Found on the library path: the board's directory (when it has its own) comes first
    # (BoardLinkerScript), then pal/boards/common. A name, not a path: the script is the
    # same in every checkout, and so is the link's signature.
    lines.append("INCLUDE sections.ld")
    return lines


def _sections_script(board):
    own = os.path.join(board.DIR, "sections.ld")
    return own if os.path.isfile(own) else os.path.join(COMMON_DIR, "sections.ld")


def BoardLinkerScript(env, target):
    """The generated link.ld (its link needs BoardLibPath() on $LIBPATH first)."""
    script = env.Textfile(target, _linker_script_lines(env), LINESEPARATOR="\n")
    env.Depends(script, _sections_script(boards.of(env)))
    return script


def BoardLibPath(env):
    """Directories a link with the board's script searches before pal/boards/common:
    the board's own, when it has its own sections.ld."""
    board = boards.of(env)
    return [board.DIR] if os.path.isfile(os.path.join(board.DIR, "sections.ld")) else []


def _startup_sources(env):
    """The common startup sources, each unless the board has its own of that name, the C
    library's system calls, and the board's other sources."""
    board = boards.of(env)
    own = sorted(name for name in os.listdir(board.DIR)
                 if name.endswith((".c", ".S", ".cpp")))
    sources = [os.path.join(board.DIR if name in own else COMMON_DIR, name)
               for name in COMMON_SOURCES]
    sources.append(os.path.join(COMMON_DIR, "libc_%s.c" % env["TOOLCHAIN_LIBC"]))
    return sources + [os.path.join(board.DIR, name) for name in own
                      if name not in COMMON_SOURCES]


def BoardStartup(env, build_dir):
    """Startup code, the board's console/exit/cycles, and what the toolchain's C library
    ($TOOLCHAIN_LIBC: picolibc or newlib) needs of the system."""
    env.RiscvToolchain()
    board = boards.of(env)
    if env["ISA"].endswith("_xcv") and not board.COREV_EXTENSIONS:
        raise BuildSetupError(
            "$ISA=%s uses the CV32E40P's CORE-V extensions, which $BOARD=%s cannot run (%s "
            "has none of them): use $BOARD=cv32e40p with a testbench built with them "
            "(COREV_PULP), or $ISA=%s." % (env["ISA"], board.NAME,
                                         board.SIMULATOR,
                                         env["ISA"][:-len("_xcv")]))
    # No LTO here: libc refers to stdout, getpid and kill only after LTO has decided
    # what is used, so LTO would drop their definitions.
    # The board's addresses are for these files only: everything else compiles the same
    # for every board (and objects are shared through a cache=).
    startup_env = env.Clone()
    startup_env.Append(CCFLAGS=["-fno-lto"], CPPDEFINES=boards.of(env).DEFINES)
    return [startup_env.Object(os.path.join(build_dir, os.path.splitext(
                os.path.basename(source))[0] + ".o"), source)
            for source in _startup_sources(env)]


def _emit_map_file(target, source, env):
    """The link writes a map file beside the ELF: declare it, so `scons -c` removes it."""
    elf = target[0]
    return target + [elf.target_from_source("", ".map")], source


def generate(env):
    require_tools(env, "riscv_toolchain", "textfile")
    env.SetDefault(STACK_SIZE=16 * 1024, TOOLCHAIN_LIBC="picolibc",
                   **option_table.defaults("BOARD", "MODEL_PLACEMENT"))
    env.Append(CPPPATH=[COMMON_DIR], LIBPATH=[COMMON_DIR])
    env.Append(LINKFLAGS=["-T", "$LINKER_SCRIPT", "-Wl,-Map,${TARGETS[1]}"])
    env.Append(PROGEMITTER=[_emit_map_file])
    # The linker writes the map as it goes and leaves it when it fails (an undefined
    # symbol, a full disk): a map of no image, removed (the linker removes the ELF).
    if "rm -f ${TARGETS[1]}" not in env["LINKCOM"]:
        env["LINKCOM"] = env["LINKCOM"] + " || { rm -f ${TARGETS[1]}; exit 1; }"
    env.AddMethod(BoardStartup)
    env.AddMethod(BoardLinkerScript)
    env.AddMethod(BoardLibPath)


def exists(env):
    return True
